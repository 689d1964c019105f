import { describe, expect, it } from '@jest/globals';
import type { Principal } from '#shared/auth/principal';
import {
  jsonApiHandler,
  TIMEOUT_ANSWER_MARGIN_MS,
  type ApiRequest,
  type ApiResult,
  type HandlerOptions,
} from '#shared/http/handler';
import { COMMON_HEADERS } from '#shared/http/responses';
import { Forbidden } from '#shared/jsonapi/errors';
import { Contended } from '#shared/store/contention';
import { afterCommit } from '#shared/store/write-outcome';
import { commentDocument, keyDocument } from '../support/documents';
import {
  ACCEPT_JSON_API,
  authorizerContext,
  lambdaContext,
  proxyEvent,
  routeInvocation,
  type ProxyRequest,
} from '../support/lambda-events';

/**
 * The one middy chain every function gets (shared/http/handler.ts), on a real middy-wrapped
 * handler invoked with a proxy event: content negotiation, the request handed to the handler,
 * the answer's headers, and every failure shaped into the contract's error body.
 */

const JSON_API = 'application/vnd.api+json';
const JSON_API_TYPE: [string, string] = ['Content-Type', JSON_API];
const BEARER = 'Authorization: Bearer <token>';
type Lines = Array<[string, string]>;
const sent = (...lines: Lines): Lines => [ACCEPT_JSON_API, ...lines];
const member: Principal = { subject: 'user-mia', tokenId: 'at-unitunitunitun', grants: { acme: 'member' } };
const memberContext = authorizerContext(member);

interface Invoked {
  status: number;
  headers: Record<string, unknown>;
  json: any;
  /** What the handler was given, when the chain called it. */
  request?: ApiRequest;
}

/** `functionName`'s route (its role and path) around `handle`, invoked once with `request`. */
async function invoke(
  functionName: string,
  request: Partial<ProxyRequest>,
  handle: (request: ApiRequest) => Promise<ApiResult> = async () => ({ status: 200, document: { data: [] } }),
  options: HandlerOptions = {},
  remainingMs?: number,
): Promise<Invoked> {
  let seen: ApiRequest | undefined;
  const handler = jsonApiHandler(
    functionName,
    (given) => {
      seen = given;
      return handle(given);
    },
    options,
  );
  const event = proxyEvent({ path: '/api/v2/x', headers: [ACCEPT_JSON_API], authorizer: memberContext, ...request });
  const response = await handler(event, lambdaContext(functionName, remainingMs));
  return {
    status: response.statusCode,
    headers: response.headers ?? {},
    json: response.body ? JSON.parse(response.body) : undefined,
    ...(seen ? { request: seen } : {}),
  };
}

type Handle = (request: ApiRequest) => Promise<ApiResult>;
const COMMENTS: HandlerOptions = { bodyType: 'comments' };
const createComment = (request: Partial<ProxyRequest>, handle?: Handle) =>
  invoke('comments/create', { method: 'POST', path: '/api/v2/runs/run-x/comments', ...request }, handle, COMMENTS);
const listKeys = (request: Partial<ProxyRequest> = {}, handle?: Handle) =>
  invoke('reserved-tag-keys/list', { path: '/api/v2/organizations/acme/reserved-tag-keys', ...request }, handle);
const error = (status: number, title: string, detail?: string) => ({
  errors: [{ status: String(status), title, ...(detail === undefined ? {} : { detail }) }],
});
const commentBody = JSON.stringify(commentDocument('Looks good'));

describe('the answer', () => {
  it("carries the contract headers, the JSON:API type and API Gateway's request id in X-Request-Id", async () => {
    const event = proxyEvent({ path: '/api/v2/x', headers: [ACCEPT_JSON_API], authorizer: memberContext });
    const handler = jsonApiHandler('reserved-tag-keys/list', async () => ({ status: 200, document: { data: [] } }));
    const response = await handler(event, lambdaContext('reserved-tag-keys/list'));
    expect(response).toEqual({
      statusCode: 200,
      headers: { ...COMMON_HEADERS, 'Content-Type': JSON_API, 'X-Request-Id': event.requestContext.requestId },
      body: '{"data":[]}',
    });
  });

  it("has no body and no Content-Type for a 204, and a handler's own headers beside the contract's", async () => {
    const empty = await invoke('ping', { authorizer: null }, async () => ({ status: 204 }));
    expect([empty.status, empty.json, empty.headers['Content-Type']]).toEqual([204, undefined, undefined]);
    expect(empty.headers).toMatchObject(COMMON_HEADERS);
    const replayed = await createComment(
      { headers: [ACCEPT_JSON_API, JSON_API_TYPE], body: commentBody },
      async () => ({ status: 201, document: { data: {} }, headers: { 'Idempotent-Replayed': 'true' } }),
    );
    expect(replayed.headers).toMatchObject({ ...COMMON_HEADERS, 'Idempotent-Replayed': 'true' });
  });
});

