import { setTimeout as sleep } from 'node:timers/promises';
import { getItem, type Item } from './collection';
import { LOST_ROUND, RETRY_NOW, whileContended } from './contention';
import { nowSeconds } from './expiry';
import { keys } from './keys';
import {
  beforeLookingAgain,
  claimReceipt,
  findClaim,
  underClaim,
  takeOverClaim,
  type Claim,
  type Receipt,
  type Replay,
} from './receipts';
import { commit, isCommitted } from './tag-key-commits';
import { currentAt, knownHead, noteRead, remember, seenHead, settle, type SeenHead } from './tag-key-heads';
import { pendingChangeOf, pendingOf, readHead, writeOut, type KeyReceipt } from './tag-key-log';
import { nameOwner, nameTaken, stillAt } from './tag-key-names';
import { atHead, keyRecord } from './tag-key-records';
import { placeOf, WINDOW_CAPACITY, WINDOW_MS, windowOf } from './tag-key-windows';
import { afterCommit } from './write-outcome';
import { KEYS_PER_ORGANIZATION } from '../reserved-tag-keys/key-rule';
import type { ReservedTagKey, ReservedTagKeyChanges } from '../reserved-tag-keys/reserved-tag-key';
import { newId, now } from '../ids';

/**
 * Reserved tag keys: what the rest of the code calls. Each key is three items: the member of its
 * organization's collection (what lists read, ordered by creation time, then id), a copy keyed by
 * id (what PATCH and DELETE find it by) and a guard item per lower-cased name (what makes names
 * unique, tag-key-names.ts). Every change commits on the organization's head (tag-key-commits.ts)
 * and is written out after it (tag-key-log.ts); pages skip by spans of creation time
 * (tag-key-windows.ts) and past tombstones (tag-key-pages.ts).
 */

/**
 * Why a write was refused, so the caller can answer with the right error: 'name-taken', or 'gone'
 * (deleted, or changed by another write meanwhile: read it again).
 */
export type WriteRefusal = 'name-taken' | 'gone';
/** Why a create was refused: 'name-taken', or 'full' (the organization holds KEYS_PER_ORGANIZATION keys). */
export type CreateRefusal = 'name-taken' | 'full';

export { WINDOW_CAPACITY, WINDOW_MS };
export { listReservedTagKeys } from './tag-key-pages';

/** A live key by id, as its copy holds it (the caller that changes it reads it at the head's version). */
export async function findReservedTagKey(id: string): Promise<ReservedTagKey | undefined> {
  const found = await getItem(keys.reservedTagKeyById(id));
  if (!found || found.deleted) return undefined;
  const key = keyRecord(found);
  noteRead(key, found.v as number);
  return key;
}

const spotOf = (organization: string) => ({ hotSpot: 'organization' as const, where: { organization } });

/**
 * Creates a key, exactly once per receipt. An Idempotency-Key's receipt is claimed with the key's
 * id first (receipts.ts), then the create commits on the organization's head; it answers with the
 * first answer for its 24 hours, whatever happened to the key since (as Stripe). A replay window's
 * receipt (a request without a key) needs no claim: names are unique, so its retry meets the key
 * the first attempt made by name, which keeps the receipt, and answers with it while the window
 * lasts and the key still is what the request asks for (not renamed, changed or deleted since);
 * otherwise the identical request is a new create (Terraform replacing a key deletes it, then
 * creates it again).
 */
export async function insertReservedTagKey(
  organization: string,
  attributes: Required<ReservedTagKeyChanges>,
): Promise<ReservedTagKey | CreateRefusal>;
export async function insertReservedTagKey(
  organization: string,
  attributes: Required<ReservedTagKeyChanges>,
  receipt: Receipt,
): Promise<ReservedTagKey | CreateRefusal | Replay<ReservedTagKey>>;
export async function insertReservedTagKey(
  organization: string,
  attributes: Required<ReservedTagKeyChanges>,
  receipt?: Receipt,
): Promise<ReservedTagKey | CreateRefusal | Replay<ReservedTagKey>> {
  if (receipt?.keyed) return insertClaimed(organization, attributes, receipt);
  return insertByName(organization, attributes, receipt);
}

