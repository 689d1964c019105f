import type { HttpMethod } from '#shared/routes';

/** What a scenario needs from the target: an organization the token owns and a run in it. */
export interface Fixture {
  organization: string;
  runId: string;
  /** Keys the update scenario cycles through (one per connection, so updates rarely contend). */
  keyIds: string[];
  /** Keys the delete scenario may delete, each once. */
  deletable: string[];
  commentId: string;
}

export interface ScenarioRequest {
  method: HttpMethod;
  /** Under /api/v2. */
  path: string;
  body?: unknown;
}

/**
 * A realistic request mix for one function, shared by the load test (over HTTP) and the bench
 * (in-process). `budget` is the function's DynamoDB round-trip budget from docs/design.md.
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
    budget: 1,
    request: (f) => ({ method: 'GET', path: `/organizations/${f.organization}/reserved-tag-keys` }),
  },
  'reserved-tag-keys/create': {
    budget: 1,
    request: (f, n, unique) => ({
      method: 'POST', path: `/organizations/${f.organization}/reserved-tag-keys`, body: keyDocument({ key: `load-${unique}-${n}` }),
    }),
  },
  'reserved-tag-keys/update': {
    budget: 2,
    request: (f, n) => ({
      // Each visit to a key flips its flag, so every request really changes something.
      method: 'PATCH', path: `/reserved-tag-keys/${f.keyIds[n % f.keyIds.length]}`,
      body: keyDocument({ 'disable-overrides': Math.floor(n / f.keyIds.length) % 2 === 0 }),
    }),
  },
  'reserved-tag-keys/delete': {
    budget: 2,
    consumesDeletable: true,
    request: (f) => ({ method: 'DELETE', path: `/reserved-tags/${f.deletable.pop()}` }),
  },
  'comments/list': { budget: 1, request: (f) => ({ method: 'GET', path: `/runs/${f.runId}/comments` }) },
  'comments/create': {
    budget: 1,
    request: (f, n, unique) => ({
      method: 'POST', path: `/runs/${f.runId}/comments`,
      body: { data: { type: 'comments', attributes: { body: `Load test ${unique} #${n}: plan reviewed, looks good.` } } },
    }),
  },
  'comments/show': { budget: 1, request: (f) => ({ method: 'GET', path: `/comments/${f.commentId}` }) },
};
