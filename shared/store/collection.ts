import { GetCommand, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName, withinDeadline } from './client';
import type { Key } from './keys';

export type Item = Record<string, unknown>;

/**
 * The store's conventions, the same in every module: a lookup answers undefined for an item that
 * is not there; a write answers what it wrote, or a refusal (a string naming the table's rule that
 * refused it, e.g. 'name-taken'), never an exception; only failures (store unreachable, bugs) throw.
 */

/** Which members of a collection a list wants, in the collection's order: `limit` of them after `offset`. */
export interface Range {
  offset: number;
  limit: number;
}

/** A range of a collection's members and how many members it has in all. */
export interface Listed<T> {
  items: T[];
  totalCount: number;
}

/** An item without its table keys and entity tag: the record it stores. */
export function recordOf<T>(item: Item): T {
  const { PK: _pk, SK: _sk, entity: _entity, ...record } = item;
  return record as T;
}

export interface KeyPrefix {
  PK: string;
  SKPrefix: string;
}

/** One strongly consistent GetItem. */
export async function getItem(key: Key): Promise<Item | undefined> {
  const { Item: found } = await documentClient.send(
    new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }),
    withinDeadline(),
  );
  return found;
}

/**
 * Strongly consistent Query, following DynamoDB's 1 MB pages until `limit` items (or all of them)
 * are read: DynamoDB never reads more than `Limit` items per call.
 */
async function query(
  input: Pick<QueryCommandInput, 'KeyConditionExpression' | 'ExpressionAttributeValues'>,
  limit: number,
): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await documentClient.send(
      new QueryCommand({
        TableName: tableName(),
        ...input,
        ConsistentRead: true,
        Limit: Number.isFinite(limit) ? limit - items.length : undefined,
        ExclusiveStartKey: startKey,
      }),
      withinDeadline(),
    );
    items.push(...(result.Items ?? []));
    startKey = result.LastEvaluatedKey;
  } while (startKey && items.length < limit);
  return items;
}

/** The items under a key prefix, in sort key order. */
export const queryPrefix = (prefix: KeyPrefix, limit = Infinity) =>
  query(
    {
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
      ExpressionAttributeValues: { ':pk': prefix.PK, ':prefix': prefix.SKPrefix },
    },
    limit,
  );

/** The items of one partition whose sort keys lie between `from` and `to` (both included), in order. */
export const querySortKeyRange = (PK: string, from: string, to: string, limit: number) =>
  query(
    {
      KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': PK, ':from': from, ':to': to },
    },
    limit,
  );

/** Past every sort key that starts with `prefix` (keys are ASCII; DynamoDB compares UTF-8 bytes). */
export const endOfPrefix = (prefix: string) => `${prefix}\uffff`;
