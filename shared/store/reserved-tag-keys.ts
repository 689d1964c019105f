import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactGetCommand } from '@aws-sdk/lib-dynamodb';
import { endOfPrefix, getItem, queryPrefix, querySortKeyRange, recordOf, type Item, type Listed, type Range } from './collection';
import { documentClient, tableName } from './client';
import { Entity, keys } from './keys';
import { receiptPut, replayFrom, type Receipt, type Replay } from './receipts';
import { transactWrite, transactWriteOnce } from './transactions';
import { LOST_ROUND, RETRY_NOW, whileContended } from './contention';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ReservedTagKey, ReservedTagKeyChanges } from '../reserved-tag-keys/reserved-tag-key';
import { newId, now } from '../ids';

/**
 * Reserved tag keys. Each key is three items, written and removed together in one transaction:
 * the member of its organization's counted collection (what lists read, ordered by creation
 * time, then id), a copy keyed by id (what PATCH and DELETE find it by) and a guard item per
 * lower-cased name (what makes names unique).
 *
 * The organization's counter item holds the number of keys and, per 100 ms window of creation
 * time, how many of the keys created in it still exist (at most WINDOW_CAPACITY: a create in a
 * full window waits for the next). A page after the first skips whole windows by their counts, so
 * it reads the counter and at most `limit + WINDOW_CAPACITY - 1` keys, at any depth; a page past
 * the end reads the counter alone.
 */

/** Why a write was refused, so the caller can answer with the right error. */
export type WriteRefusal = 'name-taken' | 'gone';

export const WINDOW_MS = 100;
export const WINDOW_CAPACITY = 100;

const toRecord = (item: Item) => recordOf<ReservedTagKey>(item);

const memberKey = (record: ReservedTagKey) => keys.reservedTagKey(record.organization, record.createdAt, record.id);
const nameKey = (record: { organization: string; key: string }) => keys.reservedTagKeyName(record.organization, record.key);
const item = (record: ReservedTagKey) => ({ entity: Entity.ReservedTagKey, ...record });

/** The counter's attribute counting the live keys created in `createdAt`'s window. */
const windowOf = (createdAt: string) => `w${Math.floor(Date.parse(createdAt) / WINDOW_MS)}`;
const WINDOW_ATTRIBUTE = /^w(\d+)$/;

/**
 * A range of the organization's keys, oldest first, with their total. The first page is one
 * Query (the counter sorts first in the collection); a later one reads the counter, then the
 * range from the start of the window it begins in.
 */
export async function listReservedTagKeys(organization: string, range: Range): Promise<Listed<ReservedTagKey>> {
  const collection = keys.reservedTagKeys(organization);
  if (range.offset === 0) {
    const items = await queryPrefix(collection, 1 + range.limit);
    const counter = items[0]?.SK === collection.SKPrefix ? items.shift() : undefined;
    return { items: items.map(toRecord), totalCount: (counter?.itemCount as number | undefined) ?? 0 };
  }
  const counter = await getItem(keys.reservedTagKeyCounter(organization));
  const totalCount = (counter?.itemCount as number | undefined) ?? 0;
  const start = counter && range.offset < totalCount ? startOf(counter, range.offset) : undefined;
  if (!start) return { items: [], totalCount };
  const from = keys.reservedTagKey(organization, new Date(start.window * WINDOW_MS).toISOString(), '').SK;
  const members = await querySortKeyRange(collection.PK, from, endOfPrefix(`${collection.SKPrefix}#`), start.skip + range.limit);
  return { items: members.slice(start.skip).map(toRecord), totalCount };
}

/** The window the `offset`-th key (from 0) was created in, and how many keys of that window come before it. */
function startOf(counter: Item, offset: number): { window: number; skip: number } | undefined {
  const windows = Object.entries(counter)
    .flatMap(([name, count]) => {
      const window = WINDOW_ATTRIBUTE.exec(name)?.[1];
      return window === undefined ? [] : [{ window: Number(window), count: count as number }];
    })
    .sort((a, b) => a.window - b.window);
  let before = 0;
  for (const { window, count } of windows) {
    if (offset < before + count) return { window, skip: offset - before };
    before += count;
  }
  return undefined;
}

export async function findReservedTagKey(id: string): Promise<ReservedTagKey | undefined> {
  const found = await getItem(keys.reservedTagKeyById(id));
  return found ? toRecord(found) : undefined;
}

/** A key found for its delete: whether it is the last live key of its creation window, when known. */
export type KeyToDelete = ReservedTagKey & { lastInWindow?: boolean };

/**
 * The most counters read beside a key to delete (a caller owning more organizations lets the
 * delete guess): at DynamoDB's 400 KB per item, within the 4 MB one TransactGetItems may read.
 */
export const MAX_COUNTERS_READ = 9;

/**
 * A key by id for its delete, read in one TransactGetItems with the counters of `organizations`
 * (those where the caller may delete): when the key is of one of them, the counter says whether
 * it is the last of its creation window, and its delete is one transaction. Otherwise (or when the
 * read met a write of the counter in progress: a plain GetItem then) the delete guesses, and a key
 * created in the same 100 ms as another live one takes a second transaction.
 */
