import { endOfPrefix, querySortKeyRange, type Item, type Listed, type Range } from './collection';
import { keys } from './keys';
import { remember } from './tag-key-heads';
import { hasExpired, nowSeconds } from './expiry';
import { headOf, memberSortKey, pendingChangeOf, pendingOf, readHead, writeOutKey, type Head } from './tag-key-log';
import { keyRecord } from './tag-key-records';
import { startOf, WINDOW_MS } from './tag-key-windows';
import { writeOnce } from './single-write';
import { repairing } from './write-outcome';
import type { ReservedTagKey } from '../reserved-tag-keys/reserved-tag-key';

/**
 * Pages of an organization's reserved tag keys. A page after the first starts at the span of
 * creation time it begins in (tag-key-windows.ts); a deleted key's member stays a while as a
 * tombstone, so a page reads on past tombstones, and removes those whose expiry has passed.
 */

/**
 * A range of the organization's live keys, oldest first, with their total. The first page is one
 * Query (the head sorts first in the collection); a later one reads the head, then the range from
 * the start of the span it begins in. Tombstones of recent deletes are skipped (reading on past
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
    const start = range.offset < head.itemCount ? startOf(head.spans, range.offset) : undefined;
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