/** A create without an Idempotency-Key: its replay window's receipt goes on the key, and a retry finds it by its name. */
async function insertByName(
  organization: string,
  attributes: Required<ReservedTagKeyChanges>,
  receipt?: Receipt,
): Promise<ReservedTagKey | CreateRefusal | Replay<ReservedTagKey>> {
  const kept = receipt && { id: receipt.id, until: receipt.expiresAt };
  const created = await createKey(organization, attributes, newId('rtk'), undefined, kept);
  if (created !== 'name-taken' || !receipt) return created;
  // The name's key, read at the head as it is now: this request's own if an earlier attempt made it.
  const { head } = remember(await readHead(organization));
  const owner = await nameOwner(head, attributes.key, { withReceipt: true });
  const asked = owner?.record.key === attributes.key && owner.record.disableOverrides === attributes.disableOverrides;
  if (!asked || owner.receipt?.id !== receipt.id || owner.receipt.until < nowSeconds()) return created;
  // Its writer may have died after the commit: written out before the answer, as a PATCH finds it by id.
  const held = pendingChangeOf(head, owner.record.id);
  if (held) await afterCommit(() => writeOut(head, held, false));
  return { replayOf: { fingerprint: receipt.fingerprint, record: owner.record } };
}

/** A create with an Idempotency-Key: its receipt is claimed first (receipts.ts), side by side with its first reads. */
async function insertClaimed(
  organization: string,
  attributes: Required<ReservedTagKeyChanges>,
  receipt: Receipt,
): Promise<ReservedTagKey | CreateRefusal | Replay<ReservedTagKey>> {
  const id = newId('rtk');
  // The first attempt's reads go out with the claim: they ask nothing of the receipt.
  const prepared = prepare(organization, attributes.key);
  prepared.catch(() => undefined);
  const claim = await claimReceipt(spotOf(organization), receipt, id);
  if (claim) return resolveClaim(organization, attributes, receipt, claim);
  return underClaim(
    receipt,
    id,
    () => createKey(organization, attributes, id, prepared),
    (created) => typeof created === 'string',
  );
}

/**
 * A create that found its Idempotency-Key's receipt claimed by another request: its key once
 * created, whatever happened to it since; the same key for another request, a Replay the caller
 * refuses (422); a claim whose creator's lease has passed, taken over and created by this request.
 */
async function resolveClaim(
  organization: string,
  attributes: Required<ReservedTagKeyChanges>,
  receipt: Receipt,
  claim: Claim,
): Promise<ReservedTagKey | CreateRefusal | Replay<ReservedTagKey>> {
  const replay = (record: ReservedTagKey): Replay<ReservedTagKey> => ({
    replayOf: { fingerprint: claim.fingerprint, record },
  });
  if (claim.fingerprint !== receipt.fingerprint) return replay(undefined as unknown as ReservedTagKey);
  for (;;) {
    // The first answer, which the copy keeps (deleted or not).
    const written = await getItem(keys.reservedTagKeyById(claim.recordId));
    if (written) return replay(keyRecord(written.created as Item));
    // The head first, then the copy: a create committed before the head was read and no longer
    // held by it has its copy written (the commit that dropped it wrote it out first).
    const seen = remember(await readHead(organization));
    const created = pendingOf(seen.head).find(
      (change) => change.kind === 'create' && change.record.id === claim.recordId,
    );
    if (created) {
      await afterCommit(() => writeOut(seen.head, created, false));
      return replay(created.record);
    }
    const copy = await getItem(keys.reservedTagKeyById(claim.recordId));
    if (copy) return replay(keyRecord(copy.created as Item));
    if (Date.now() < claim.leaseUntil) {
      await beforeLookingAgain(spotOf(organization), claim);
      continue;
    }
    // Its creator can no longer commit: this request creates the same key, once.
    if (await takeOverClaim(receipt, claim)) {
      return underClaim(
        receipt,
        claim.recordId,
        () => createKey(organization, attributes, claim.recordId),
        (created) => typeof created === 'string',
      );
    }
    const now = await findClaim(receipt);
    if (!now) return insertClaimed(organization, attributes, receipt);
    claim = now;
  }
}

/**
 * What a create attempt reads first: the head, then whether the name is taken at it and, alongside,
 * whether the change its commit drops from the head is written out (settle).
 */
interface Prepared {
  seen: SeenHead;
  taken: boolean;
  settled: Promise<true | 'wait'>;
}

async function prepare(organization: string, key: string): Promise<Prepared> {
  const seen = await knownHead(organization);
  const settled = settle(seen);
  settled.catch(() => undefined); // awaited only when the name is free
  return { seen, taken: await nameTaken(seen.head, key), settled };
}

/**
 * Commits the create of key `id` on the organization's head: the name must be free at the head's
 * version, the organization must hold fewer than KEYS_PER_ORGANIZATION keys, and a span of
 * creation time must have room for it (tag-key-windows.ts: after WINDOW_CAPACITY creates in one
 * 100 ms window, the next create waits for the next window).
 */
