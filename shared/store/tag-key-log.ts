import { getItem, type Item } from './collection';
import { whileItsWriterMayBeAtIt } from './write-out';
import { expiring, nowSeconds } from './expiry';
import { Entity, keys } from './keys';
import { writeDerived, type Write } from './single-write';
import type { ReservedTagKey } from '../reserved-tag-keys/reserved-tag-key';

/**
 * The change log of an organization's reserved tag keys. Every change of a key commits with one
 * conditional UpdateItem of the organization's head (keys.reservedTagKeyCounter), which holds its
 * last two changes (`latest`, `prior`). The key's guard, copy and member are derived from it and
 * written after it, member last, each conditioned on the version (`v`) of the change that wrote
 * it, and a delete leaves tombstones: a late or repeated write never undoes a later change. Why
 * two changes, and who writes out what: docs/design.md, "Commit points".
 */

export type ChangeKind = 'create' | 'update' | 'delete';

/**
 * The replay window's receipt a create was made under: its retry finds the key by its name (names
 * are unique) and answers with it while the window lasts, instead of claiming a receipt first.
 */
export interface KeyReceipt {
  id: string;
  /** Epoch seconds after which the key no longer answers for the receipt. */
  until: number;
}

/** A committed change: the key as it is after it (as it was, for a delete) and the name it had before. */
export interface Change {
  version: number;
  /** When it was committed (epoch ms, its writer's clock). */
  at: number;
  kind: ChangeKind;
  record: ReservedTagKey;
  /** An update's name before it, when the lower-cased name changed (its guard goes). */
  previousKey?: string;
  /** A create's replay window receipt, kept on the key's copy. */
  receipt?: KeyReceipt;
}

/**
 * A member's tombstone stays in its collection (pages read past it) until it expires: long
 * enough for any late write of the key's earlier changes (every call ends by its request's
 * deadline, 10 s) to meet it. Then the first page that meets it, or the sweeper, removes it.
 */
export const MEMBER_TOMBSTONE_SECONDS = 5 * 60;
/** A copy's tombstone outlives every receipt that may name the key (24 h), so a retry still finds what it created. */
export const COPY_TOMBSTONE_SECONDS = 25 * 60 * 60;

/** The organization's head as read: its version, counts and the two changes it holds. */
export interface Head {
  organization: string;
  version: number;
  itemCount: number;
  /** Live keys per span of creation time, by the span's first window (tag-key-windows.ts). */
  spans: Map<number, number>;
  /** The newest window a key was counted in: a new span starts past it. */
  lastWindow: number;
  /** The change of `version`, and the one before it. */
  latest?: Change;
  prior?: Change;
}

/** The changes the head holds, oldest first: the only ones that may be unwritten. */
export const pendingOf = (head: Head): Change[] => [head.prior, head.latest].filter((change) => change !== undefined);

/** The newest change the head holds of key `id`: the key as it is at the head's version. */
export const pendingChangeOf = (head: Head, id: string): Change | undefined =>
  pendingOf(head).findLast((change) => change.record.id === id);

const SPAN_ATTRIBUTE = /^w(\d+)$/;
/** The head's attribute that counts the span starting at `window`. */
export const spanAttribute = (window: number) => `w${window}`;

export function headOf(organization: string, item: Item | undefined): Head {
  const spans = new Map<number, number>();
  for (const [name, count] of Object.entries(item ?? {})) {
    const start = SPAN_ATTRIBUTE.exec(name)?.[1];
    if (start !== undefined && Number(count) > 0) spans.set(Number(start), Number(count));
  }
  return {
    organization,
    version: (item?.version as number | undefined) ?? 0,
    itemCount: (item?.itemCount as number | undefined) ?? 0,
    spans,
    // A head written before spans has no lastWindow: every key it counts is in a window of its own.
    lastWindow: (item?.lastWindow as number | undefined) ?? Math.max(-1, ...spans.keys()),
    ...(item?.latest ? { latest: item.latest as Change } : {}),
    ...(item?.prior ? { prior: item.prior as Change } : {}),
  };
}

export const readHead = async (organization: string) =>
  headOf(organization, await getItem(keys.reservedTagKeyCounter(organization)));

const guardKey = (organization: string, key: string) => keys.reservedTagKeyName(organization, key);
const memberKey = (record: ReservedTagKey) => keys.reservedTagKey(record.organization, record.createdAt, record.id);
export const memberSortKey = (record: ReservedTagKey) => memberKey(record).SK;

/** Write only over an older version of the item (or none). */
const OLDER = 'attribute_not_exists(PK) OR v < :v';
/** Change an existing item only if it is older. */
const EXISTING_OLDER = 'attribute_exists(PK) AND v < :v';

/**
 * Writes change `change`'s derived items, the member last: an applied change is one whose member
 * carries its version. Idempotent, and harmless when repeated late.
 */