describe('content negotiation, before the handler runs', () => {
  it('answers 406 for an Accept that allows no JSON', async () => {
    const answer = await listKeys({ headers: [['Accept', 'text/html']] });
    expect([answer.status, answer.json, answer.request]).toEqual([
      406,
      error(406, 'not acceptable', 'responses are application/vnd.api+json'),
      undefined,
    ]);
  });

  it('answers 400 for an include, naming what cannot be included', async () => {
    const answer = await listKeys({ path: '/api/v2/organizations/acme/reserved-tag-keys?include=organization' });
    expect(answer.status).toBe(400);
    expect(answer.json.errors[0].detail).toMatch(/^Invalid include parameter: organization cannot be included/);
    expect(answer.request).toBeUndefined();
  });

  it.each([
    ['text/plain', 'Content-Type must be application/vnd.api+json (application/json is accepted too), not text/plain'],
    [
      'application/vnd.api+json; charset=utf-8',
      'media type parameter charset is not supported: application/vnd.api+json takes only ext and profile',
    ],
  ])('answers 415 for a body sent as %s, and never calls the handler', async (type, detail) => {
    const answer = await createComment({ headers: [ACCEPT_JSON_API, ['Content-Type', type]], body: commentBody });
    expect([answer.status, answer.json, answer.request]).toEqual([
      415,
      error(415, 'unsupported media type', detail),
      undefined,
    ]);
  });

  it('never answers 415 on a route that takes no body, whatever its Content-Type', async () => {
    expect((await listKeys({ headers: [ACCEPT_JSON_API, ['Content-Type', 'text/plain']] })).status).toBe(200);
  });

  it('takes application/json as JSON:API', async () => {
    const answer = await createComment({ headers: sent(['Content-Type', 'application/json']), body: commentBody });
    expect([answer.status, answer.request?.data]).toEqual([
      200,
      { type: 'comments', attributes: { body: 'Looks good' } },
    ]);
  });

  it.each([
    ['another type, then JSON:API', [['Content-Type', 'text/plain'], JSON_API_TYPE]],
    ['JSON:API, then another type spelled in lower case', [JSON_API_TYPE, ['content-type', 'text/plain']]],
  ] as Array<[string, Lines]>)('answers 400 for two different Content-Type headers (%s)', async (_, sentAlso) => {
    const answer = await createComment({ headers: sent(...sentAlso), body: commentBody });
    expect([answer.status, answer.json, answer.request]).toEqual([
      400,
      error(400, 'bad request', 'more than one Content-Type header: send exactly one'),
      undefined,
    ]);
  });

  it('takes the same Content-Type sent twice as one', async () => {
    expect((await createComment({ headers: sent(JSON_API_TYPE, JSON_API_TYPE), body: commentBody })).status).toBe(200);
  });
});

describe("each route's function (functions/*.ts) with an include", () => {
  const owner: Principal = { subject: 'user-olivia', tokenId: 'at-unitunitunitun', grants: { acme: 'owner' } };
  it.each([
    ['reserved-tag-keys/list', '/organizations/acme/reserved-tag-keys?include=organization', 'organization'],
    ['comments/list', '/runs/run-x/comments?include=run,created-by', 'run, created-by'],
    ['comments/show', '/comments/wsc-x?include=run', 'run'],
    ['reserved-tag-keys/create', '/organizations/acme/reserved-tag-keys?include=organization', 'organization'],
  ])(
    '%s answers 400 naming the path, with the contract headers, before it reads or writes anything',
    async (functionName, path, named) => {
      // A create sends a valid document: only the include is wrong.
      const body = functionName.endsWith('/create') ? { body: keyDocument('included') } : {};
      const { handler, event } = await routeInvocation({ function: functionName, path, principal: owner, ...body });
      // No table is set: a handler that ran would fail on the store, not answer 400.
      expect(await handler(event, lambdaContext(functionName))).toEqual({
        statusCode: 400,
        headers: { ...COMMON_HEADERS, 'Content-Type': JSON_API, 'X-Request-Id': event.requestContext.requestId },
        body: JSON.stringify(
          error(
            400,
            'bad request',
            `Invalid include parameter: ${named} cannot be included, this endpoint includes no related resources`,
          ),
        ),
      });
    },
  );
});

