import { setTimeout as sleep } from 'node:timers/promises';
import { endOfPrefix, getItem, querySortKeyRange, type Item, type Listed, type Range } from './collection';
import { Contended, currentDeadline, currentTurn, LOST_ROUND, RETRY_NOW, whileContended } from './contention';
import { CLAIM_AFTER_MS, CLAIM_TIMEOUT_MS, claimTurn, fairCommit, type Turn, type TurnNow } from './fair-turns';
import { STORE_TIMEOUTS } from './client';
import { Entity, keys } from './keys';
import {
  claimReceipt,
  findClaim,
  releaseClaim,
  takeOverClaim,
  type Claim,
  type Receipt,
  type Replay,
} from './receipts';
import { isRefused, writeOnce } from './single-write';
import { applied, currentAt, knownHead, noteRead, remember, seenHead, settle, type SeenHead } from './tag-key-heads';
import { hasExpired, nowSeconds } from './expiry';
import {
  applyChange,
  headOf,
  memberSortKey,
  pendingChangeOf,
  pendingOf,
  readHead,
  windowAttribute,
  writeOut,
  writeOutKey,
  type Change,
  type Head,
} from './tag-key-log';
import { startOf, WINDOW_CAPACITY, WINDOW_MS, windowOf } from './tag-key-windows';
import { afterCommit, repairing } from './write-outcome';
import type { ReservedTagKey, ReservedTagKeyChanges } from '../reserved-tag-keys/reserved-tag-key';
import { newId, now } from '../ids';

/**
 * Reserved tag keys. Each key is three items: the member of its organization's collection (what
 * lists read, ordered by creation time, then id), a copy keyed by id (what PATCH and DELETE find
 * it by) and a guard item per lower-cased name (what makes names unique). Every change commits on
 * the organization's head and is written out after it (tag-key-log.ts); pages skip by windows of
 * creation time (tag-key-windows.ts).
 */

/**
 * Why a write was refused, so the caller can answer with the right error: 'name-taken', or 'gone'
 * (deleted, or changed by another write meanwhile: read it again).
 */
export type WriteRefusal = 'name-taken' | 'gone';

export { WINDOW_CAPACITY, WINDOW_MS };

/** The record an item of a key holds, without the store's own attributes. */
function keyRecord(item: Item): ReservedTagKey {
  return {
    id: item.id as string,
    organization: item.organization as string,
    key: item.key as string,
    disableOverrides: item.disableOverrides as boolean,
    createdAt: item.createdAt as string,
    updatedAt: item.updatedAt as string,
  };
}

/** The change that moves the head from `head` to the next version, and how the counts move. */
function commitChange(
  head: Head,
  change: Omit<Change, 'version' | 'at'>,
  counts: { delta: 1 | -1 | 0; windowGoes?: boolean },
  turn: Turn,
) {
  const next: Change = { ...change, version: head.version + 1, at: Date.now() };
  const fair = fairCommit(turn, counts.windowGoes ? ['#window'] : []);
  const window = windowAttribute(change.record.createdAt);
  const counted =
    counts.delta === 0 ? '' : counts.windowGoes ? ' ADD itemCount :delta' : ' ADD itemCount :delta, #window :delta';
  return {
    change: next,
    write: {
      Update: {
        Key: keys.reservedTagKeyCounter(head.organization),
        // The right-hand side reads the head as it was: its latest change becomes the prior.
        UpdateExpression: `SET entity = :entity, version = :version, #prior = if_not_exists(latest, :none), latest = :latest${counted}${fair.remove}`,
        ConditionExpression: `${head.version === 0 ? 'attribute_not_exists(version)' : 'version = :expected'} AND ${fair.condition}`,
        ExpressionAttributeNames: { '#prior': 'prior', ...(counts.delta === 0 ? {} : { '#window': window }) }, // prior: a reserved word
        ExpressionAttributeValues: {
          ':entity': Entity.ReservedTagKeyCounter,
          ':version': next.version,
          ':latest': next,
          ':none': null,
          ...fair.values,
          ...(head.version === 0 ? {} : { ':expected': head.version }),
          ...(counts.delta === 0 ? {} : { ':delta': counts.delta }),
        },
      },
    },
  };
}

