import { getItem, type Item } from './collection';
import { setTimeout as sleep } from 'node:timers/promises';
import { STORE_TIMEOUTS } from './client';
import { Contended, currentDeadline, LOST_ROUND, RETRY_NOW, whileContended, type HotSpot } from './contention';
import { expiring, hasExpired } from './expiry';
import { Entity, keys } from './keys';
import { writeOnce, type Write } from './single-write';
import { isWriteOutcomeUnknown, repairing } from './write-outcome';

/**
 * A create's receipt: what makes a retried create safe. A create claims it before it commits,
 * naming the id of the record it is about to create, and the record's own commit decides whether
 * that id exists: a retry answers with that record, a reused Idempotency-Key with another request
 * is refused, and a claim whose creator died is taken over once its lease has passed (the
 * creator's deadline plus lease.marginMs). docs/design.md, "Receipts"; expiry: expiry.ts.
 */
export interface Receipt {
  /** Names the operation: a hash of the token, the function and the Idempotency-Key or the request itself. */
  id: string;
  /** A hash of what was asked (path and body): a retry under the same id must ask the same. */
  fingerprint: string;
  /** Epoch seconds after which the receipt no longer counts (the sweeper then removes it). */
  expiresAt: number;
  /**
   * Named by the client's Idempotency-Key (kept 24 h whatever happens to the resource), or derived
   * from the request itself (a short replay window, which a store may tie to the resource's life).
   */
  keyed: boolean;
}

/** What a refused retry is answered with: the first request's fingerprint and the record it created. */
export interface Replay<T> {
  replayOf: { fingerprint: string; record: T };
}

export const isReplay = <T>(outcome: unknown): outcome is Replay<T> =>
  typeof outcome === 'object' && outcome !== null && 'replayOf' in outcome;

/** Beyond a creator's deadline: covers clocks that differ between two functions, and a write still in flight (tests shorten it). */
export const lease = { marginMs: 20_000 };

/** A claim another request holds on the receipt. */
export interface Claim {
  fingerprint: string;
  /** The record its create commits (or committed) under this id. */
  recordId: string;
  /** Until then (epoch ms) its creator may still be at work; after it, the claim may be taken over. */
  leaseUntil: number;
}

const claimOf = (item: Item): Claim => ({
  fingerprint: item.fingerprint as string,
  recordId: item.recordId as string,
  leaseUntil: item.leaseUntil as number,
});

function claimItem(receipt: Receipt, recordId: string): Item {
  const key = keys.receipt(receipt.id);
  return {
    ...key,
    entity: Entity.Receipt,
    fingerprint: receipt.fingerprint,
    recordId,
    leaseUntil: currentDeadline() + lease.marginMs,
    ...expiring(key.PK, receipt.expiresAt),
  };
}

/** The hot spot a create works on (its run or organization), where waits on the receipt are counted too. */
export interface Spot {
  hotSpot: HotSpot;
  where: Record<string, string>;
}

/**
 * A retry that met its receipt claimed by an earlier attempt still within its lease, and could wait
 * no longer: nothing written. By `leaseUntil` the claim is settled: its record committed, or the
 * claim free to take over.
 */
export class ClaimPending extends Contended {
  readonly leaseUntil: number;
  constructor(spot: Spot, leaseUntil: number) {
    super(spot.hotSpot, spot.where, 0, 0);
    this.name = 'ClaimPending';
    this.message = `an earlier attempt of this create holds its receipt until ${new Date(leaseUntil).toISOString()}`;
    this.leaseUntil = leaseUntil;
  }
}

/** A create that gave up before any commit: nothing of it was written (a give-up after its commit is an unknown outcome). */
export const gaveUp = (error: unknown): boolean => error instanceof Contended && !isWriteOutcomeUnknown(error);

/**
 * Runs a create's commit under its claim on `receipt` (if any): a refusal (`refused`) or a give-up
 * before any commit (Contended: nothing written) gives the claim back, so the retry its answer
 * invites runs at once instead of waiting out the lease.
 */