export async function applyChange(change: Change): Promise<void> {
  const { record, version } = change;
  const where = { organization: record.organization };
  const write = (item: Write) => writeDerived('organization', where, item);
  const v = { ':v': version };
  const fields = { key: record.key, disableOverrides: record.disableOverrides, updatedAt: record.updatedAt };
  const set = (extra: Record<string, unknown>) => {
    const all = { ...fields, ...extra, v: version };
    return {
      UpdateExpression: `SET ${Object.keys(all)
        .map((name) => `#${name} = :${name}`)
        .join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(Object.keys(all).map((name) => [`#${name}`, name])),
      ExpressionAttributeValues: {
        ...Object.fromEntries(Object.entries(all).map(([name, value]) => [`:${name}`, value])),
        ...v,
      },
    };
  };
  const guard = () =>
    write({
      Put: {
        Item: {
          ...guardKey(record.organization, record.key),
          entity: Entity.ReservedTagKeyName,
          id: record.id,
          v: version,
        },
        ConditionExpression: OLDER,
        ExpressionAttributeValues: v,
      },
    });
  const releaseGuard = (key: string) =>
    write({
      Delete: {
        Key: guardKey(record.organization, key),
        ConditionExpression: 'id = :id AND v < :v',
        ExpressionAttributeValues: { ':id': record.id, ...v },
      },
    });
  const item = { entity: Entity.ReservedTagKey, ...record, v: version };
  switch (change.kind) {
    case 'create':
      await Promise.all([
        guard(),
        write({
          Put: {
            Item: {
              ...keys.reservedTagKeyById(record.id),
              ...item,
              created: record,
              ...(change.receipt ? { receiptId: change.receipt.id, receiptUntil: change.receipt.until } : {}),
            },
            ConditionExpression: OLDER,
            ExpressionAttributeValues: v,
          },
        }),
      ]);
      await write({
        Put: { Item: { ...memberKey(record), ...item }, ConditionExpression: OLDER, ExpressionAttributeValues: v },
      });
      return;
    case 'update':
      await Promise.all([
        ...(change.previousKey !== undefined ? [guard()] : []),
        write({ Update: { Key: keys.reservedTagKeyById(record.id), ConditionExpression: EXISTING_OLDER, ...set({}) } }),
      ]);
      // The old name's guard goes with the member: left behind (its writer died), it names a key
      // that no longer has the name, which whoever reads it checks (tag-key-names.ts, nameTaken).
      await Promise.all([
        write({ Update: { Key: memberKey(record), ConditionExpression: EXISTING_OLDER, ...set({}) } }),
        ...(change.previousKey !== undefined ? [releaseGuard(change.previousKey)] : []),
      ]);
      return;
    case 'delete': {
      const copy = keys.reservedTagKeyById(record.id);
      const member = memberKey(record);
      await Promise.all([
        releaseGuard(record.key),
        write({
          Update: {
            Key: copy,
            ConditionExpression: EXISTING_OLDER,
            ...set({ deleted: true, ...expiring(copy.PK, nowSeconds() + COPY_TOMBSTONE_SECONDS) }),
          },
        }),
      ]);
      await write({
        Update: {
          Key: member,
          ConditionExpression: EXISTING_OLDER,
          ...set({ deleted: true, ...expiring(member.PK, nowSeconds() + MEMBER_TOMBSTONE_SECONDS) }),
        },
      });
    }
  }
}

/** The version of the change a key's member last carried; -1 when there is none. */
const memberVersion = async (record: ReservedTagKey) =>
  ((await getItem(keys.reservedTagKey(record.organization, record.createdAt, record.id)))?.v as number | undefined) ??
  -1;

/**
 * Writes out the changes the head holds of key `id`, in order. A delete alone: it undoes what
 * came before it, and a create written after its key's delete was swept would bring the key back.
 */
export async function writeOutKey(head: Head, id: string): Promise<void> {
  const changes = pendingOf(head).filter((change) => change.record.id === id);
  const newest = changes.at(-1);
  for (const change of newest?.kind === 'delete' ? [newest] : changes) await applyChange(change);
}

/**
 * Writes out `change`, one the head holds, unless its key's member carries it (the member is
 * written last: when it does, so does everything else). 'wait' while its own writer may still be
 * at it (`patient`), true once it is out.
 */
export async function writeOut(head: Head, change: Change, patient: boolean): Promise<true | 'wait'> {
  const written = async () => (await memberVersion(change.record)) >= change.version;
  if (await written()) return true;
  // Its writer is at it: look again shortly rather than write the same items, or lose a round.
  const within = patient ? await whileItsWriterMayBeAtIt(change.at ?? 0, written) : false;
  if (within === 'wait') return 'wait';
  if (!within) await writeOutKey(head, change.record.id);
  return true;
}
