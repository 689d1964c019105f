import { getItem } from './collection';
import { commitComment, type NewComment } from './comment-commits';
import { asComment, heldBy, toRecord, writeOut } from './comment-items';
import { keys } from './keys';
import {
  beforeLookingAgain,
  claimReceipt,
  findClaim,
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
 * (comment-commits.ts), which numbers it, and its two items are written after it
 * (comment-items.ts); a page is a range of those numbers (comment-pages.ts). Here: finding a
 * comment or a run's organization, and creating a comment exactly once per receipt.
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
 * Writes the run's next comment, exactly once per receipt. The receipt is claimed first with the
 * comment's id (receipts.ts); a retry that finds the claim answers with that comment once it is
 * committed, and takes the claim over if its writer died before committing. 'run-not-found' when
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
  const claim = receipt && (await claimReceipt({ hotSpot: 'run', where: { runId: input.runId } }, receipt, id));
  if (claim) return resolveClaim(input, receipt!, claim);
  const seen = seenRun(input.runId);
  return underClaim(
    receipt,
    id,
    () =>
      commitComment(
        input,
        id,
        seen?.organization === input.organization && seen.commentCount !== undefined
          ? { ...seen, commentCount: seen.commentCount }
          : { organization: input.organization, commentCount: 0 },
      ),
    (written) => written === 'run-not-found',
  );
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
    // Most often the comment is written: its copy says so.
    const written = await findComment(claim.recordId);
    if (written) return replay(written);
    // Else the record first, then the copy again: a comment committed before the record was read
    // and no longer its latest has its copy written (the next commit wrote it out first).
    const run = await getItem(keys.run(input.runId));
    const committed = run && heldBy(run).find((held) => held.id === claim.recordId);
    if (committed) {
      await afterCommit(() => writeOut(committed, { patient: false }));
      return replay(asComment(committed));
    }
    const copy = await findComment(claim.recordId);
    if (copy) return replay(copy);
    if (!run) return 'run-not-found';
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
