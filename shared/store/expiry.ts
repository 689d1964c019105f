import { hash } from 'node:crypto';

/**
 * Items that expire (create receipts, the tombstones a delete leaves) carry their own expiry and
 * count as absent once past it; nothing relies on DynamoDB's TTL, which a global table in
 * multi-Region strong consistency does not offer. A sparse global secondary index lists them by
 * expiry, spread over a few shards, so the sweeper (functions/sweeper.ts) finds what has expired
 * with one Query per shard and deletes it, at a cost proportional to what it deletes.
 */
export const EXPIRY_INDEX = 'Expiry';
/**
 * The index's partition key (`SWEEP#0`…) and sort key (epoch seconds): names of their own, since
 * other items have an `expiresAt` of another meaning and type (a token's ISO time).
 */
export const EXPIRY_KEYS = { shard: 'sweepShard', sweepAt: 'sweepAt' } as const;
/** Enough shards that the index never concentrates writes on one partition (1,000 writes/s each). */
export const SWEEP_SHARDS = 16;

export const sweepShard = (n: number) => `SWEEP#${n}`;

/** The attributes that make an item expire at `expiresAt` (epoch seconds); its shard follows from its key. */
export function expiring(PK: string, expiresAt: number): { sweepShard: string; sweepAt: number } {
  const n = Number.parseInt(hash('sha1', PK, 'hex').slice(0, 8), 16) % SWEEP_SHARDS;
  return { sweepShard: sweepShard(n), sweepAt: expiresAt };
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** An item whose expiry has passed counts as absent, whether or not the sweeper has removed it yet. */
export const hasExpired = (item: Record<string, unknown> | undefined, now = nowSeconds()) =>
  item !== undefined && typeof item.sweepAt === 'number' && item.sweepAt < now;
