import type { ApiRequest } from '../http/handler';
import type { Page } from '../jsonapi/document';
import { NotFound } from '../jsonapi/errors';
import type { PageRequest } from '../jsonapi/pagination';
import { isId } from '../ids';
import { findComment, insertComment, listStoredComments } from '../store/comments';
import { findRun } from '../store/runs';
import { validateCommentBody, type Comment } from './comment';
import { countMetric, METRIC } from '../observability/metrics';

/** Who is asking: the route's role check and the token's subject. */
export type Caller = Pick<ApiRequest, 'authorize' | 'principal'>;

/**
 * Comments are authorized through their run's organization. Anything the caller cannot see, a
 * run that is not registered and an id of the wrong shape are all the same 404 (the last without
 * asking the store).
 */

export async function listRunComments(runId: string | undefined, page: PageRequest, caller: Caller): Promise<Page<Comment>> {
  if (!isId('run', runId)) throw new NotFound();
  const found = await listStoredComments(runId, page);
  if (!found) throw new NotFound();
  caller.authorize(found.organization);
  runOrganizations.remember(runId, found.organization);
  return found.page;
}

export async function showComment(commentId: string | undefined, caller: Caller): Promise<Comment> {
  if (!isId('wsc', commentId)) throw new NotFound();
  const comment = await findComment(commentId);
  if (!comment) throw new NotFound();
  caller.authorize(comment.organization);
  runOrganizations.remember(comment.runId, comment.organization);
  return comment;
}

/** Authorized before anything is written: a forbidden or invalid request changes nothing. */
export async function createComment(runId: string | undefined, attributes: Record<string, unknown>, caller: Caller): Promise<Comment> {
  if (!isId('run', runId)) throw new NotFound();
  const organization = await organizationOfRun(runId);
  caller.authorize(organization);
  const body = validateCommentBody(attributes.body);
  const comment = await insertComment({ runId, organization, body, createdBy: caller.principal.subject });
  if (comment === 'run-not-found') {
    runOrganizations.forget(runId);
    throw new NotFound();
  }
  countMetric(METRIC.commentCreated, { commentId: comment.id, runId });
  return comment;
}

/** From this function's cache (a run's organization never changes), else one GetItem; 404 if unregistered. */
async function organizationOfRun(runId: string): Promise<string> {
  const cached = runOrganizations.get(runId);
  if (cached) return cached;
  const run = await findRun(runId);
  if (!run) throw new NotFound();
  runOrganizations.remember(runId, run.organization);
  return run.organization;
}

/** runId → organization for the life of a warm function; bounded, dropping the oldest entry first. */
const MAX_CACHED_RUNS = 10_000;
const cachedOrganizations = new Map<string, string>();
const runOrganizations = {
  get: (runId: string) => cachedOrganizations.get(runId),
  forget: (runId: string) => cachedOrganizations.delete(runId),
  remember(runId: string, organization: string) {
    if (cachedOrganizations.size >= MAX_CACHED_RUNS && !cachedOrganizations.has(runId)) {
      cachedOrganizations.delete(cachedOrganizations.keys().next().value!); // Maps iterate oldest first
    }
    cachedOrganizations.set(runId, organization);
  },
};