export async function findReservedTagKeyToDelete(id: string, organizations: readonly string[]): Promise<KeyToDelete | undefined> {
  if (organizations.length === 0 || organizations.length > MAX_COUNTERS_READ) return findReservedTagKey(id);
  let items: (Item | undefined)[];
  try {
    const { Responses = [] } = await documentClient.send(new TransactGetCommand({
      TransactItems: [keys.reservedTagKeyById(id), ...organizations.map(keys.reservedTagKeyCounter)].map((Key) => ({ Get: { TableName: tableName(), Key } })),
    }));
    items = Responses.map((response) => response?.Item);
  } catch (error) {
    if (!(error instanceof TransactionCanceledException)) throw error;
    return findReservedTagKey(id);
  }
  const [byId, ...counters] = items;
  if (!byId) return undefined;
  const key = toRecord(byId);
  const index = organizations.indexOf(key.organization);
  if (index === -1) return key;
  return { ...key, lastInWindow: Number(counters[index]?.[windowOf(key.createdAt)] ?? 0) <= 1 };
}

/**
 * One transaction: both copies, the name guard, the counter (whose window of the creation time
 * must have room) and the create's receipt if it has one, or nothing. A full window (over
 * WINDOW_CAPACITY creates in 100 ms) is retried in the next one.
 *
 * A receipt refuses a retried create with the key it recorded (see receipts.ts), found by the
 * request, never by the name. An Idempotency-Key's receipt answers with the first answer for its
 * 24 hours, whatever happened to the key since (as Stripe). A replay window's receipt answers with
 * the key as it is now, renamed or not (one GetItem); once the key is deleted, an identical create
 * makes a new key and takes the receipt over (Terraform replacing a key deletes it, then creates it
 * again, within seconds).
 */
export async function insertReservedTagKey(organization: string, attributes: Required<ReservedTagKeyChanges>): Promise<ReservedTagKey | WriteRefusal>;
export async function insertReservedTagKey(
  organization: string, attributes: Required<ReservedTagKeyChanges>, receipt: Receipt,
): Promise<ReservedTagKey | WriteRefusal | Replay<ReservedTagKey>>;
export async function insertReservedTagKey(
  organization: string, attributes: Required<ReservedTagKeyChanges>, receipt?: Receipt,
): Promise<ReservedTagKey | WriteRefusal | Replay<ReservedTagKey>> {
  const id = newId('rtk');
  /** A deleted key whose replay-window receipt this create may take over. */
  let replacing: string | undefined;
  return whileContended('organization', { organization }, async () => {
    const createdAt = now();
    const record: ReservedTagKey = { id, organization, ...attributes, createdAt, updatedAt: createdAt };
    const refused = await transactWriteOnce([
      { Put: { TableName: tableName(), Item: { ...nameKey(record), entity: Entity.ReservedTagKeyName, id: record.id }, ConditionExpression: 'attribute_not_exists(PK)' } },
      { Put: { TableName: tableName(), Item: { ...memberKey(record), ...item(record) }, ConditionExpression: 'attribute_not_exists(PK)' } },
      { Put: { TableName: tableName(), Item: { ...keys.reservedTagKeyById(record.id), ...item(record) }, ConditionExpression: 'attribute_not_exists(PK)' } },
      counterChange(record, 1),
      ...(receipt ? [receiptPut(receipt, record, replacing)] : []),
    ]);
    if (refused === LOST_ROUND) return LOST_ROUND;
    if (!refused) return record;
    if (refused[4]?.Code === 'ConditionalCheckFailed') {
      const replay = replayFrom<ReservedTagKey>(refused[4].Item);
      if (receipt!.keyed) return replay;
      const current = await findReservedTagKey(replay.replayOf.record.id);
      if (current) return { replayOf: { ...replay.replayOf, record: current } };
      // Deleted since: this identical create is a new one, and its receipt replaces the gone key's.
      replacing = replay.replayOf.record.id;
      return RETRY_NOW;
    }
    if (refused[0]?.Code === 'ConditionalCheckFailed') return 'name-taken';
    if (refused[3]?.Code !== 'ConditionalCheckFailed') throw new Error(`reserved tag key insert refused: ${refused.map((r) => r.Code).join(', ')}`);
    // The window is full: the next one has room.
    await sleep(WINDOW_MS - (Date.now() % WINDOW_MS));
    return LOST_ROUND;
  });
}

/**
 * Sets only the attributes that change, on both copies. A rename is conditioned on the key still
 * being the one read (its guard item moves with it); other changes only need the key to exist,
 * so concurrent updates of different attributes never refuse each other. 'gone': deleted or
 * renamed meanwhile, read it again.
 */
