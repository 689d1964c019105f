import { getItem, type Item } from './collection';
import { currentTurn, LOST_ROUND, Pause, RETRY_NOW } from './contention';
import { Entity, keys } from './keys';
import { isRefused, writeOnce } from './single-write';
import { noteRead, remember, type SeenHead } from './tag-key-heads';
import { applyChange, headOf, spanAttribute, type Change, type Head } from './tag-key-log';
import { spansAfter, windowOf } from './tag-key-windows';
import { queuedCommit, stepAfter, type QueueOf, type Turn } from './turn-queue';
import { afterCommit } from './write-outcome';

/**
 * Committing a change of a reserved tag key on its organization's head: one conditional
 * UpdateItem that moves the head's version by one, holds the change as its `latest` (the one
 * before as its `prior`) and moves the counts of keys and of spans of creation time. The change is
 * written out after it (tag-key-log.ts). A refused commit leaves the head it found for the next
 * attempt; the writers of a busy organization take turns in the head's queue (turn-queue.ts).
 */

/** The change that moves the head from `head` to the next version, its write, and the head as that write leaves it. */
export function commitChange(head: Head, change: Omit<Change, 'version' | 'at'>, delta: 1 | -1 | 0, turn: Turn) {
  const next: Change = { ...change, version: head.version + 1, at: Date.now() };
  const queue = queuedCommit(turn);
  // The spans as they are after the change, set whole: the commit is at the head's version.
  const after = spansAfter(head.spans, head.lastWindow, windowOf(change.record.createdAt), delta);
  const changed = [...after.spans].filter(([start, count]) => head.spans.get(start) !== count);
  const gone = [...head.spans.keys()].filter((start) => !after.spans.has(start));
  const name = (start: number) => `#${spanAttribute(start)}`;
  const value = (start: number) => `:${spanAttribute(start)}`;
  const spans = changed.map(([start]) => `, ${name(start)} = ${value(start)}`).join('');
  const removed = gone.length === 0 ? '' : ` REMOVE ${gone.map(name).join(', ')}`;
  const counted = delta === 0 ? '' : ' ADD itemCount :delta';
  const headAfter: Head = {
    organization: head.organization,
    version: next.version,
    itemCount: head.itemCount + delta,
    ...after,
    latest: next,
    ...(head.latest ? { prior: head.latest } : {}),
  };
  return {
    change: next,
    head: headAfter,
    write: {
      Update: {
        Key: keys.reservedTagKeyCounter(head.organization),
        // The right-hand side reads the head as it was: its latest change becomes the prior.
        UpdateExpression: `SET entity = :entity, version = :version, #prior = if_not_exists(latest, :none), latest = :latest, lastWindow = :lastWindow${spans}${queue.set}${counted}${removed}${queue.clauses}`,
        ConditionExpression: `${head.version === 0 ? 'attribute_not_exists(version)' : 'version = :expected'} AND ${queue.condition}`,
        ExpressionAttributeNames: {
          '#prior': 'prior', // a reserved word
          ...Object.fromEntries(
            [...changed.map(([start]) => start), ...gone].map((start) => [name(start), spanAttribute(start)]),
          ),
        },
        ExpressionAttributeValues: {
          ':entity': Entity.ReservedTagKeyCounter,
          ':version': next.version,
          ':latest': next,
          ':none': null,
          ':lastWindow': after.lastWindow,
          ...Object.fromEntries(changed.map(([start, count]) => [value(start), count])),
          ...queue.values,
          ...(head.version === 0 ? {} : { ':expected': head.version }),
          ...(delta === 0 ? {} : { ':delta': delta }),
        },
      },
    },
  };
}

/** An organization's head as a queue of turns: a ticket never makes a head. */
const queueOf = (organization: string): QueueOf => ({
  record: keys.reservedTagKeyCounter(organization),
  owned: { condition: 'attribute_exists(PK)', values: {} },
  takeIn: (item: Item) => {
    const head = headOf(organization, item);
    remember(head);
    return head.latest?.at ?? 0;
  },
});

/** Whether commit's outcome is the change committed (not a round to try again in). */
export const isCommitted = (outcome: Change | typeof LOST_ROUND | typeof RETRY_NOW | Pause): outcome is Change =>
  typeof outcome === 'object' && !(outcome instanceof Pause);

/** A step in the head's queue, as whileContended takes it. */
async function round(organization: string, turn: Turn, item: Item | undefined) {
  const step = await stepAfter(queueOf(organization), turn, item ?? {});
  if (step === 'go') return RETRY_NOW;
  return typeof step === 'object' ? new Pause(step.ms) : LOST_ROUND;
}

/**
 * Commits `change` on the head as `seen` knows it: the change, written out, once committed;
 * otherwise the round to try again in (the refusal's head is remembered for the next attempt):
 * at once when it is this request's turn, after a pause when it knows its place in the head's
 * queue (turn-queue.ts: the writers of a busy organization take turns, as a busy run's do). A
 * request that paused reads the head again first, and commits in a later attempt.
 */
export async function commit(
  seen: SeenHead,
  change: Omit<Change, 'version' | 'at'>,
  delta: 1 | -1 | 0,
): Promise<Change | typeof LOST_ROUND | typeof RETRY_NOW | Pause> {
  const turn = currentTurn();
  turn.last = undefined;
  const organization = seen.head.organization;
  if (turn.readFirst) return round(organization, turn, await getItem(keys.reservedTagKeyCounter(organization)));
  const { change: next, head: committedHead, write } = commitChange(seen.head, change, delta, turn);
  const outcome = await writeOnce(write);
  // Another Region was writing the head: nothing changed in the queue, so try again.
  if (outcome === LOST_ROUND) return LOST_ROUND;
  if (isRefused(outcome)) return round(organization, turn, outcome.refused);
  turn.ticket = undefined;
  const committed = await afterCommit(async () => {
    await applyChange(next);
    return next;
  });
  const now = remember(committedHead, seen.appliedVersion, [next.version]);
  // The key as this change left it is the key at the head just remembered, unless a later commit of this process came first.
  if (now.head.version === next.version) noteRead(committed.record, committed.version);
  return committed;
}