/**
 * Commits `change` on the head as `seen` knows it: the change, written out, once committed;
 * LOST_ROUND when the head had moved (the refusal's head is remembered for the next attempt), or
 * RETRY_NOW when it is this request's turn (fair-turns.ts: the writers of a busy organization
 * take turns, oldest first, as a busy run's do).
 */
async function commit(
  seen: SeenHead,
  change: Omit<Change, 'version' | 'at'>,
  counts: { delta: 1 | -1 | 0; windowGoes?: boolean },
): Promise<Change | typeof LOST_ROUND | typeof RETRY_NOW> {
  const turn = currentTurn();
  const { change: next, write } = commitChange(seen.head, change, counts, turn);
  const outcome = await writeOnce(write);
  // Another Region was writing the head: the turn's holder goes again at once.
  if (outcome === LOST_ROUND) return turn.held ? RETRY_NOW : LOST_ROUND;
  if (isRefused(outcome)) {
    const organization = seen.head.organization;
    remember(headOf(organization, outcome.refused));
    const now = (outcome.refused ?? {}) as TurnNow;
    // Still this writer's turn (the head moved under it): the next attempt is its to take.
    turn.held = now.turnSince === turn.since;
    if (turn.held) return RETRY_NOW;
    // Waited long enough, and no older writer waiting: claim the next turn, and take it at once.
    if (!outcome.refused || Date.now() - turn.since < CLAIM_AFTER_MS) return LOST_ROUND;
    return (await claimTurn(keys.reservedTagKeyCounter(organization), undefined, turn, now)) ? RETRY_NOW : LOST_ROUND;
  }
  const committed = await afterCommit(async () => {
    await applyChange(next);
    return next;
  });
  // Written out up to this change when every change before it was.
  const known = seenHead(seen.head.organization);
  const before =
    known?.head.version === seen.head.version
      ? Math.max(known.appliedVersion, seen.appliedVersion)
      : seen.appliedVersion;
  remember(applied(seen.head, next), before >= seen.head.version ? next.version : before);
  // The key as this change left it is the key at the head just remembered.
  noteRead(committed.record, committed.version);
  return committed;
}

/** The state of a key at the head's version: its copy as read after the head was, with the head's changes over it. */
function atHead(head: Head, copy: ReservedTagKey | undefined): ReservedTagKey | undefined {
  const change = copy && pendingChangeOf(head, copy.id);
  if (!change) return copy;
  return change.kind === 'delete' ? undefined : change.record;
}

/**
 * Whether `key` is another live key's name at the head's version: a change the head holds gave
 * it to its key, or (read after the head was observed) its guard names a key whose copy still has
 * that name. A guard left by a late write of an old change names a key that no longer has it.
 */
async function nameTaken(head: Head, key: string, exceptId?: string): Promise<boolean> {
  const lower = key.toLowerCase();
  const isOther = (id: string) => id !== exceptId;
  // The keys the head's changes made are as those changes left them, whatever their items say yet.
  const pending = pendingOf(head).map((change) => pendingChangeOf(head, change.record.id)!);
  if (
    pending.some(
      (change) => isOther(change.record.id) && change.kind !== 'delete' && change.record.key.toLowerCase() === lower,
    )
  )
    return true;
  const guard = await getItem(keys.reservedTagKeyName(head.organization, key));
  const owner = guard?.id as string | undefined;
  if (owner === undefined || !isOther(owner) || pendingChangeOf(head, owner)) return false;
  const copy = await getItem(keys.reservedTagKeyById(owner));
  return copy !== undefined && !copy.deleted && keyRecord(copy).key.toLowerCase() === lower;
}

/**
 * A range of the organization's live keys, oldest first, with their total. The first page is one
 * Query (the head sorts first in the collection); a later one reads the head, then the range from
 * the start of the window it begins in. Tombstones of recent deletes are skipped (reading on past
 * them). A page that would show a change the head holds before it is written out writes it first,
 * then reads again.
 */
