import type { HttpMethod } from '#shared/routes';
import { SIGNATURE_HEADER, signatureOf } from '#shared/run-notifications/signature';

/** What a scenario needs from the target: an organization the token owns and a run in it. */
export interface Fixture {
  organization: string;
  runId: string;
  /**
   * The runs the create scenario spreads its comments over, in turn. A run's comments are numbered
   * as they are written, so creates on one run take turns; a busy organization comments on many runs.
   */
  commentRunIds: string[];
  /** Keys the update scenario cycles through (one per connection, so updates rarely contend). */
  keyIds: string[];
  /** Keys the delete scenario may delete, each once. */
  deletable: string[];
  commentId: string;
  /** The organization's run-notification secret (npm run admin -- notifications create). */
  notificationSecret: string;
}

export interface ScenarioRequest {
  method: HttpMethod;
  /** Under /api/v2. */
  path: string;
  /** A JSON:API document, sent as JSON; a string is sent as it is (what a signature covers). */
  body?: unknown;
  /** Beyond the token and the JSON:API content type every request carries; names in lower case, as they replace those. */
  headers?: Record<string, string>;
}

/** A request's body as sent: a string as it is (a signature covers those bytes), a document as JSON. */
export const bodyText = (request: ScenarioRequest) =>
  request.body === undefined
    ? undefined
    : typeof request.body === 'string'
      ? request.body
      : JSON.stringify(request.body);

/**
 * A realistic request mix for one function, shared by the load test (over HTTP) and the bench
 * (in-process). `budget` is the function's DynamoDB budget from docs/design.md ("Round-trip
 * budgets"), in calls as the bench counts them: the most a warm function sends for one request of
 * its scenario (calls sent together count one each).
 */
export interface Scenario {
  budget: number;
  /** The n-th request of a run; `unique` differs between runs so created names never collide. */
  request(fixture: Fixture, n: number, unique: string): ScenarioRequest;
  /** Deletes consume the fixture's `deletable` pool: the run ends when it is used up. */
  consumesDeletable?: boolean;
}

const keyDocument = (attributes: Record<string, unknown>) => ({ data: { type: 'reserved-tag-keys', attributes } });

/** Every function in the route table has one; a test checks that none is missing. */
export const scenarios: Record<string, Scenario> = {
  ping: { budget: 0, request: () => ({ method: 'GET', path: '/ping' }) },
  'reserved-tag-keys/list': {
    // Page 1: one Query, more only past the tombstones of keys deleted in the last 5 minutes.
    budget: 1,
    request: (f) => ({ method: 'GET', path: `/organizations/${f.organization}/reserved-tag-keys` }),
  },
  'reserved-tag-keys/create': {
    // The receipt's claim (PutItem) with the name's guard read alongside (GetItem), the commit
    // (UpdateItem of the head), the guard and the copy together (PutItem ×2), the member (PutItem):
    // 6 calls in 4 round trips; 7 when the instance does not know the head (GetItem with the claim).
    budget: 6,
    request: (f, n, unique) => ({
      method: 'POST',
      path: `/organizations/${f.organization}/reserved-tag-keys`,
      body: keyDocument({ key: `load-${unique}-${n}` }),
    }),
  },
  'reserved-tag-keys/update': {
    // The copy by id (GetItem), the commit (UpdateItem of the head), the copy and the member
    // (UpdateItem each). A rename adds the new guard and the old guard's release.
    budget: 4,
    request: (f, n) => ({
      // Each visit to a key flips its flag, so every request really changes something.
      method: 'PATCH',
      path: `/reserved-tag-keys/${f.keyIds[n % f.keyIds.length]}`,
      body: keyDocument({ 'disable-overrides': Math.floor(n / f.keyIds.length) % 2 === 0 }),
    }),
  },
  'reserved-tag-keys/delete': {
    // The copy by id (GetItem), the commit (UpdateItem of the head), the guard's release and the
    // copy's tombstone together (DeleteItem, UpdateItem), the member's tombstone (UpdateItem).
    budget: 5,
    consumesDeletable: true,
    request: (f) => ({ method: 'DELETE', path: `/reserved-tags/${f.deletable.pop()}` }),
  },
  'comments/list': { budget: 1, request: (f) => ({ method: 'GET', path: `/runs/${f.runId}/comments` }) },
  'comments/create': {
    // The receipt's claim (PutItem), the commit (UpdateItem of the run's record), the copy and the
    // member (PutItem each); one more (GetItem of the run) when the instance does not know the run.
    budget: 4,
    request: (f, n, unique) => ({
      method: 'POST',
      path: `/runs/${f.commentRunIds[n % f.commentRunIds.length]}/comments`,
      body: {
        data: { type: 'comments', attributes: { body: `Load test ${unique} #${n}: plan reviewed, looks good.` } },
      },
    }),
  },
  'comments/show': { budget: 1, request: (f) => ({ method: 'GET', path: `/comments/${f.commentId}` }) },
  'run-notifications/receive': {
    // Calls, not round trips: the secret and the run read together, then for a run not yet known its
    // record (PutItem, the commit) and its listing under the organization (PutItem, derived).
    budget: 4,
    request: (f, n, unique) => {
      // HCP Terraform announces a run several times (created, planning, applied…): a new run every fourth notification.
      const stage = (['run:created', 'run:planning', 'run:needs_attention', 'run:applied'] as const)[n % 4]!;
      const runId = `run-L${unique.slice(0, 6).padEnd(6, '0')}${String(Math.floor(n / 4)).padStart(9, '0')}`;
      const body = JSON.stringify({
        payload_version: 1,
        notification_configuration_id: 'nc-LoadLoadLoadLoad',
        run_url: null,
        run_id: runId,
        run_message: 'load test',
        run_created_at: new Date().toISOString(),
        run_created_by: 'load-user',
        workspace_id: 'ws-LoadLoadLoadLoad',
        workspace_name: 'load-workspace',
        organization_name: f.organization,
        notifications: [
          {
            message: stage,
            trigger: stage,
            run_status: stage.slice(4),
            run_updated_at: new Date().toISOString(),
            run_updated_by: 'load-user',
          },
        ],
      });
      return {
        method: 'POST',
        path: `/run-notifications/${f.organization}`,
        body,
        headers: {
          'content-type': 'application/json',
          [SIGNATURE_HEADER.toLowerCase()]: signatureOf(Buffer.from(body), f.notificationSecret),
        },
      };
    },
  },
};
