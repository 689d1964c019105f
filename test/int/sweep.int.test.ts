import { afterEach, describe, expect, it } from '@jest/globals';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { documentClient, tableName } from '#shared/store/client';
import { expiring, nowSeconds, SWEEP_SHARDS, sweepShard } from '#shared/store/expiry';
import { SweepFailed, sweepExpired, type SweepCounts, type SweepLimits } from '#shared/store/sweep';
import { randomAlphanumeric } from '#shared/ids';
import { handler } from '#functions/sweeper';

/** The sweeper's logic (shared/store/sweep.ts) and its handler against DynamoDB Local, on this file's table. */
const NOW = nowSeconds();
const unbounded: SweepLimits = { maxDeletes: 1_000_000, remainingMs: () => 60_000 };

/** An item of kind `kind` (a prefix the sweeper may delete from) expiring `inSeconds` from now; undefined: no expiry. */
async function put(
  kind: 'RECEIPT#' | 'ORG#' | 'RTK#',
  inSeconds: number | undefined,
  SK = 'ITEM',
  PK = `${kind}${randomAlphanumeric(12)}`,
): Promise<{ PK: string; SK: string }> {
  await documentClient.send(
    new PutCommand({
      TableName: tableName(),
      Item: { PK, SK, entity: 'Test', ...(inSeconds === undefined ? {} : expiring(PK, NOW + inSeconds)) },
    }),
  );
  return { PK, SK };
}
/** `count` items, one after the other (DynamoDB Local on a busy machine is slow to answer dozens at once). */
async function putMany<T>(count: number, one: (i: number) => Promise<T>): Promise<T[]> {
  const made: T[] = [];
  for (let i = 0; i < count; i++) made.push(await one(i));
  return made;
}
const exists = async (key: { PK: string; SK: string }) =>
  (await documentClient.send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item !==
  undefined;
const shardOf = (PK: string) => expiring(PK, 0).sweepShard;
/** A partition key of the first shard, the one a run reads first. */
function inFirstShard(kind: string): string {
  for (;;) {
    const PK = `${kind}${randomAlphanumeric(12)}`;
    if (shardOf(PK) === sweepShard(0)) return PK;
  }
}

/** Runs `intercept` once before the sweeper's DeleteItem of `key` (another writer, at that moment). */
function beforeDeleteOf(key: { PK: string; SK: string }, intercept: () => Promise<void>): void {
  const name = `before-delete-${randomAlphanumeric(6)}`;
  let done = false;
  documentClient.middlewareStack.add(
    (next, context) => async (args) => {
      // The document client's DeleteCommand goes through this stack as DeleteItemCommand, its key marshalled.
      const input = args.input as { Key?: Record<string, { S?: string } | string> };
      const value = (name: string) => {
        const v = input.Key?.[name];
        return typeof v === 'string' ? v : v?.S;
      };
      if (
        !done &&
        /^Delete(Item)?Command$/.test(String(context.commandName)) &&
        value('PK') === key.PK &&
        value('SK') === key.SK
      ) {
        done = true;
        await intercept();
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  interceptors.push(name);
}
const interceptors: string[] = [];

afterEach(async () => {
  for (const name of interceptors.splice(0)) documentClient.middlewareStack.remove(name);
  // Each test leaves nothing expired behind for the next.
  await sweepExpired(unbounded, NOW + 10_000);
});

describe('a sweep', () => {
  it('deletes the expired items of every shard and keeps the others, counting per shard', async () => {
    const expired = await putMany(40, (i) => put((['RECEIPT#', 'ORG#', 'RTK#'] as const)[i % 3]!, -1 - i));
    const future = await putMany(10, () => put('RECEIPT#', 3_600));
    const forever = await put('ORG#', undefined);

    const report = await sweepExpired(unbounded, NOW);

    expect(report.total).toEqual({ found: 40, deleted: 40, kept: 0, gone: 0, conflicted: 0 });
    expect(report.stoppedBy).toBeUndefined();
    expect(Object.keys(report.shards)).toEqual(Array.from({ length: SWEEP_SHARDS }, (_, n) => sweepShard(n)));
    const expected: Record<string, SweepCounts> = {};
    for (const { PK } of expired) {
      const counts = (expected[shardOf(PK)] ??= { found: 0, deleted: 0, kept: 0, gone: 0, conflicted: 0 });
      counts.found += 1;
      counts.deleted += 1;
    }
    expect(Object.keys(expected).length).toBeGreaterThan(5); // several shards
    expect(Object.fromEntries(Object.entries(report.shards).filter(([, c]) => c.found > 0))).toEqual(expected);
    for (const key of expired) expect(await exists(key)).toBe(false);
    for (const key of [...future, forever]) expect(await exists(key)).toBe(true);
  });

  it('finds nothing on a second run', async () => {
    await putMany(5, (i) => put('RECEIPT#', -10 - i));
    expect((await sweepExpired(unbounded, NOW)).total.deleted).toBe(5);
    const again = await sweepExpired(unbounded, NOW);
    expect(again.total).toEqual({ found: 0, deleted: 0, kept: 0, gone: 0, conflicted: 0 });
    expect(again.queries).toBe(SWEEP_SHARDS); // one empty page per shard
  });

  it('keeps an item written again with a later expiry (or none) after the index listed it', async () => {
    const later = await put('RTK#', -5);
    const forever = await put('ORG#', -5, 'TOMBSTONE');
    beforeDeleteOf(later, async () => {
      await documentClient.send(
        new PutCommand({ TableName: tableName(), Item: { ...later, ...expiring(later.PK, NOW + 3_600) } }),
      );
    });
    beforeDeleteOf(forever, async () => {
      await documentClient.send(new PutCommand({ TableName: tableName(), Item: { ...forever, entity: 'Live' } }));
    });

    const report = await sweepExpired(unbounded, NOW);

    expect(report.total).toEqual({ found: 2, deleted: 0, kept: 2, gone: 0, conflicted: 0 });
    expect(await exists(later)).toBe(true);
    expect(await exists(forever)).toBe(true);
    expect((await sweepExpired(unbounded, NOW)).total.found).toBe(0);
  });

  it('counts an item someone else deleted meanwhile as gone, not as an error', async () => {
    const key = await put('RECEIPT#', -5);
    beforeDeleteOf(key, async () => {
      await documentClient.send(new DeleteCommand({ TableName: tableName(), Key: key }));
    });
    expect((await sweepExpired(unbounded, NOW)).total).toEqual({
      found: 1,
      deleted: 0,
      kept: 0,
      gone: 1,
      conflicted: 0,
    });
  });

  it('leaves an item a replicated write conflict refused for the next run', async () => {
    const key = await put('RECEIPT#', -5);
    beforeDeleteOf(key, async () => {
      throw Object.assign(new Error('another Region writes it'), { name: 'ReplicatedWriteConflictException' });
    });
    expect((await sweepExpired(unbounded, NOW)).total).toEqual({
      found: 1,
      deleted: 0,
      kept: 0,
      gone: 0,
      conflicted: 1,
    });
    expect(await exists(key)).toBe(true);
    expect((await sweepExpired(unbounded, NOW)).total).toMatchObject({ found: 1, deleted: 1 });
  });
});

describe('the bounds of a run', () => {
  it('attempts no more deletes than maxDeletes, spread over the shards, and says it stopped', async () => {
    const keys = await putMany(30, (i) => put('RECEIPT#', -1 - i));
    const first = await sweepExpired({ ...unbounded, maxDeletes: 10, pageSize: 2 }, NOW);
    expect(first.total).toMatchObject({ found: 10, deleted: 10 });
    expect(first.stoppedBy).toBe('max-deletes');
    // A page of at most 2 from each shard in turn: no shard took the whole budget.
    expect(Math.max(...Object.values(first.shards).map((c) => c.deleted))).toBeLessThanOrEqual(2);
    const rest = await sweepExpired(unbounded, NOW);
    expect(rest.total).toMatchObject({ found: 20, deleted: 20 });
    expect(rest.stoppedBy).toBeUndefined();
    for (const key of keys) expect(await exists(key)).toBe(false);
  });

  it('starts nothing once less than the margin is left, and stops between deletes when time runs out', async () => {
    await putMany(12, (i) => put('ORG#', -1 - i, 'ITEM', inFirstShard('ORG#')));
    const none = await sweepExpired({ ...unbounded, remainingMs: () => 4_000, marginMs: 5_000 }, NOW);
    expect(none).toMatchObject({ queries: 0, stoppedBy: 'time', total: { found: 0, deleted: 0 } });

    let calls = 0; // asked before the first Query and before each delete: it runs out after 3 deletes of the first shard
    const some = await sweepExpired(
      { ...unbounded, concurrency: 1, remainingMs: () => (calls++ < 5 ? 60_000 : 0) },
      NOW,
    );
    expect(some.stoppedBy).toBe('time');
    expect(some.queries).toBe(1);
    expect(some.total.deleted).toBe(3);
  });

  it('stops at a delete that fails otherwise, reporting what it did', async () => {
    const key = await put('RECEIPT#', -5);
    beforeDeleteOf(key, async () => {
      throw Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' });
    });
    const failed = await sweepExpired(unbounded, NOW).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(SweepFailed);
    expect((failed as SweepFailed).message).toBe('sweep stopped: AccessDeniedException: not authorized');
    expect((failed as SweepFailed).report.total).toMatchObject({ found: 1, deleted: 0 });
    expect(await exists(key)).toBe(true);
  });
});

describe('the sweeper function', () => {
  it('sweeps within its invocation’s time and answers what it did', async () => {
    const keys = await putMany(3, (i) => put('RECEIPT#', -100 - i));
    const context = {
      getRemainingTimeInMillis: () => 60_000,
      functionName: 'sweeper',
      awsRequestId: 'test',
    } as unknown as Context;
    const result = await handler({} as never, context);
    expect(result.total).toMatchObject({ found: 3, deleted: 3 });
    expect(Object.values(result.shards).every((c) => c.found > 0)).toBe(true); // only the shards that had something
    for (const key of keys) expect(await exists(key)).toBe(false);
  });

  it('fails the invocation when the sweep fails, so that Lambda counts an error', async () => {
    const key = await put('RECEIPT#', -100);
    beforeDeleteOf(key, async () => {
      throw Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' });
    });
    await expect(handler({} as never, undefined)).rejects.toThrow(
      'sweep stopped: AccessDeniedException: not authorized',
    );
  });
});