function createKey(
  organization: string,
  attributes: Required<ReservedTagKeyChanges>,
  id: string,
  prepared?: Promise<Prepared>,
  receipt?: KeyReceipt,
): Promise<ReservedTagKey | CreateRefusal> {
  return whileContended('organization', { organization }, async () => {
    const { seen, taken, settled } = await (prepared ?? prepare(organization, attributes.key));
    prepared = undefined;
    // A retry that took over this key's receipt created it meanwhile.
    const mine = pendingOf(seen.head).find((change) => change.kind === 'create' && change.record.id === id);
    if (mine) return mine.record;
    // A 422 needs nothing written out: the change that took the name is committed, and readers finish it.
    if (taken) return (await stillAt(seen)) ? ('name-taken' as const) : RETRY_NOW;
    if (seen.head.itemCount >= KEYS_PER_ORGANIZATION) return (await stillAt(seen)) ? ('full' as const) : RETRY_NOW;
    if ((await settled) === 'wait') return LOST_ROUND;
    const createdAt = now();
    if (placeOf(seen.head.spans, seen.head.lastWindow, windowOf(createdAt)) === 'wait') {
      // Until past the last window counted (the next one, but for a writer whose clock is behind).
      await sleep(Math.min(WINDOW_MS, (seen.head.lastWindow + 1) * WINDOW_MS - Date.now()));
      return RETRY_NOW;
    }
    const record: ReservedTagKey = { id, organization, ...attributes, createdAt, updatedAt: createdAt };
    const committed = await commit(seen, { kind: 'create', record, ...(receipt ? { receipt } : {}) }, 1);
    if (isCommitted(committed)) return committed.record;
    // Refused for a change that took this name (the head the refusal carried): the answer is known.
    const refusedBy = seenHead(organization);
    const winner = refusedBy?.head.latest;
    if (
      refusedBy &&
      winner &&
      winner.kind !== 'delete' &&
      winner.record.id !== id &&
      winner.record.key.toLowerCase() === attributes.key.toLowerCase()
    ) {
      return 'name-taken' as const;
    }
    return committed;
  });
}

/**
 * The key at the head this process knows, the change its commit would drop written out: the key
 * as read when it was read after the head was observed, else read again (with the head's held
 * changes over it).
 */
async function atKnownHead(
  current: ReservedTagKey,
  also: (seen: SeenHead) => Promise<unknown> = async () => undefined,
) {
  const seen = await knownHead(current.organization);
  const [read, settled] = await Promise.all([
    currentAt(current, seen) ? current : findReservedTagKey(current.id),
    settle(seen),
    also(seen),
  ]);
  return { seen, key: read && atHead(seen.head, read), wait: settled === 'wait' };
}

/**
 * Sets the attributes that change. 'gone': deleted, or changed by another write meanwhile (read it
 * again); 'name-taken' when the new name is another key's. A change to nothing writes nothing.
 */
export async function updateStoredReservedTagKey(
  current: ReservedTagKey,
  changes: ReservedTagKeyChanges,
): Promise<ReservedTagKey | WriteRefusal> {
  let taken = false;
  // The new name's guard is read with the key, at the same head (another key's name, whatever this key's is now).
  const { seen, key, wait } = await atKnownHead(current, async (at) => {
    if (changes.key !== undefined) taken = await nameTaken(at.head, changes.key, current.id);
  });
  if (!key) return 'gone';
  if (wait) return 'gone';
  const updated: ReservedTagKey = { ...key, ...changes, updatedAt: now() };
  if (updated.key === key.key && updated.disableOverrides === key.disableOverrides) return key;
  const renamed = updated.key.toLowerCase() !== key.key.toLowerCase();
  if (renamed && taken) return (await stillAt(seen)) ? 'name-taken' : 'gone';
  const committed = await commit(
    seen,
    { kind: 'update', record: updated, ...(renamed ? { previousKey: key.key } : {}) },
    0,
  );
  return isCommitted(committed) ? committed.record : 'gone';
}

/** Deletes the key; 'gone' when it was deleted, or changed by another write meanwhile (read it again). */
export async function deleteStoredReservedTagKey(current: ReservedTagKey): Promise<undefined | WriteRefusal> {
  const { seen, key, wait } = await atKnownHead(current);
  if (!key || wait) return 'gone';
  const committed = await commit(seen, { kind: 'delete', record: key }, -1);
  return isCommitted(committed) ? undefined : 'gone';
}
