import { getItem, queryPrefix, type Item } from '#shared/store/collection';
import { keys, organizationPartition } from '#shared/store/keys';
import { headOf } from '#shared/store/tag-key-log';
import { spanOf, WINDOW_CAPACITY, windowOf } from '#shared/store/tag-key-windows';
import type { ReservedTagKey } from '#shared/reserved-tag-keys/reserved-tag-key';

/** The record a key's items hold, and the version of the change that wrote it. */
const recordOf = (item: Item) => {
  const { id, organization, key, disableOverrides, createdAt, updatedAt, v } = item;
  return { id, organization, key, disableOverrides, createdAt, updatedAt, v };
};

/**
 * An organization's reserved tag keys as stored, and every way the items disagree: the head's
 * count and spans of creation time, each live key's copy by id and its name guard. After any race
 * whose writers all finished, a serial order of the requests leaves `problems` empty. (Tombstones
 * of deleted keys are not keys.)
 */
export async function organizationState(organization: string): Promise<{ keys: ReservedTagKey[]; problems: string[] }> {
  const partition = await queryPrefix({ PK: organizationPartition(organization), SKPrefix: 'TAG' });
  const counter = partition.find((item) => item.SK === keys.reservedTagKeyCounter(organization).SK);
  const members = partition.filter((item) => String(item.SK).startsWith('TAGKEYS#') && !item.deleted) as Array<
    Item & ReservedTagKey
  >;
  const guards = partition.filter((item) => String(item.SK).startsWith('TAGNAME#'));
  const problems: string[] = [];
  if (((counter?.itemCount as number | undefined) ?? 0) !== members.length) {
    problems.push(`counter says ${String(counter?.itemCount)} keys, ${members.length} stored`);
  }
  const head = headOf(organization, counter);
  const counted = new Map<number | undefined, number>();
  for (const member of members) {
    const window = windowOf(member.createdAt);
    const span = spanOf(head.spans, window);
    counted.set(span, (counted.get(span) ?? 0) + 1);
    if (window > head.lastWindow) problems.push(`key ${member.id} is past the last window counted`);
    const copy = await getItem(keys.reservedTagKeyById(member.id));
    if (!copy || copy.deleted || JSON.stringify(recordOf(copy)) !== JSON.stringify(recordOf(member))) {
      problems.push(`key ${member.id} (${member.key}): its copy by id differs`);
    }
    const guard = guards.find((g) => g.SK === keys.reservedTagKeyName(organization, member.key).SK);
    if (guard?.id !== member.id)
      problems.push(`key ${member.id} (${member.key}): its name guard is ${String(guard?.id)}`);
  }
  for (const guard of guards) {
    if (!members.some((m) => m.id === guard.id)) problems.push(`guard ${String(guard.SK)} points to no key`);
  }
  for (const [span, count] of head.spans) {
    if (counted.get(span) !== count) problems.push(`span w${span} counts ${count}, holds ${counted.get(span) ?? 0}`);
    if (count > WINDOW_CAPACITY) problems.push(`span w${span} counts ${count}, over ${WINDOW_CAPACITY}`);
  }
  for (const [span, count] of counted) {
    if (span === undefined || !head.spans.has(span)) problems.push(`${count} keys are in no span the head counts`);
  }
  return {
    keys: members.map((member) => {
      const { v: _v, ...record } = recordOf(member);
      return record as ReservedTagKey;
    }),
    problems,
  };
}
