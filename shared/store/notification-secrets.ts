import { randomBytes } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from './client';
import { getItem } from './collection';
import { Entity, keys } from './keys';
import { now } from '../ids';

/**
 * Each organization's run-notification secret: the token HCP Terraform signs its notifications
 * with (HMAC-SHA512). The receiver needs the secret itself to compute the HMAC, so it is stored as
 * is, in its own partition (NOTIFY#org) that only the run-notifications function's role may read
 * (dynamodb:LeadingKeys), in a table encrypted at rest. During a rotation's grace period the
 * previous secret stays valid too, so deliveries signed before the operator updated HCP Terraform
 * still verify.
 */
export interface NotificationSecrets {
  organization: string;
  current: { secret: string; createdAt: string };
  previous?: { secret: string; validUntil: string };
}

/** How long `rotate` keeps the previous secret valid unless told otherwise. */
export const DEFAULT_GRACE_HOURS = 24;

/** 256 random bits, base64url: 43 characters HCP Terraform's token field takes as is. */
const newSecret = () => randomBytes(32).toString('base64url');

/** Why a secret was not written (see collection.ts for the convention): one exists already, none exists yet, or it changed while rotating. */
export type SecretRefusal = 'exists' | 'none' | 'changed';

export async function findNotificationSecrets(organization: string): Promise<NotificationSecrets | undefined> {
  const found = await getItem(keys.notificationSecrets(organization));
  if (!found) return undefined;
  return {
    organization: found.organization as string,
    current: found.current as NotificationSecrets['current'],
    ...(found.previous ? { previous: found.previous as NonNullable<NotificationSecrets['previous']> } : {}),
  };
}

/** The secrets a notification may be signed with at `at`: the current one, and the previous one in its grace period. */
export function validSecrets(secrets: NotificationSecrets | undefined, at = new Date()): string[] {
  if (!secrets) return [];
  const valid = [secrets.current.secret];
  if (secrets.previous && new Date(secrets.previous.validUntil) > at) valid.push(secrets.previous.secret);
  return valid;
}

/** The organization's first secret; 'exists' when it has one (rotate replaces it). */
export async function createNotificationSecret(organization: string): Promise<NotificationSecrets | SecretRefusal> {
  const secrets: NotificationSecrets = { organization, current: { secret: newSecret(), createdAt: now() } };
  return (await put(secrets, 'attribute_not_exists(PK)')) ? secrets : 'exists';
}

/**
 * A new current secret; the one it replaces stays valid for `graceHours` (0: invalid at once,
 * for a leaked secret). Conditional on the current secret being the one read, so two concurrent
 * rotations cannot both believe they won.
 */
export async function rotateNotificationSecret(
  organization: string,
  graceHours = DEFAULT_GRACE_HOURS,
): Promise<NotificationSecrets | SecretRefusal> {
  const existing = await findNotificationSecrets(organization);
  if (!existing) return 'none';
  const rotated: NotificationSecrets = {
    organization,
    current: { secret: newSecret(), createdAt: now() },
    previous: {
      secret: existing.current.secret,
      validUntil: new Date(Date.now() + graceHours * 3_600_000).toISOString(),
    },
  };
  const written = await put(
    rotated,
    '#current.#secret = :read',
    { ':read': existing.current.secret },
    { '#current': 'current', '#secret': 'secret' },
  );
  return written ? rotated : 'changed';
}

/** Writes the organization's secrets if `condition` holds; false when it does not. */
async function put(
  secrets: NotificationSecrets,
  condition: string,
  values?: Record<string, unknown>,
  names?: Record<string, string>,
): Promise<boolean> {
  try {
    await documentClient.send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.notificationSecrets(secrets.organization), entity: Entity.NotificationSecrets, ...secrets },
        ConditionExpression: condition,
        ...(values ? { ExpressionAttributeValues: values } : {}),
        ...(names ? { ExpressionAttributeNames: names } : {}),
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}
