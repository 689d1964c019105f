import type { ApiRequest } from '../http/handler';
import { NotFound } from '../jsonapi/errors';
import type { Listed, Range } from '../store/collection';
import { isId } from '../ids';
import { findComment, findRunOrganization, insertComment, listStoredComments } from '../store/comments';
import { validateCommentBody, type Comment } from './comment';
import { countMetric, METRIC } from '../observability/metrics';
import { isReplay, type Receipt } from '../store/receipts';
import { firstAnswer, replayed, type Created } from '../http/safe-retries';

/** Who is asking: the route's role check and the token's subject. */
export type Caller = Pick<ApiRequest, 'authorize' | 'principal'>;

/**
 * Comments are authorized through their run's organization. Anything the caller cannot see, a
 * run that is not registered and an id of the wrong shape are all the same 404 (the last without
 * asking the store).
 */

/** Whoever asks, the store reads at most one page (see listStoredComments) before this answers 404. */
export async function listRunComments(
  runId: string | undefined,
  range: Range,
  caller: Caller,
): Promise<Listed<Comment>> {
  if (!isId('run', runId)) throw new NotFound();
  const found = await listStoredComments(runId, range);
  if (!found) throw new NotFound();
  caller.authorize(found.organization, runId);
  return found.page;
}

export async function showComment(commentId: string | undefined, caller: Caller): Promise<Comment> {
  if (!isId('wsc', commentId)) throw new NotFound();
  const comment = await findComment(commentId);
  if (!comment) throw new NotFound();
  caller.authorize(comment.organization, comment.runId);
  return comment;
}

/**
 * Authorized before anything is written: a forbidden or invalid request changes nothing. A retry
 * of a create that committed (same receipt) gets the comment it made (see shared/http/safe-retries.ts).
 */
export async function createComment(
  runId: string | undefined,
  attributes: Record<string, unknown>,
  caller: Caller,
  receipt: Receipt,
): Promise<Created<Comment>> {
  if (!isId('run', runId)) throw new NotFound();
  // From what this function has already seen of the run, else one GetItem.
  const organization = await findRunOrganization(runId);
  if (!organization) throw new NotFound();
  caller.authorize(organization, runId);
  const body = validateCommentBody(attributes.body);
  const comment = await insertComment({ runId, organization, body, createdBy: caller.principal.subject }, receipt);
  if (isReplay<Comment>(comment)) return replayed(receipt, comment);
  if (comment === 'run-not-found') throw new NotFound();
  countMetric(METRIC.commentCreated, { commentId: comment.id, runId });
  return firstAnswer(comment);
}