export async function underClaim<T>(
  receipt: Receipt | undefined,
  recordId: string,
  commit: () => Promise<T>,
  refused: (outcome: T) => boolean,
): Promise<T> {
  let outcome: T;
  try {
    outcome = await commit();
  } catch (error) {
    if (receipt && gaveUp(error)) await releaseClaim(receipt, recordId);
    throw error;
  }
  if (receipt && refused(outcome)) await releaseClaim(receipt, recordId);
  return outcome;
}

/** How often a retry looks again for the record a live claim is creating. */
const CLAIM_POLL_MS = 25;

/** A retry waiting on a live claim: a short sleep before it looks again, or ClaimPending when its deadline comes first. */
export async function beforeLookingAgain(spot: Spot, claim: Claim): Promise<void> {
  if (Date.now() + CLAIM_POLL_MS + 2 * STORE_TIMEOUTS.requestTimeoutMs > currentDeadline())
    throw new ClaimPending(spot, claim.leaseUntil);
  await sleep(CLAIM_POLL_MS);
}

/** Claims `receipt` for the record `recordId` is about to create: undefined when claimed (no live receipt existed), else the claim that holds it. */
export async function claimReceipt(spot: Spot, receipt: Receipt, recordId: string): Promise<Claim | undefined> {
  let lostOnce = false;
  return whileContended(spot.hotSpot, spot.where, async () => {
    const claim: Write = {
      Put: {
        Item: claimItem(receipt, recordId),
        ConditionExpression: 'attribute_not_exists(PK) OR sweepAt < :now',
        ExpressionAttributeValues: { ':now': Math.floor(Date.now() / 1000) },
      },
    };
    let outcome: Awaited<ReturnType<typeof writeOnce>>;
    try {
      outcome = await writeOnce(claim);
    } catch (error) {
      // Its answer was lost (a loaded store's timeout): claim once more, and a refusal naming this
      // create's record is the first claim, landed.
      if (isWriteOutcomeUnknown(error) && !lostOnce) {
        lostOnce = true;
        return RETRY_NOW;
      }
      // A claim commits nothing: its failure is the store's, never an unknown outcome of the create.
      return repairing(() => Promise.reject(error));
    }
    if (outcome === 'written') return undefined;
    // Another Region wrote the receipt at this moment: the next try reads what it wrote.
    if (outcome === LOST_ROUND) return LOST_ROUND;
    // Expired between its write and ours (or the item vanished): claim it again.
    if (!outcome.refused || hasExpired(outcome.refused)) return LOST_ROUND;
    return outcome.refused.recordId === recordId ? undefined : claimOf(outcome.refused);
  });
}

/** Takes over a claim whose lease has passed, for the same record: false when someone else did first. */
export async function takeOverClaim(receipt: Receipt, claim: Claim): Promise<boolean> {
  const outcome = await writeOnce({
    Update: {
      Key: keys.receipt(receipt.id),
      UpdateExpression: 'SET leaseUntil = :lease',
      ConditionExpression: 'recordId = :recordId AND leaseUntil = :seen',
      ExpressionAttributeValues: {
        ':lease': currentDeadline() + lease.marginMs,
        ':recordId': claim.recordId,
        ':seen': claim.leaseUntil,
      },
    },
  });
  return outcome === 'written';
}

/**
 * Gives a claim back when its create was refused (404, 422): the refusal committed nothing, and a
 * corrected retry must not wait for the lease. Best effort: a claim left behind is taken over.
 */
export async function releaseClaim(receipt: Receipt, recordId: string): Promise<void> {
  const release: Write = {
    Delete: {
      Key: keys.receipt(receipt.id),
      ConditionExpression: 'recordId = :recordId',
      ExpressionAttributeValues: { ':recordId': recordId },
    },
  };
  try {
    await writeOnce(release);
  } catch {
    // Left for the lease to end.
  }
}

/** The live claim on `receipt`, if any (one strongly consistent read). */
export async function findClaim(receipt: Receipt): Promise<Claim | undefined> {
  const item = await getItem(keys.receipt(receipt.id));
  return item && !hasExpired(item) ? claimOf(item) : undefined;
}
