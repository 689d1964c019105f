import { getItem, type Item } from './collection';
import { attemptOf, commitComment, type Expected, type NewComment } from './comment-commits';
import { asComment, discard, heldBy, isOf, prewrite, toRecord, writeOut, type Prewritten } from './comment-items';
import { keys } from './keys';
import {
  beforeLookingAgain,
  claimReceipt,
  findClaim,
  gaveUp,
  underClaim,
  takeOverClaim,
  type Claim,
  type Receipt,
  type Replay,
} from './receipts';
import { runFrom, see, seenRun, seeRunItem } from './run-cache';
import { afterCommit } from './write-outcome';
import type { Comment } from '../comments/comment';
import { newId } from '../ids';

/**
 * Comments on runs: what the rest of the code calls. Each comment commits on its run's record
 * (comment-commits.ts), which numbers it; its two items are written before it where they can be,
 * else after it (comment-items.ts); a page is a range of those numbers (comment-pages.ts). Here:
 * finding a comment or a run's organization, and creating a comment exactly once per receipt.
 */

export { commentItems } from './comment-items';
export type { NewComment } from './comment-commits';
export { listStoredComments } from './comment-pages';

/**
 * The run's organization, from what this process has seen (a run's organization never changes)
 * or one GetItem, which also tells the next insert the run's count; undefined when not registered.
 */
export async function findRunOrganization(runId: string): Promise<string | undefined> {
  const seen = seenRun(runId);
  if (seen) return seen.organization;
  const run = await getItem(keys.run(runId));
  if (!run) return undefined;
  seeRunItem(runId, run);
  return run.organization as string;
}

export async function findComment(commentId: string): Promise<Comment | undefined> {
  const found = await getItem(keys.comment(commentId));
  if (!found) return undefined;
  const comment = toRecord(found);
  if (!seenRun(comment.runId)) see(comment.runId, { organization: comment.organization });
  return comment;
}

/**
 * Writes the run's next comment, exactly once per receipt. The receipt is claimed with the
 * comment's id (receipts.ts), beside the comment's items, before the commit; a retry that finds
 * the claim answers with that comment once it is committed, and takes the claim over if its
 * writer died before committing. 'run-not-found' when
 * the run is not registered in that organization; throws Contended (nothing written) when the
 * run stayed busy for longer than the request can wait, ClaimPending when an earlier attempt of
 * the same create still holds the receipt.
 */
export async function insertComment(input: NewComment): Promise<Comment | 'run-not-found'>;
export async function insertComment(
  input: NewComment,
  receipt: Receipt,
): Promise<Comment | 'run-not-found' | Replay<Comment>>;
export async function insertComment(
  input: NewComment,
  receipt?: Receipt,
): Promise<Comment | 'run-not-found' | Replay<Comment>> {
  const id = newId('wsc');
  const seen = seenRun(input.runId);
  const expected: Expected =
    seen?.organization === input.organization && seen.commentCount !== undefined
      ? { ...seen, commentCount: seen.commentCount }
      : { organization: input.organization, commentCount: 0 };
  const claiming = receipt && claimReceipt({ hotSpot: 'run', where: { runId: input.runId } }, receipt, id);
  // The comment's items go out with the claim: written where nothing is, they show only once committed.
  const prewritten = prewrite(attemptOf(input, id, expected));
  prewritten.catch(() => undefined);
  const claim = await claiming;
  if (claim) {
    await discard(await prewritten);
    return resolveClaim(input, receipt!, claim);
  }
  let written: Prewritten | undefined;
  try {
    const outcome = await underClaim(
      receipt,
      id,
      async () => {
        written = await prewritten;
        return commitComment(input, id, expected, written);
      },
      (refused) => refused === 'run-not-found',
    );
    if (outcome === 'run-not-found' && written) await discard(written);
    return outcome;
  } catch (error) {
    // Gave up before any commit: nothing of it is seen, and nothing of it is kept.
    if (gaveUp(error) && written) await discard(written);
    throw error;
  }
}

/**
 * Comment `id`'s copy if the comment committed, given the run's record as read just before and
 * not holding it: a copy whose member names it at its number (a create writes its copy before
 * it commits, for the number it expects).
 */
async function committedCopy(run: Item, id: string): Promise<Comment | undefined> {
  const copy = await getItem(keys.comment(id));
  if (!copy) return undefined;
  const number = copy.number as number | undefined;
  // Written without its number: by an earlier version of the store, after the comment's commit.
  if (number === undefined) return toRecord(copy);
  if (number > ((run.commentCount as number | undefined) ?? 0)) return undefined;
  const comment = toRecord(copy);
  return isOf(await getItem(keys.runComment(comment.runId, number)), comment) ? comment : undefined;
}

/**
 * A create that found its receipt claimed: another request with the same receipt. Its comment,
 * once committed; the same receipt for another request, a Replay the caller refuses (422); a claim
 * whose writer's lease has passed, taken over and committed by this request.
 */
async function resolveClaim(
  input: NewComment,
  receipt: Receipt,
  claim: Claim,
): Promise<Comment | 'run-not-found' | Replay<Comment>> {
  const replay = (record: Comment): Replay<Comment> => ({ replayOf: { fingerprint: claim.fingerprint, record } });
  if (claim.fingerprint !== receipt.fingerprint) return replay(undefined as unknown as Comment);
  for (;;) {
    // The record first, then the copy: a comment committed before the record was read and no
    // longer held by it is written out, its copy for the number it took.
    const run = await getItem(keys.run(input.runId));
    if (!run) return 'run-not-found';
    const committed = heldBy(run).find((held) => held.id === claim.recordId);
    if (committed) {
      await afterCommit(() => writeOut(committed, { patient: false }));
      return replay(asComment(committed));
    }
    const copy = await committedCopy(run, claim.recordId);
    if (copy) return replay(copy);
    if (Date.now() < claim.leaseUntil) {
      await beforeLookingAgain({ hotSpot: 'run', where: { runId: input.runId } }, claim);
      continue;
    }
    // Its writer can no longer commit: this request commits the same comment, once.
    if (await takeOverClaim(receipt, claim)) {
      return underClaim(
        receipt,
        claim.recordId,
        () => commitComment(input, claim.recordId, runFrom(run)),
        (written) => written === 'run-not-found',
      );
    }
    const now = await findClaim(receipt);
    if (!now) return insertComment(input, receipt);
    claim = now;
  }
}
