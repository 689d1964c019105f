import { PARTITION } from './store/keys';

/**
 * The sweeper as the stack deploys it (infra/cdk/constructs/sweeper.ts): not an endpoint, a
 * function run on a schedule that deletes the items whose expiry has passed (shared/store/sweep.ts),
 * what the routes table (shared/routes.ts) is for the API's functions.
 */

/** Its handler file under functions/, without extension. */
export const SWEEPER_FUNCTION = 'sweeper';

/** How often it runs. An expired item counts as absent whether or not it is gone yet (expiry.ts): this bounds storage, not correctness. */
export const SWEEP_INTERVAL_MINUTES = 15;

/**
 * The partitions whose items carry an expiry, and so the only ones it may delete from (IAM
 * dynamodb:LeadingKeys): create receipts, and the tombstones a delete of a reserved tag key leaves
 * in its organization's and its own partition. A new kind of expiring item elsewhere needs its
 * prefix here, or the sweeper's deletes of it are refused (and its errors alarm).
 */
export const SWEPT_PARTITIONS: readonly string[] = [
  PARTITION.receipt,
  PARTITION.organization,
  PARTITION.reservedTagKey,
].map((prefix) => `${prefix}*`);

/** The Lambda environment variable that bounds the deletes of one run. */
export const MAX_DELETES_ENV = 'SWEEP_MAX_DELETES';

/**
 * Deletes one run attempts at most: each is 1 write unit for the item and 1 for its index entry
 * (docs/cost.md prices them), so a run's cost is bounded whatever has piled up; a run also stops
 * starting work before its timeout (shared/store/sweep.ts). A larger backlog takes several runs.
 */
export const DEFAULT_MAX_DELETES = 10_000;

/** The function's timeout: a run stops starting work some seconds before it (shared/store/sweep.ts). */
export const SWEEPER_TIMEOUT_SECONDS = 60;

/** The bound of one run from its environment: a positive integer, else the default. */
export function maxDeletesFrom(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[MAX_DELETES_ENV]?.trim();
  if (!raw) return DEFAULT_MAX_DELETES;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1)
    throw new Error(`${MAX_DELETES_ENV}=${raw} is not a positive whole number of deletes`);
  return value;
}
