import { getItem } from './collection';
import { keys } from './keys';
import { remember, type SeenHead } from './tag-key-heads';
import { pendingChangeOf, pendingOf, readHead, type Head } from './tag-key-log';
import { keyRecord } from './tag-key-records';

/**
 * Names unique within an organization, case aside. A guard item per lower-cased name says which key
 * took it, but a change the head holds may not be written out yet, and a guard left by a late write
 * of an old change may name a key that no longer has it: so a name is taken at a head's version,
 * and a refusal drawn from it holds only while the head has not moved.
 */

/**
 * Whether `key` is another live key's name at the head's version: a change the head holds gave
 * it to its key, or (read after the head was observed) its guard names a key whose copy still has
 * that name. A guard left by a late write of an old change names a key that no longer has it.
 */
export async function nameTaken(head: Head, key: string, exceptId?: string): Promise<boolean> {
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
