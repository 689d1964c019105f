import type { Item } from './collection';
import { pendingChangeOf, type Head } from './tag-key-log';
import type { ReservedTagKey } from '../reserved-tag-keys/reserved-tag-key';

/**
 * A reserved tag key's record: as one of its items holds it, and as it is at a head's version,
 * which its items may not show yet (the head's changes are written out after their commit).
 */

/** The record an item of a key holds, without the store's own attributes. */
export function keyRecord(item: Item): ReservedTagKey {
  return {
    id: item.id as string,
    organization: item.organization as string,
    key: item.key as string,
    disableOverrides: item.disableOverrides as boolean,
    createdAt: item.createdAt as string,
    updatedAt: item.updatedAt as string,
  };
}

/** The state of a key at the head's version: its copy as read after the head was, with the head's changes over it. */
export function atHead(head: Head, copy: ReservedTagKey | undefined): ReservedTagKey | undefined {
  const change = copy && pendingChangeOf(head, copy.id);
  if (!change) return copy;
  return change.kind === 'delete' ? undefined : change.record;
}
