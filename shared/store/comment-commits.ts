import { getItem } from './collection';
import { currentTurn, LOST_ROUND, Pause, RETRY_NOW, whileContended } from './contention';
import { applyComment, asComment, heldBy, isOf, writeOut, type Prewritten } from './comment-items';
import { keys } from './keys';
import { inTurn } from './process-queue';
import { forget, runFrom, see, type Latest, type SeenRun } from './run-cache';
import { isRefused, writeOnce } from './single-write';
import { joinQueue, queuedCommit, stepAfter, waitedBehind, type QueueOf } from './turn-queue';
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
 * after it. Writers in one process take turns per run; across processes, in the run's queue
 * (turn-queue.ts).
 * Each comment's time is after its predecessor's, so creation time orders a run's comments as
 * their numbers do.
 */
/** What a step in the run's queue leaves for whileContended: try again (now, or after a pause), or no such run. */
type Step = typeof LOST_ROUND | typeof RETRY_NOW | Pause | 'run-not-found';

export function commitComment(
  input: NewComment,
  id: string,
  expectedAtStart: Expected,
  prewritten?: Prewritten,
): Promise<Comment | 'run-not-found'> {
  return inTurn(input.runId, async () => {
    let expected = expectedAtStart;
    const record = keys.run(input.runId);
    const queue: QueueOf = {
      record,
      owned: { condition: 'organization = :organization', values: { ':organization': input.organization } },
      takeIn: (run) => {
        expected = runFrom(run, expected);
        see(input.runId, expected);
        return Date.parse(expected.lastCommentAt ?? '') || 0;
      },
    };
    /** Writers were waiting when this process last saw the run: this one takes a ticket at once. */
    let joinFirst = expected.busy === true;
    /** A held comment this writer found written out while next in line: its commit may drop it unread. */
    let checked: string | undefined;
    /** What the writer's step in the run's queue leaves for whileContended. */
    const queued = async (step: Awaited<ReturnType<typeof joinQueue>>): Promise<Step> => {
      if (step === 'not-owned') return notFound(input.runId);
      if (step === 'conflict') return LOST_ROUND;
      if (step === 'go') return RETRY_NOW;
      // Next in line: the latest comment is the one its commit will drop. Known written out now,
      // the commit need not read it when its turn comes.
      const latest = expected.latest;
      if (step.nextInLine && latest && latest.id !== checked && latest.number > (expected.writtenThrough ?? 0))
        if (isOf(await getItem(keys.runComment(input.runId, latest.number)), latest)) checked = latest.id;
      return new Pause(step.ms);
    };
    return whileContended('run', { runId: input.runId }, async () => {
      // This writer's place in the run's queue, kept across its attempts (and left if it gives up).
      const turn = currentTurn();
      if (joinFirst) {
        joinFirst = false;
        return queued(await joinQueue(queue, turn));
      }
      if (turn.readFirst) {
        const run = await getItem(record);
        if (run?.organization !== input.organization) return notFound(input.runId);
        return queued(await stepAfter(queue, turn, run));
      }
      const dropped = expected.prior;
      if (dropped && dropped.number > (expected.writtenThrough ?? 0) && dropped.id !== checked) {
        if ((await writeOut(dropped)) === 'wait') return LOST_ROUND;
        expected = { ...expected, writtenThrough: dropped.number };
      }
      const number = expected.commentCount + 1;
      const latest = prewritten?.latest.number === number ? prewritten.latest : attemptOf(input, id, expected);
      const count =
        number === 1 ? '(attribute_not_exists(commentCount) OR commentCount = :expected)' : 'commentCount = :expected';
      const inQueue = queuedCommit(turn);
      const outcome = await writeOnce({
        Update: {
          Key: record,
          // The right-hand side reads the record as it was: its latest comment becomes the prior.
          UpdateExpression: `SET commentCount = :number, lastCommentAt = :createdAt, #prior = if_not_exists(latest, :none), latest = :latest${inQueue.set}${inQueue.clauses}`,
          ConditionExpression: `organization = :organization AND ${count} AND ${inQueue.condition}`,
          ExpressionAttributeNames: { '#prior': 'prior' }, // a reserved word
          ExpressionAttributeValues: {
            ':number': number,
            ':expected': number - 1,
            ':createdAt': latest.createdAt,
            ':latest': latest,
            ':none': null,
            ':organization': input.organization,
            ...inQueue.values,
          },
        },
      });
      if (outcome === 'written') {
        const busy = waitedBehind(turn);
        turn.ticket = undefined;
        await afterCommit(() => applyComment(latest, prewritten));
        const writtenThrough = (expected.writtenThrough ?? 0) >= number - 1 ? number : expected.writtenThrough;
        see(input.runId, {
          organization: input.organization,
          commentCount: number,
          lastCommentAt: latest.createdAt,
          latest,
          ...(expected.latest ? { prior: expected.latest } : {}),
          writtenThrough,
          busy,
        });
        return asComment(latest);
      }
      // Another Region was writing the record: nothing changed in the queue, so try again.
      if (!isRefused(outcome)) return LOST_ROUND;
      const run = outcome.refused;
      if (run?.organization !== input.organization) return notFound(input.runId);
      // A retry that took over this comment's receipt committed it meanwhile.
      const mine = heldBy(run).find((held) => held.id === id);
      if (mine) {
        await afterCommit(() => applyComment(mine));
        return asComment(mine);
      }
      return queued(await stepAfter(queue, turn, run));
    });
  });
}

function notFound(runId: string): 'run-not-found' {
  forget(runId);
  return 'run-not-found';
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
