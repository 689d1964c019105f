import { currentTurn, LOST_ROUND, RETRY_NOW } from './contention';
import { CLAIM_AFTER_MS, claimTurn, fairCommit, type Turn, type TurnNow } from './fair-turns';
import { Entity, keys } from './keys';
import { isRefused, writeOnce } from './single-write';
import { applied, noteRead, remember, type SeenHead } from './tag-key-heads';
import { applyChange, headOf, windowAttribute, type Change, type Head } from './tag-key-log';
import { afterCommit } from './write-outcome';

/**
 * Committing a change of a reserved tag key on its organization's head: one conditional
 * UpdateItem that moves the head's version by one, holds the change as its `latest` (the one
 * before as its `prior`) and moves the counts of keys and of creation windows. The change is
 * written out after it (tag-key-log.ts). A refused commit leaves the head it found for the next
 * attempt; the writers of a busy organization take turns (fair-turns.ts).
 */

/** The change that moves the head from `head` to the next version, and how the counts move. */
export function commitChange(
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
export async function commit(
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
  const now = remember(applied(seen.head, next), seen.appliedVersion, [next.version]);
  // The key as this change left it is the key at the head just remembered, unless a later commit of this process came first.
  if (now.head.version === next.version) noteRead(committed.record, committed.version);
  return committed;
}
