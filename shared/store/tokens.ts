import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { documentClient, tableName } from './client';
import { getItem, queryPrefix, recordOf } from './collection';
import { Entity, keys } from './keys';
import type { Role } from '../auth/principal';
import { hashToken, newTokenSecret } from '../auth/token-secret';
import { now } from '../ids';

/** A token as stored: never the token itself, only its hash. */
export interface TokenRecord {
  tokenId: string;
  subject: string;
  grants: Record<string, Role>;
  tokenHash: string;
  createdAt: string;
  expiresAt?: string;
  revokedAt?: string;
}

export interface NewToken {
  subject: string;
  grants: Record<string, Role>;
  expiresAt?: string;
}

/** Creates a token; the secret is returned once, here, and exists nowhere else afterwards. */
export async function createToken(input: NewToken): Promise<{ record: TokenRecord; token: string }> {
  const { tokenId, token } = newTokenSecret();
  const record: TokenRecord = { tokenId, tokenHash: hashToken(token), createdAt: now(), ...input };
  await documentClient.send(
    new PutCommand({
      TableName: tableName(),
      // Grants as a Map: the SDK marshals an object by its members, and an organization named
      // `constructor` or `valueOf` would be taken for one of them.
      Item: { ...keys.token(tokenId), entity: Entity.Token, ...record, grants: new Map(Object.entries(record.grants)) },
      ConditionExpression: 'attribute_not_exists(PK)',
    }),
  );
  return { record, token };
}

export async function findToken(tokenId: string): Promise<TokenRecord | undefined> {
  const found = await getItem(keys.token(tokenId));
  return found ? toRecord(found) : undefined;
}

export async function listTokens(): Promise<TokenRecord[]> {
  return (await queryPrefix(keys.tokensPrefix)).map(toRecord);
}

/** Revokes a token and answers it as revoked; refused when no such token exists. Revoking twice keeps the first time. */
export async function revokeToken(tokenId: string): Promise<TokenRecord | 'not-found'> {
  try {
    const { Attributes: revoked } = await documentClient.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.token(tokenId),
        UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :now)',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':now': now() },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return toRecord(revoked!);
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return 'not-found';
    throw error;
  }
}

const toRecord = (item: Record<string, unknown>) => recordOf<TokenRecord>(item);