export const listReservedTagKeys = (organization: string, range: Range): Promise<Listed<ReservedTagKey>> =>
  listKeys(organization, range, false);

async function listKeys(organization: string, range: Range, rewritten: boolean): Promise<Listed<ReservedTagKey>> {
  const collection = keys.reservedTagKeys(organization);
  const end = endOfPrefix(`${collection.SKPrefix}#`);
  let head: Head;
  let from: string;
  let skip = 0;
  let read: { live: Item[]; coveredTo: string };
  if (range.offset === 0) {
    const counter = keys.reservedTagKeyCounter(organization);
    const first = await querySortKeyRange(collection.PK, counter.SK, end, 1 + range.limit);
    const counterItem = first[0]?.SK === counter.SK ? first.shift() : undefined;
    head = headOf(organization, counterItem);
    from = counter.SK;
    read = await readLive(collection.PK, first, 1 + range.limit - (counterItem ? 1 : 0), end, range.limit);
  } else {
    head = await readHead(organization);
    const start = range.offset < head.itemCount ? startOf(head.windows, range.offset) : undefined;
    if (!start) return { items: [], totalCount: head.itemCount };
    from = keys.reservedTagKey(organization, new Date(start.window * WINDOW_MS).toISOString(), '').SK;
    skip = start.skip;
    const need = skip + range.limit;
    read = await readLive(collection.PK, await querySortKeyRange(collection.PK, from, end, need), need, end, need);
  }
  remember(head);
  // A key the head holds a change of, in this page's range, whose member does not show its newest change yet.
  const unwritten = [...new Set(pendingOf(head).map((change) => change.record.id))].filter((id) => {
    const newest = pendingChangeOf(head, id)!;
    const sortKey = memberSortKey(newest.record);
    if (sortKey < from || sortKey > read.coveredTo) return false;
    const member = read.live.find((item) => item.id === id);
    return newest.kind === 'delete' ? member !== undefined : ((member?.v as number | undefined) ?? -1) < newest.version;
  });
  if (unwritten.length > 0 && !rewritten) {
    await repairing(() => Promise.all(unwritten.map((id) => writeOutKey(head, id))));
    return listKeys(organization, range, true);
  }
  return { items: read.live.slice(skip, skip + range.limit).map(keyRecord), totalCount: head.itemCount };
}

/**
 * The live members among `items` (a first read of up to `asked` items), reading on past
 * tombstones until `need` live ones are found or the collection ends; and how far it read. Each
 * read on asks for what is missing plus as many again as the tombstones met so far, so a run of
 * tombstones costs a few reads, not one each. Tombstones whose expiry has passed are removed by
 * the reader that meets them, as the sweeper would.
 */
async function readLive(
  PK: string,
  items: Item[],
  asked: number,
  end: string,
  need: number,
): Promise<{ live: Item[]; coveredTo: string }> {
  const isLive = (item: Item) => !item.deleted;
  const live = items.filter(isLive);
  const expired = items.filter((item) => item.deleted && hasExpired(item));
  let tombstones = items.length - live.length;
  let batch = items;
  let requested = asked;
  while (live.length < need && batch.length >= requested && batch.length > 0) {
    const after = `${batch[batch.length - 1]!.SK as string}\u0000`;
    requested = need - live.length + tombstones;
    batch = await querySortKeyRange(PK, after, end, requested);
    const found = batch.filter(isLive);
    live.push(...found);
    tombstones += batch.length - found.length;
    expired.push(...batch.filter((item) => item.deleted && hasExpired(item)));
  }
  if (expired.length > 0) await repairing(() => Promise.all(expired.map(removeExpiredTombstone)));
  const full = batch.length >= requested && batch.length > 0;
  return { live, coveredTo: full ? (batch[batch.length - 1]!.SK as string) : end };
}