export async function updateStoredReservedTagKey(current: ReservedTagKey, changes: ReservedTagKeyChanges): Promise<ReservedTagKey | WriteRefusal> {
  const updated: ReservedTagKey = { ...current, ...changes, updatedAt: now() };
  const renamed = nameKey(updated).SK !== nameKey(current).SK;
  const set = { updatedAt: updated.updatedAt, ...changes };
  const names = Object.keys(set);
  const update = {
    UpdateExpression: `SET ${names.map((n) => `#${n} = :${n}`).join(', ')}`,
    ConditionExpression: changes.key === undefined ? 'attribute_exists(PK)' : '#key = :seenKey',
    ExpressionAttributeNames: Object.fromEntries(names.map((n) => [`#${n}`, n])),
    ExpressionAttributeValues: {
      ...Object.fromEntries(names.map((n) => [`:${n}`, set[n as keyof typeof set]])),
      ...(changes.key === undefined ? {} : { ':seenKey': current.key }),
    },
  };
  const refused = await transactWrite('organization', { organization: current.organization }, [
    ...(renamed
      ? [
          // The guard may already be this key's: a concurrent rename to another casing of the name.
          { Put: { TableName: tableName(), Item: { ...nameKey(updated), entity: Entity.ReservedTagKeyName, id: updated.id }, ConditionExpression: 'attribute_not_exists(PK) OR id = :id', ExpressionAttributeValues: { ':id': updated.id } } },
          { Delete: { TableName: tableName(), Key: nameKey(current), ConditionExpression: 'id = :id', ExpressionAttributeValues: { ':id': current.id } } },
        ]
      : []),
    { Update: { TableName: tableName(), Key: memberKey(current), ...update } },
    { Update: { TableName: tableName(), Key: keys.reservedTagKeyById(current.id), ...update } },
  ]);
  if (!refused) return updated;
  return renamed && refused[0]?.Code === 'ConditionalCheckFailed' ? 'name-taken' : 'gone';
}

/**
 * Removes all three items and decrements the counter; 'gone' when it was already deleted. The
 * key's window leaves the counter with its last key, so the counter holds only windows with live
 * keys (it would otherwise grow with every key ever created, up to DynamoDB's 400 KB item limit).
 * The first attempt expects what the read of the key found in the counter
 * (findReservedTagKeyToDelete): the window is 1, and goes, or above 1, and drops by one. Not
 * knowing, it expects the key alone in its window, as most keys are, and one created in the same
 * 100 ms as another takes a second transaction that expects others to remain. Two keys of one
 * window deleted at once may each find the other still there, then each be the last: every
 * attempt states which it expects, and one whose expectation failed tries the other, so the
 * window always goes with its last key.
 */
export async function deleteStoredReservedTagKey(current: KeyToDelete): Promise<undefined | WriteRefusal> {
  let lastInWindow = current.lastInWindow ?? true;
  return whileContended('organization', { organization: current.organization }, async () => {
    const refused = await transactWriteOnce([
      { Delete: { TableName: tableName(), Key: memberKey(current), ConditionExpression: 'attribute_exists(PK)' } },
      { Delete: { TableName: tableName(), Key: keys.reservedTagKeyById(current.id) } },
      { Delete: { TableName: tableName(), Key: nameKey(current), ConditionExpression: 'id = :id', ExpressionAttributeValues: { ':id': current.id } } },
      lastInWindow ? counterRelease(current) : counterChange(current, -1),
    ]);
    if (refused === LOST_ROUND) return LOST_ROUND;
    if (!refused) return undefined;
    if (refused.slice(0, 3).some((reason) => reason.Code === 'ConditionalCheckFailed')) return 'gone';
    lastInWindow = !lastInWindow;
    return RETRY_NOW;
  });
}

/** The organization's count and the count of the key's creation window; a create needs room in the window. */
function counterChange(record: ReservedTagKey, delta: 1 | -1) {
  return {
    Update: {
      TableName: tableName(),
      Key: keys.reservedTagKeyCounter(record.organization),
      UpdateExpression: 'SET entity = :entity ADD itemCount :delta, #window :delta',
      // A create needs room in its window; a delete that is not the window's last leaves others in it.
      ConditionExpression: delta > 0 ? 'attribute_not_exists(#window) OR #window < :capacity' : '#window > :one',
      ExpressionAttributeNames: { '#window': windowOf(record.createdAt) },
      ExpressionAttributeValues: { ':entity': Entity.ReservedTagKeyCounter, ':delta': delta, ...(delta > 0 ? { ':capacity': WINDOW_CAPACITY } : { ':one': 1 }) },
    },
  };
}

/** The counter without the last key of its window: the window goes too (refused when others remain in it). */
function counterRelease(record: ReservedTagKey) {
  return {
    Update: {
      TableName: tableName(),
      Key: keys.reservedTagKeyCounter(record.organization),
      UpdateExpression: 'SET entity = :entity ADD itemCount :minus REMOVE #window',
      ConditionExpression: '#window = :one',
      ExpressionAttributeNames: { '#window': windowOf(record.createdAt) },
      ExpressionAttributeValues: { ':entity': Entity.ReservedTagKeyCounter, ':minus': -1, ':one': 1 },
    },
  };
}
