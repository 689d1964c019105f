import { DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, STORE_CALL_MAX_MS, tableName } from './client';
import { EXPIRY_INDEX, EXPIRY_KEYS, nowSeconds, SWEEP_SHARDS, sweepShard } from './expiry';

/**
 * Removes the items whose expiry has passed (create receipts, tombstones: expiry.ts). For each
 * shard of the sparse Expiry index, a Query of the entries whose `sweepAt` is before now (an
 * eventually consistent read of the index: what it misses, the next run finds), then a DeleteItem
 * of each item found, conditioned on its expiry still being before now: an item written again
 * since, with a later expiry or none, is kept. The cost of a run is bounded: it starts no Query or
 * DeleteItem once its time is nearly up or once it has attempted `maxDeletes` deletes, and what it
 * leaves is found by the next run. The shards are visited in turns, a page each, so that a run cut
 * short by its bound leaves every shard swept as far as the others.
 */
export interface SweepLimits {
  /** Deletes attempted at most (one per item found). */
  maxDeletes: number;
  /** The time left to this invocation, in ms (Lambda's getRemainingTimeInMillis). */
  remainingMs(): number;
  /** No new call starts once less than this is left: one call at its slowest, and the time to report. */
  marginMs?: number;
  /** Index entries per Query (DynamoDB reads at most 1 MB a page anyway). */
  pageSize?: number;
  /** DeleteItems in flight at once. */
  concurrency?: number;
}

/** Per shard, and in total. */
export type SweepCounts = {
  /** Index entries whose expiry was before now. */
  found: number;
  deleted: number;
  /** Written again since with a later expiry (or none): its condition failed, the item stays. */
  kept: number;
  /** Already deleted by someone else (the index had not caught up): nothing to do. */
  gone: number;
  /** Refused as another Region's write of the same item was in flight (MRSC): left for the next run. */
  conflicted: number;
};

export type SweepReport = {
  /** The epoch second the run compared expiries with. */
  now: number;
  total: SweepCounts;
  /** Every shard, by its key (`SWEEP#0`…). */
  shards: Record<string, SweepCounts>;
  queries: number;
  /** Why the run ended before it had found everything, if it did: its time, or its bound of deletes. */
  stoppedBy?: 'time' | 'max-deletes';
};

/** A Query, or a delete, that failed for another reason than the ones above: the run stops starting work and reports what it did. */
export class SweepFailed extends Error {
  readonly report: SweepReport;
  constructor(cause: unknown, report: SweepReport) {
    super(`sweep stopped: ${(cause as Error)?.name ?? 'Error'}: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
    this.name = 'SweepFailed';
    this.report = report;
  }
}

/** The longest one call may take (the store client's timeouts), and 1 s to log and flush metrics. */
export const SWEEP_MARGIN_MS = STORE_CALL_MAX_MS + 1_000;
const PAGE_SIZE = 100;
const CONCURRENCY = 8;

const zero = (): SweepCounts => ({ found: 0, deleted: 0, kept: 0, gone: 0, conflicted: 0 });
type Key = Record<string, unknown>;

export async function sweepExpired(limits: SweepLimits, now = nowSeconds()): Promise<SweepReport> {
  const margin = limits.marginMs ?? SWEEP_MARGIN_MS;
  const pageSize = limits.pageSize ?? PAGE_SIZE;
  const concurrency = limits.concurrency ?? CONCURRENCY;
  const report: SweepReport = { now, total: zero(), shards: {}, queries: 0 };
  const shards = Array.from({ length: SWEEP_SHARDS }, (_, n) => sweepShard(n));
  for (const shard of shards) report.shards[shard] = zero();
  /** Each shard still to read, with where its next page starts (undefined: at the beginning). */
  const pending = new Map<string, Key | undefined>(shards.map((shard) => [shard, undefined]));
  let attempted = 0;
  let failure: unknown;

  const mayStart = (): boolean => {
    if (failure !== undefined) return false;
    if (limits.remainingMs() < margin) {
      report.stoppedBy ??= 'time';
      return false;
    }
    if (attempted >= limits.maxDeletes) {
      report.stoppedBy ??= 'max-deletes';
      return false;
    }
    return true;
  };
  const count = (shard: string, outcome: keyof SweepCounts) => {
    report.shards[shard]![outcome] += 1;
    report.total[outcome] += 1;
  };

  try {
    while (pending.size > 0 && mayStart()) {
      for (const [shard, startKey] of pending) {
        if (!mayStart()) break;
        const page = await documentClient.send(
          new QueryCommand({
            TableName: tableName(),
            IndexName: EXPIRY_INDEX,
            KeyConditionExpression: '#shard = :shard AND #expiresAt < :now',
            ExpressionAttributeNames: { '#shard': EXPIRY_KEYS.shard, '#expiresAt': EXPIRY_KEYS.sweepAt },
            ExpressionAttributeValues: { ':shard': shard, ':now': now },
            Limit: Math.min(pageSize, limits.maxDeletes - attempted),
            ...(startKey ? { ExclusiveStartKey: startKey } : {}),
          }),
        );
        report.queries += 1;
        const items = page.Items ?? [];
        for (const _ of items) count(shard, 'found');
        if (page.LastEvaluatedKey) pending.set(shard, page.LastEvaluatedKey);
        else pending.delete(shard);

        // The page's deletes, `concurrency` at a time, each started only while the run may start work.
        let next = 0;
        const worker = async () => {
          while (next < items.length && mayStart()) {
            const item = items[next++]!;
            attempted += 1;
            try {
              count(shard, await deleteIfExpired(item.PK as string, item.SK as string, now));
            } catch (error) {
              failure ??= error;
            }
          }
        };
        await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
        if (failure !== undefined) throw failure;
      }
    }
  } catch (error) {
    delete report.stoppedBy;
    throw new SweepFailed(error, report);
  }
  if (pending.size === 0) delete report.stoppedBy;
  return report;
}

/** Deletes the item unless it was written again with a later expiry (kept) or is gone already. */
async function deleteIfExpired(
  PK: string,
  SK: string,
  now: number,
): Promise<'deleted' | 'kept' | 'gone' | 'conflicted'> {
  try {
    await documentClient.send(
      new DeleteCommand({
        TableName: tableName(),
        Key: { PK, SK },
        ConditionExpression: '#expiresAt < :now',
        ExpressionAttributeNames: { '#expiresAt': EXPIRY_KEYS.sweepAt },
        ExpressionAttributeValues: { ':now': now },
        // Tells a refused delete of an item written again (kept) from one of an item already gone, at no cost.
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return 'deleted';
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'ConditionalCheckFailedException') return (error as { Item?: unknown }).Item ? 'kept' : 'gone';
    if (name === 'ReplicatedWriteConflictException') return 'conflicted';
    throw error;
  }
}
