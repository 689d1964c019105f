import { getItem, type Item } from './collection';
import { keys } from './keys';
import { remember, type SeenHead } from './tag-key-heads';
import { pendingChangeOf, pendingOf, readHead, type Head, type KeyReceipt } from './tag-key-log';
import { keyRecord } from './tag-key-records';
import type { ReservedTagKey } from '../reserved-tag-keys/reserved-tag-key';

/**
 * Names unique within an organization, case aside. A guard item per lower-cased name says which key
 * took it, but a change the head holds may not be written out yet, and a guard left by a late write
 * of an old change may name a key that no longer has it: so a name is taken at a head's version,
 * and a refusal drawn from it holds only while the head has not moved.
 */

/** The live key that has a name, and the replay window receipt it was created under (if any). */
export interface NameOwner {
  record: ReservedTagKey;
  receipt?: KeyReceipt;
}

const receiptOf = (copy: Item): KeyReceipt | undefined =>
  typeof copy.receiptId === 'string' ? { id: copy.receiptId, until: copy.receiptUntil as number } : undefined;

const ownerOf = (record: ReservedTagKey, receipt: KeyReceipt | undefined): NameOwner =>
  receipt ? { record, receipt } : { record };

/**
 * The other live key whose name `key` is at the head's version: a change the head holds gave it
 * to its key, or (read after the head was observed) its guard names a key whose copy still has
 * that name. A guard left by a late write of an old change names a key that no longer has it.
 * `withReceipt`: also when its create is no longer held, for the receipt its copy keeps.
 */
export async function nameOwner(
  head: Head,
  key: string,
  { exceptId, withReceipt = false }: { exceptId?: string; withReceipt?: boolean } = {},
): Promise<NameOwner | undefined> {
  const lower = key.toLowerCase();
  const isOther = (id: string) => id !== exceptId;
  // The keys the head's changes made are as those changes left them, whatever their items say yet.
  for (const held of pendingOf(head)) {
    const change = pendingChangeOf(head, held.record.id)!;
    if (isOther(change.record.id) && change.kind !== 'delete' && change.record.key.toLowerCase() === lower) {
      const created = pendingOf(head).find((c) => c.kind === 'create' && c.record.id === change.record.id);
      if (created || !withReceipt) return ownerOf(change.record, created?.receipt);
      const copy = await getItem(keys.reservedTagKeyById(change.record.id));
      return ownerOf(change.record, copy && receiptOf(copy));
    }
  }
  const guard = await getItem(keys.reservedTagKeyName(head.organization, key));
  const owner = guard?.id as string | undefined;
  if (owner === undefined || !isOther(owner) || pendingChangeOf(head, owner)) return undefined;
  const copy = await getItem(keys.reservedTagKeyById(owner));
  if (copy === undefined || copy.deleted) return undefined;
  const record = keyRecord(copy);
  return record.key.toLowerCase() === lower ? ownerOf(record, receiptOf(copy)) : undefined;
}

/** Whether `key` is another live key's name at the head's version (nameOwner). */
export const nameTaken = async (head: Head, key: string, exceptId?: string): Promise<boolean> =>
  (await nameOwner(head, key, { exceptId })) !== undefined;

/**
 * Whether the head is still the one `seen` observed: then whatever was read since (a guard, a
 * copy) is the state at it, and a refusal drawn from it (the name is taken) is the true answer.
 * A head known from before this request may be stale: the next attempt starts from the new one.
 */
export async function stillAt(seen: SeenHead): Promise<boolean> {
  const head = await readHead(seen.head.organization);
  if (head.version === seen.head.version) return true;
  remember(head);
  return false;
}
