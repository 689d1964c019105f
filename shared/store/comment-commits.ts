import { LOST_ROUND, RETRY_NOW, whileContended } from './contention';
import { applyComment, asComment, heldBy, writeOut, type Prewritten } from './comment-items';
import { CLAIM_AFTER_MS, CLAIM_TIMEOUT_MS, claimTurn, fairCommit, newTurn, type TurnNow } from './fair-turns';
import { keys } from './keys';
import { inTurn } from './process-queue';
import { forget, runFrom, see, type Latest, type SeenRun } from './run-cache';
import { isRefused, writeOnce } from './single-write';
import { afterCommit } from './write-outcome';
import type { Comment } from '../comments/comment';

/**
 * A comment commits with one conditional UpdateItem of the run's record: the count goes from n-1
 * to n, and the record holds the comment as its `latest` and the one before as its `prior`. Only
 * those two can be unwritten (comment-items.ts): the commit that drops one from the record writes
 * it out first if its writer has not. Two, not one, so a busy run's next commit need not wait for
 * the last comment's writes. A writer that dies before its commit leaves nothing a reader can see:
 * what it wrote before (comment-items.ts, prewrite) counts only once committed.
 */

export interface NewComment {
  runId: string;
  organization: string;
  body: string;
  createdBy: string;
}

/** What a commit knows of the run before it tries: its count, latest time and held comments, and how far it is written out. */
export type Expected = SeenRun & { commentCount: number };

/**
 * Commits comment `id` as the run's next: one conditional UpdateItem of the run's record per
 * attempt, conditioned on the count `expected` and on the organization. The commit drops the
 * record's `prior` comment (its `latest` becomes the new `prior`), so that one is written out
 * first. A refused attempt carries the record as it is now, and the next attempt takes the number
 * after it. Writers in one process take turns per run; across processes, fairly (fair-turns.ts).
 * Each comment's time is after its predecessor's, so creation time orders a run's comments as
 * their numbers do.
 */
export function commitComment(
  input: NewComment,
  id: string,
  expectedAtStart: Expected,
  prewritten?: Prewritten,
): Promise<Comment | 'run-not-found'> {
  return inTurn(input.runId, () => {
    let expected = expectedAtStart;
    const turn = newTurn();
    return whileContended(
      'run',
      { runId: input.runId },
      async () => {
        const dropped = expected.prior;
        if (dropped && dropped.number > (expected.writtenThrough ?? 0)) {
          if ((await writeOut(dropped)) === 'wait') return LOST_ROUND;
          expected = { ...expected, writtenThrough: dropped.number };
        }
        const number = expected.commentCount + 1;
        const latest = prewritten?.latest.number === number ? prewritten.latest : attemptOf(input, id, expected);
        const count =
          number === 1
            ? '(attribute_not_exists(commentCount) OR commentCount = :expected)'
            : 'commentCount = :expected';
        const fair = fairCommit(turn);
        const outcome = await writeOnce({
          Update: {
            Key: keys.run(input.runId),
            // The right-hand side reads the record as it was: its latest comment becomes the prior.
            UpdateExpression: `SET commentCount = :number, lastCommentAt = :createdAt, #prior = if_not_exists(latest, :none), latest = :latest${fair.remove}`,
            ConditionExpression: `organization = :organization AND ${count} AND ${fair.condition}`,
            ExpressionAttributeNames: { '#prior': 'prior' }, // a reserved word
            ExpressionAttributeValues: {
              ':number': number,
              ':expected': number - 1,
              ':createdAt': latest.createdAt,
              ':latest': latest,
              ':none': null,
              ':organization': input.organization,
              ...fair.values,
            },
          },
        });
        if (outcome === 'written') {
          await afterCommit(() => applyComment(latest, prewritten));
          const writtenThrough = (expected.writtenThrough ?? 0) >= number - 1 ? number : expected.writtenThrough;
          see(input.runId, {
            organization: input.organization,
            commentCount: number,
            lastCommentAt: latest.createdAt,
            latest,
            ...(expected.latest ? { prior: expected.latest } : {}),
            writtenThrough,
          });
          return asComment(latest);
        }
        // Another Region was writing the record: the turn's holder goes again at once.
        if (!isRefused(outcome)) return turn.held ? RETRY_NOW : LOST_ROUND;
        const run = outcome.refused;
        if (run?.organization !== input.organization) {
          forget(input.runId);
          return 'run-not-found' as const;
        }
        // A retry that took over this comment's receipt committed it meanwhile.
        const mine = heldBy(run).find((held) => held.id === id);
        if (mine) {
          await afterCommit(() => applyComment(mine));
          return asComment(mine);
        }
        expected = runFrom(run, expected);
        see(input.runId, expected);
        const turnNow = run as TurnNow;
        // Still this writer's turn (an older writer took the number): the next one is its to take.
        turn.held = turnNow.turnSince === turn.since;
        if (turn.held) return RETRY_NOW;
        // Waited long enough, and no older writer waiting: claim the next turn, and take it at once.
        if (Date.now() - turn.since < CLAIM_AFTER_MS) return LOST_ROUND;
        return (await claimTurn(keys.run(input.runId), input.organization, turn, turnNow)) ? RETRY_NOW : LOST_ROUND;
      },
      { extraMsPerAttempt: CLAIM_TIMEOUT_MS },
    );
  });
}

/** The comment as an attempt commits it: the number after the count expected, and a time after its predecessor's. */
export const attemptOf = (input: NewComment, id: string, expected: Expected): Latest => ({
  id,
  ...input,
  createdAt: timeAfter(expected.lastCommentAt),
  number: expected.commentCount + 1,
});

/** Now, or one millisecond after `previous` when the clock has not passed it. */
function timeAfter(previous: string | undefined): string {
  const now = Date.now();
  const after = previous === undefined ? now : Math.max(now, Date.parse(previous) + 1);
  return new Date(after).toISOString();
}
