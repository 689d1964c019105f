import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { tableName } from './client';
import { Entity, keys } from './keys';
import { TTL_ATTRIBUTE } from './table';

/**
 * A create's receipt: one item written in the create's own transaction, so it exists exactly when
 * the create committed. A retry naming the same receipt is refused by the receipt's condition, and
 * the refusal carries the receipt (ReturnValuesOnConditionCheckFailure), so the retry is answered
 * with the first result at no extra round trip. Because the receipt commits with the create, a
 * retry is safe even when the first answer was lost after the write reached DynamoDB.
 */
export interface Receipt {
  /** Names the operation: a hash of the token, the function and the Idempotency-Key or the request itself. */
  id: string;
  /** A hash of what was asked (path and body): a retry under the same id must ask the same. */
  fingerprint: string;
  /** Epoch seconds after which the receipt no longer counts; DynamoDB's TTL deletes it some time later. */
  expiresAt: number;
  /**
   * Named by the client's Idempotency-Key (kept 24 h whatever happens to the resource), or derived
   * from the request itself (a short replay window, which a store may tie to the resource's life).
   */
  keyed: boolean;
}

/** What a refused retry finds: the first request's fingerprint and the record it created. */
export interface Replay<T> {
  replayOf: { fingerprint: string; record: T };
}

/**
 * The transaction item that writes `receipt` for `record`, unless an unexpired one exists (or it
 * names `replacing`, the id of a record the store found gone: a receipt that ends with its record).
 */
export function receiptPut(receipt: Receipt, record: object, replacing?: string) {
  return {
    Put: {
      TableName: tableName(),
      Item: {
        ...keys.receipt(receipt.id),
        entity: Entity.Receipt,
        fingerprint: receipt.fingerprint,
        record,
        [TTL_ATTRIBUTE]: receipt.expiresAt,
      },
      // TTL deletion lags expiry (by up to days): an expired receipt counts as absent.
      ConditionExpression: `attribute_not_exists(PK) OR #expiresAt < :now${replacing === undefined ? '' : ' OR #record.#id = :replacing'}`,
      ExpressionAttributeNames: { '#expiresAt': TTL_ATTRIBUTE, ...(replacing === undefined ? {} : { '#record': 'record', '#id': 'id' }) },
      ExpressionAttributeValues: { ':now': Math.floor(Date.now() / 1000), ...(replacing === undefined ? {} : { ':replacing': replacing }) },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
    },
  };
}

/** The replay a cancelled transaction's receipt item points to (its cancellation reason's item, low-level). */
export function replayFrom<T>(existing: Record<string, AttributeValue> | undefined): Replay<T> {
  if (!existing) throw new Error('receipt refused without its item');
  const { fingerprint, record } = unmarshall(existing);
  return { replayOf: { fingerprint: fingerprint as string, record: record as T } };
}

export const isReplay = <T>(outcome: unknown): outcome is Replay<T> =>
  typeof outcome === 'object' && outcome !== null && 'replayOf' in outcome;