/** A tombstone past its expiry, unless it was written again meanwhile. */
const removeExpiredTombstone = (item: Item) =>
  writeOnce({
    Delete: {
      Key: { PK: item.PK as string, SK: item.SK as string },
      ConditionExpression: 'attribute_exists(deleted) AND sweepAt < :now',
      ExpressionAttributeValues: { ':now': nowSeconds() },
    },
  });

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
 * Creates a key, exactly once per receipt: the receipt is claimed with the key's id first
 * (receipts.ts), then the create commits on the organization's head. An Idempotency-Key's receipt
 * answers with the first answer for its 24 hours, whatever happened to the key since (as Stripe).
 * A replay window's receipt answers with the key only while it still is what the request asks
 * for (not renamed, changed or deleted since); otherwise the identical request is a new create
 * and takes the receipt over (Terraform replacing a key deletes it, then creates it again).
 */
export async function insertReservedTagKey(
  organization: string,
  attributes: Required<ReservedTagKeyChanges>,
): Promise<ReservedTagKey | WriteRefusal>;
export async function insertReservedTagKey(
  organization: string,
  attributes: Required<ReservedTagKeyChanges>,
  receipt: Receipt,
): Promise<ReservedTagKey | WriteRefusal | Replay<ReservedTagKey>>;
export async function insertReservedTagKey(
  organization: string,
  attributes: Required<ReservedTagKeyChanges>,
  receipt?: Receipt,
): Promise<ReservedTagKey | WriteRefusal | Replay<ReservedTagKey>> {
  return insertOnce(organization, attributes, receipt);
}

/** `replacing`: the key a replay window's receipt named and this identical request found changed or gone. */
async function insertOnce(
  organization: string,
  attributes: Required<ReservedTagKeyChanges>,
  receipt?: Receipt,
  replacing?: string,
): Promise<ReservedTagKey | WriteRefusal | Replay<ReservedTagKey>> {
  const id = newId('rtk');
  // The first attempt's reads go out with the claim: they ask nothing of the receipt.
  const prepared = prepare(organization, attributes.key);
  prepared.catch(() => undefined);
  const claim = receipt && (await claimReceipt(spotOf(organization), receipt, id, replacing));
  if (claim) return resolveClaim(organization, attributes, receipt!, claim);
  const created = await createKey(organization, attributes, id, prepared);
  if (typeof created === 'string' && receipt) await releaseClaim(receipt, id);
  return created;
}

/** How often a retry looks again for the key a live claim is creating. */
const CLAIM_POLL_MS = 25;

/**
 * A create that found its receipt claimed by another request with the same receipt: its key once
 * created (as above); the same receipt for another request, a Replay the caller refuses (422); a
 * claim whose creator's lease has passed, taken over and created by this request.
 */
async function resolveClaim(
  organization: string,
  attributes: Required<ReservedTagKeyChanges>,
  receipt: Receipt,
  claim: Claim,
): Promise<ReservedTagKey | WriteRefusal | Replay<ReservedTagKey>> {
  const replay = (record: ReservedTagKey): Replay<ReservedTagKey> => ({
    replayOf: { fingerprint: claim.fingerprint, record },
  });
  if (claim.fingerprint !== receipt.fingerprint) return replay(undefined as unknown as ReservedTagKey);
  for (;;) {
    // An Idempotency-Key's replay is the first answer, which the copy keeps (deleted or not).
    if (receipt.keyed) {
      const copy = await getItem(keys.reservedTagKeyById(claim.recordId));
      if (copy) return replay(keyRecord(copy.created as Item));
    }
    // The head first, then the copy: a create committed before the head was read and no longer
    // held by it has its copy written (the commit that dropped it wrote it out first).
    const seen = remember(await readHead(organization));
    const created = pendingOf(seen.head).find(
      (change) => change.kind === 'create' && change.record.id === claim.recordId,
    );
    if (created) {
      await afterCommit(() => writeOut(seen.head, created, false));
      // Unless a later change of the head's changed it: then its copy, now written, says what it is.
      if (receipt.keyed || pendingChangeOf(seen.head, created.record.id) === created) return replay(created.record);
    }
    const copy = await getItem(keys.reservedTagKeyById(claim.recordId));
    if (copy) {
      if (receipt.keyed) return replay(keyRecord(copy.created as Item));
      const current = atHead(seen.head, copy.deleted ? undefined : keyRecord(copy));
      if (current && current.key === attributes.key && current.disableOverrides === attributes.disableOverrides)
        return replay(current);
      // Renamed, changed or deleted since: this identical request is a new create.
      return insertOnce(organization, attributes, receipt, claim.recordId);
    }
    if (Date.now() < claim.leaseUntil) {
      if (Date.now() + CLAIM_POLL_MS + 2 * STORE_TIMEOUTS.requestTimeoutMs > currentDeadline())
        throw new Contended('organization', { organization }, 0, 0);
      await sleep(CLAIM_POLL_MS);
      continue;
    }
    // Its creator can no longer commit: this request creates the same key, once.
    if (await takeOverClaim(receipt, claim)) {
      const created = await createKey(organization, attributes, claim.recordId);
      if (typeof created === 'string') await releaseClaim(receipt, claim.recordId);
      return created;
    }
    const now = await findClaim(receipt);
    if (!now) return insertOnce(organization, attributes, receipt);
    claim = now;
  }
}