describe('the request the handler gets', () => {
  it('has the parsed document, the path and query parameters, the principal and the public URL', async () => {
    const answer = await invoke(
      'comments/create',
      {
        method: 'POST',
        path: '/api/v2/runs/run-x/comments?a=1',
        pathParameters: { run_id: 'run-x' },
        headers: sent(JSON_API_TYPE),
        body: commentBody,
        stageVariables: { publicAddress: 'https://tfc.example/' },
      },
      undefined,
      { bodyType: 'comments' },
    );
    expect(answer.request).toMatchObject({
      pathParameters: { run_id: 'run-x' },
      query: { a: '1' },
      principal: member,
      data: { type: 'comments', attributes: { body: 'Looks good' } },
      url: 'https://tfc.example/api/v2/runs/run-x/comments',
    });
  });

  it('reads a base64-encoded body (a binary media type) as UTF-8; one that is not UTF-8 is a 400', async () => {
    const base64 = (bytes: Buffer) => ({
      headers: sent(JSON_API_TYPE),
      body: bytes.toString('base64'),
      isBase64Encoded: true,
    });
    const encoded = await createComment(base64(Buffer.from(commentBody)));
    expect(encoded.request?.data.attributes).toEqual({ body: 'Looks good' });
    const [before, after] = commentBody.split('Looks good');
    const notUtf8 = Buffer.concat([Buffer.from(before!), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from(after!)]);
    const refused = await createComment(base64(notUtf8));
    expect([refused.status, refused.json, refused.request]).toEqual([
      400,
      error(400, 'bad request', 'request body is not valid UTF-8'),
      undefined,
    ]);
  });

  it('refuses two different Authorization headers, any spelling, with 401: an Allow cached for either', async () => {
    const answer = await listKeys({ headers: sent(['Authorization', 'Bearer a'], ['authorization', 'Bearer b']) });
    expect([answer.status, answer.json, answer.request]).toEqual([
      401,
      error(401, 'unauthorized', `more than one Authorization header: send exactly one ${BEARER}`),
      undefined,
    ]);
    const twice = await listKeys({ headers: sent(['Authorization', 'Bearer a'], ['Authorization', 'Bearer a']) });
    expect(twice.status).toBe(200);
  });

  it("authorizes by the route's role: 404 for an organization it cannot see, 403 below the role", async () => {
    const check =
      (organization: string) =>
      async (request: ApiRequest): Promise<ApiResult> => {
        request.authorize(organization);
        return { status: 204 };
      };
    expect((await listKeys({}, check('acme'))).status).toBe(204);
    expect((await listKeys({}, check('elsewhere'))).json).toEqual(error(404, 'not found'));
    const owner = await invoke('reserved-tag-keys/create', { method: 'POST' }, check('acme'));
    const below = 'this action requires the owner role in organization acme; the token has member';
    expect(owner.json).toEqual(error(403, 'forbidden', below));
  });

  it('gives a route without a role an anonymous principal, whatever the authorizer context holds', async () => {
    expect((await invoke('ping', { authorizer: null })).request?.principal).toEqual({
      subject: 'anonymous',
      tokenId: 'none',
      grants: {},
    });
  });
});

describe("failures, each shaped into the contract's error body with X-Request-Id", () => {
  const failing = (thrown: unknown) =>
    listKeys({}, async () => {
      throw thrown;
    });
  const throttled = Object.assign(new Error('Rate exceeded'), {
    name: 'ThrottlingException',
    $metadata: { httpStatusCode: 400 },
  });

  it('answers an ApiError with its own status and body', async () => {
    const answer = await failing(new Forbidden('not you'));
    expect([answer.status, answer.json]).toEqual([403, error(403, 'forbidden', 'not you')]);
    expect(answer.headers).toMatchObject({
      ...COMMON_HEADERS,
      'Content-Type': JSON_API,
      'X-Request-Id': expect.any(String),
    });
  });

  it('answers anything else with 500, never its message', async () => {
    const answer = await failing(new Error('secret table name'));
    expect([answer.status, answer.json]).toEqual([500, error(500, 'internal server error')]);
  });

  it('answers a store that is unavailable with 503 and Retry-After', async () => {
    const answer = await failing(throttled);
    expect([answer.status, answer.json, answer.headers['Retry-After']]).toEqual([
      503,
      error(503, 'service unavailable'),
      '1',
    ]);
  });

  it('answers a write whose outcome is unknown with 503 saying so, unavailable store or not', async () => {
    for (const cause of [new Error('socket hang up'), throttled]) {
      const answer = await failing(
        await afterCommit(async () => {
          throw cause;
        }).catch((e: unknown) => e),
      );
      expect([answer.status, answer.headers['Retry-After']]).toEqual([503, '1']);
      expect(answer.json.errors[0].detail).toMatch(
        /^The store did not confirm the write in time: its outcome is unknown\./,
      );
    }
  });

  it('answers a busy hot spot with 503 that says nothing was written', async () => {
    const answer = await failing(new Contended('run', { runId: 'run-x' }, 7, 2_000));
    expect([answer.status, answer.headers['Retry-After']]).toEqual([503, '1']);
    expect(answer.json).toEqual(
      error(
        503,
        'service unavailable',
        'The run is busy with other writes right now; this request waited its turn for as long as it could and wrote ' +
          'nothing. Retry it after Retry-After.',
      ),
    );
  });

  it("answers 504 shortly before the function's timeout when the handler has not answered", async () => {
    const started = Date.now();
    const answer = await invoke(
      'reserved-tag-keys/list',
      { path: '/api/v2/organizations/acme/reserved-tag-keys' },
      () => new Promise<never>(() => undefined),
      {},
      TIMEOUT_ANSWER_MARGIN_MS + 200,
    );
    expect([answer.status, answer.json]).toEqual([504, error(504, 'gateway timeout')]);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