/**
 * Whether the head is still the one `seen` observed: then whatever was read since (a guard, a
 * copy) is the state at it, and a refusal drawn from it (the name is taken) is the true answer.
 * A head known from before this request may be stale: the next attempt starts from the new one.
 */
async function stillAt(seen: SeenHead): Promise<boolean> {
  const head = await readHead(seen.head.organization);
  if (head.version === seen.head.version) return true;
  remember(head);
  return false;
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
 * version, and the window of its creation time must have room (a full one, over WINDOW_CAPACITY
 * creates in 100 ms, is retried in the next).
 */
function createKey(
  organization: string,
  attributes: Required<ReservedTagKeyChanges>,
  id: string,
  prepared?: Promise<Prepared>,
): Promise<ReservedTagKey | WriteRefusal> {
  return whileContended(
    'organization',
    { organization },
    async () => {
      const { seen, taken, settled } = await (prepared ?? prepare(organization, attributes.key));
      prepared = undefined;
      // A retry that took over this key's receipt created it meanwhile.
      const mine = pendingOf(seen.head).find((change) => change.kind === 'create' && change.record.id === id);
      if (mine) return mine.record;
      // A 422 needs nothing written out: the change that took the name is committed, and readers finish it.
      if (taken) return (await stillAt(seen)) ? ('name-taken' as const) : RETRY_NOW;
      if ((await settled) === 'wait') return LOST_ROUND;
      const createdAt = now();
      if ((seen.head.windows.get(windowOf(createdAt)) ?? 0) >= WINDOW_CAPACITY) {
        await sleep(WINDOW_MS - (Date.now() % WINDOW_MS));
        return RETRY_NOW;
      }
      const record: ReservedTagKey = { id, organization, ...attributes, createdAt, updatedAt: createdAt };
      const committed = await commit(seen, { kind: 'create', record }, { delta: 1 });
      if (typeof committed === 'object') return committed.record;
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
    },
    { extraMsPerAttempt: CLAIM_TIMEOUT_MS },
  );
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
    { delta: 0 },
  );
  return typeof committed === 'object' ? committed.record : 'gone';
}

/** Deletes the key; 'gone' when it was deleted, or changed by another write meanwhile (read it again). */
export async function deleteStoredReservedTagKey(current: ReservedTagKey): Promise<undefined | WriteRefusal> {
  const { seen, key, wait } = await atKnownHead(current);
  if (!key || wait) return 'gone';
  const windowGoes = (seen.head.windows.get(windowOf(key.createdAt)) ?? 0) <= 1;
  const committed = await commit(seen, { kind: 'delete', record: key }, { delta: -1, windowGoes });
  return typeof committed === 'object' ? undefined : 'gone';
}
