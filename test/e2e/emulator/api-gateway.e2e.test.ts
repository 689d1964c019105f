import { describe, expect, it } from '@jest/globals';
import { serve, echo, allowAll, literal } from './fixture-stacks';
import type { FixtureApi } from '../../support/fixture-assembly';
import { expectWith } from '../../support/expect-with';
import type { LocalStack } from '#infra/local/local-stack';

/**
 * API Gateway (infra/local/aws/apigateway.ts): gateway responses, the REQUEST authorizer, limits,
 * failed and late integrations, per-method throttling. Each case runs on a hand-written template
 * that states exactly the configuration it exercises (fixture-stacks.ts).
 */
describe('API Gateway: gateway responses', () => {
  it('gives a status set on DEFAULT_4XX to every 4xx type not customized itself, and keeps a customized type its own', async () => {
    const stack = await serve({
      functions: { Echo: { code: echo } },
      methods: [
        { method: 'GET', path: '/things', function: 'Echo' },
        // A MOCK that refuses any body type but JSON: API Gateway's UNSUPPORTED_MEDIA_TYPE (415 by default).
        {
          method: 'POST',
          path: '/things',
          mock: {
            PassthroughBehavior: 'NEVER',
            RequestTemplates: literal('{"statusCode": 200}'),
            IntegrationResponses: [{ StatusCode: '200' }],
          },
        },
      ],
      gatewayResponses: [
        { type: 'DEFAULT_4XX', statusCode: '400', templates: literal('{"fallback":true}') },
        {
          type: 'MISSING_AUTHENTICATION_TOKEN',
          statusCode: '404',
          templates: literal('{"own":$context.error.messageString}'),
        },
      ],
    });
    const unsupported = await fetch(`${stack.url}/things`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/csv' },
      body: 'a,b',
    });
    expect(unsupported.status).toBe(400); // not 415: DEFAULT_4XX's status applies
    expect(await unsupported.json()).toEqual({ fallback: true });
    const unknown = await fetch(`${stack.url}/nowhere`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ own: 'Missing Authentication Token' });
  });

  it("keeps each type its default status when DEFAULT_4XX/5XX carry none, and answers with AWS's default body when nothing is customized", async () => {
    const stack = await serve({
      functions: { Echo: { code: echo } },
      methods: [
        {
          method: 'POST',
          path: '/things',
          mock: {
            PassthroughBehavior: 'NEVER',
            RequestTemplates: literal('{"statusCode": 200}'),
            IntegrationResponses: [{ StatusCode: '200' }],
          },
        },
      ],
      gatewayResponses: [{ type: 'DEFAULT_4XX', templates: literal('{"fallback":"$context.error.responseType"}') }],
    });
    const unsupported = await fetch(`${stack.url}/things`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/csv' },
      body: 'a,b',
    });
    expect(unsupported.status).toBe(415);
    expect(await unsupported.json()).toEqual({ fallback: 'UNSUPPORTED_MEDIA_TYPE' });

    const bare = await serve({
      functions: { Echo: { code: echo } },
      methods: [{ method: 'GET', path: '/things', function: 'Echo' }],
    });
    const missing = await fetch(`${bare.url}/nowhere`);
    expect(missing.status).toBe(403); // API Gateway's own answer for an unknown route
    expect(await missing.json()).toEqual({ message: 'Missing Authentication Token' });
  });
});

describe('API Gateway: the REQUEST authorizer', () => {
  const api = (ttlSeconds: number): FixtureApi => ({
    functions: { Echo: { code: echo }, Auth: { code: allowAll } },
    methods: [
      { method: 'GET', path: '/things', function: 'Echo', authorizer: true },
      { method: 'GET', path: '/other', function: 'Echo', authorizer: true },
    ],
    authorizer: { function: 'Auth', ttlSeconds },
  });

  it('caches a decision per identity-source value for its TTL and passes its context to the function', async () => {
    const stack = await serve(api(300));
    const context = async (path: string, token: string) =>
      ((await (await fetch(`${stack.url}${path}`, { headers: { Authorization: token } })).json()) as any).event
        .requestContext.authorizer;
    expect((await context('/things', 'a')).calls).toBe(1);
    expect((await context('/other', 'a')).calls).toBe(1); // cached: the policy covers both routes
    expect((await context('/things', 'b')).calls).toBe(2); // another identity: another call
    stack.gateway.flushAuthorizerCache();
    expect((await context('/things', 'a')).calls).toBe(3);
    expect(await context('/things', 'a')).toMatchObject({ principalId: 'user', expiresAt: 7 });
  });

  it('calls the authorizer every time with a TTL of 0, and answers 401 without calling it when the identity source is missing', async () => {
    const stack = await serve(api(0));
    const calls = async () =>
      ((await (await fetch(`${stack.url}/things`, { headers: { Authorization: 'a' } })).json()) as any).event
        .requestContext.authorizer.calls;
    expect(await calls()).toBe(1);
    expect(await calls()).toBe(2);
    const missing = await fetch(`${stack.url}/things`);
    expect(missing.status).toBe(401);
    expect(await calls()).toBe(3);
  });

  it('maps a Deny to ACCESS_DENIED, `Unauthorized` to UNAUTHORIZED and any other error to AUTHORIZER_FAILURE', async () => {
    const stack = await serve(api(300));
    const status = async (token: string) =>
      (await fetch(`${stack.url}/things`, { headers: { Authorization: token } })).status;
    expect(await status('deny')).toBe(403);
    expect(await status('reject')).toBe(401);
    expect(await status('fail')).toBe(500);
  });

  it("fills a gateway response template's $context.authorizer.<key> from the Deny's context, cached or not, with the status set on the response", async () => {
    const stack = await serve({
      ...api(300),
      gatewayResponses: [
        {
          type: 'ACCESS_DENIED',
          statusCode: '401',
          templates: literal('{"why":"$context.authorizer.why","calls":$context.authorizer.calls}'),
        },
      ],
    });
    for (const _ of [1, 2]) {
      const response = await fetch(`${stack.url}/things`, { headers: { Authorization: 'deny' } });
      expect({ status: response.status, json: await response.json() }).toEqual({
        status: 401,
        json: { why: 'denied by the fixture', calls: 1 },
      });
    }
  });
});

describe('API Gateway and Lambda: limits', () => {
  it('answers 413 past the 10 MB payload limit without invoking the function', async () => {
    const stack = await serve({
      functions: { Echo: { code: echo } },
      methods: [{ method: 'POST', path: '/things', function: 'Echo' }],
    });
    const response = await fetch(`${stack.url}/things`, {
      method: 'POST',
      body: Buffer.alloc(10 * 1024 * 1024 + 1, 97),
    });
    expect(response.status).toBe(413);
    expect(stack.lambda.started.get('Echo')).toBeUndefined();
    expect((await fetch(`${stack.url}/things`, { method: 'POST', body: 'small' })).status).toBe(200);
  });

  it('ends an invocation past the function timeout as Lambda does (INTEGRATION_FAILURE, 502 when not customized; the next invocation cold)', async () => {
    const stack = await serve({
      functions: {
        Slow: {
          code: `export const handler = async (e) => { if (e.queryStringParameters?.wait) await new Promise((r) => setTimeout(r, 5000)); return { statusCode: 200, body: String(process.pid) }; };`,
          timeout: 1,
        },
      },
      methods: [{ method: 'GET', path: '/slow', function: 'Slow' }],
    });
    const warm = await (await fetch(`${stack.url}/slow`)).text();
    const started = Date.now();
    const timedOut = await fetch(`${stack.url}/slow?wait=1`);
    expect(timedOut.status).toBe(502);
    expect(Date.now() - started).toBeLessThan(4000);
    const after = await (await fetch(`${stack.url}/slow`)).text();
    expect(after).not.toBe(warm); // the timed-out instance was stopped: a new process serves
    expect(stack.lambda.started.get('Slow')).toBe(2);
  });

  it('answers 504 when the integration outlasts its timeout', async () => {
    const stack = await serve({
      functions: {
        Slow: {
          code: `export const handler = async () => { await new Promise((r) => setTimeout(r, 3000)); return { statusCode: 200, body: '' }; };`,
          timeout: 10,
        },
      },
      methods: [{ method: 'GET', path: '/slow', function: 'Slow', timeoutMs: 500 }],
    });
    const response = await fetch(`${stack.url}/slow`);
    expect(response.status).toBe(504);
    expect(await response.json()).toEqual({ message: 'Endpoint request timed out' });
  });
});

/** Each case below failed before the emulator followed AWS on it (issue 22). */
describe('API Gateway: a failed integration is INTEGRATION_FAILURE, a late one INTEGRATION_TIMEOUT', () => {
  const failing = `
export const handler = async (event) => {
  const q = event.queryStringParameters ?? {};
  if (q.crash) throw new Error('boom');
  if (q.wait) await new Promise((r) => setTimeout(r, Number(q.wait)));
  if (q.bad) return 'not a proxy result';
  return { statusCode: 200, body: String(process.pid) };
};`;
  // The throttling cases hold an invocation for 2 s: a timeout of 5 s keeps a busy machine's cold start from
  // turning that one into a function timeout.
  const api = (gatewayResponses: FixtureApi['gatewayResponses'], timeout = 1): FixtureApi => ({
    functions: { Fails: { code: failing, timeout, properties: { ReservedConcurrentExecutions: 1 } } },
    methods: [
      { method: 'GET', path: '/fails', function: 'Fails' },
      { method: 'GET', path: '/late', function: 'Fails', timeoutMs: 300 },
    ],
    ...(gatewayResponses ? { gatewayResponses } : {}),
  });
  const customized = api([
    { type: 'INTEGRATION_FAILURE', statusCode: '504', templates: literal('{"type":"$context.error.responseType"}') },
    { type: 'DEFAULT_5XX', templates: literal('{"fallback":"$context.error.responseType"}') },
  ]);

  it('answers a function that throws, times out or answers no proxy result with the template’s INTEGRATION_FAILURE', async () => {
    const stack = await serve(customized);
    for (const query of ['crash=1', 'wait=1500', 'bad=1']) {
      const response = await fetch(`${stack.url}/fails?${query}`);
      expectWith(response.status, query).toBe(504);
      expect(await response.json()).toEqual({ type: 'INTEGRATION_FAILURE' });
    }
    // API Gateway's own integration timeout is the other type (here through DEFAULT_5XX, with its default 504).
    const late = await fetch(`${stack.url}/late?wait=800`);
    expect(late.status).toBe(504);
    expect(await late.json()).toEqual({ fallback: 'INTEGRATION_TIMEOUT' });
  });

  it('keeps the failure’s own status when INTEGRATION_FAILURE is not customized: 502 for a function error, 500 for an invocation Lambda refused', async () => {
    const stack = await serve(api(undefined, 5));
    const crashed = await fetch(`${stack.url}/fails?crash=1`);
    expect(crashed.status).toBe(502);
    expect(crashed.headers.get('x-amzn-errortype')).toBe('InternalServerErrorException');
    expect(await crashed.json()).toEqual({ message: 'Internal server error' });
    // A reservation of 1: a second invocation while one is in flight is throttled by Lambda. The
    // first holds it 2 s, so it is still in flight on a busy machine too.
    const [slow, throttled] = await Promise.all([
      fetch(`${stack.url}/fails?wait=2000`),
      new Promise((r) => setTimeout(r, 300)).then(() => fetch(`${stack.url}/fails`)),
    ]);
    expect(slow.status).toBe(200);
    expect(throttled.status).toBe(500);
    expect(await throttled.json()).toEqual({ message: 'Internal server error' });
    expect((await fetch(`${stack.url}/fails`)).status).toBe(200); // nothing in flight: served
  });

  it('answers an invocation Lambda throttles with the template’s INTEGRATION_FAILURE too', async () => {
    const stack = await serve(api(customized.gatewayResponses, 5));
    expect((await fetch(`${stack.url}/fails`)).status).toBe(200); // warm: the held invocation below starts at once
    const [slow, throttled] = await Promise.all([
      fetch(`${stack.url}/fails?wait=2000`),
      new Promise((r) => setTimeout(r, 300)).then(() => fetch(`${stack.url}/fails`)),
    ]);
    expect(slow.status).toBe(200);
    expect(throttled.status).toBe(504);
    expect(await throttled.json()).toEqual({ type: 'INTEGRATION_FAILURE' });
  });
});

describe('API Gateway: per-method throttling', () => {
  const throttled = (settings: unknown[]): FixtureApi => ({
    functions: { Echo: { code: echo } },
    methods: [
      { method: 'GET', path: '/limited', function: 'Echo' },
      { method: 'POST', path: '/limited', function: 'Echo' },
      { method: 'GET', path: '/free', function: 'Echo' },
    ],
    stage: { MethodSettings: settings },
  });

  it('applies a method’s own MethodSettings entry over the stage-wide one, field by field', async () => {
    const stack = await serve(
      throttled([
        // A token every 20 s: three requests in a row see no refill, even cold on a busy machine.
        { HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 0.05, ThrottlingBurstLimit: 100 },
        { HttpMethod: 'GET', ResourcePath: '/~1limited', ThrottlingBurstLimit: 2 }, // the stage's rate, its own burst
      ]),
    );
    const statuses = async (method: string, path: string, n: number) => {
      const all: number[] = [];
      for (let i = 0; i < n; i++)
        all.push((await fetch(`${stack.url}${path}`, { method, ...(method === 'POST' ? { body: '{}' } : {}) })).status);
      return all;
    };
    const limited = await statuses('GET', '/limited', 3);
    expect(limited).toEqual([200, 200, 429]);
    expect(await statuses('POST', '/limited', 5)).toEqual([200, 200, 200, 200, 200]); // another method, the stage's burst
    expect(await statuses('GET', '/free', 5)).toEqual([200, 200, 200, 200, 200]);
  });

  it('keeps a burst sized to the function’s reservation at the gateway (429), where a larger one meets Lambda’s throttle (5xx)', async () => {
    // A function reserved 4 executions, each request holding one for 1 s (none ends before the 8th
    // request arrives, on a busy machine too); 8 requests at once.
    const slow = `export const handler = async () => { await new Promise((r) => setTimeout(r, 1000)); return { statusCode: 200, body: '' }; };`;
    const burstOf = (burst: number) =>
      serve({
        functions: { Slow: { code: slow, properties: { ReservedConcurrentExecutions: 4 } } },
        methods: [{ method: 'GET', path: '/slow', function: 'Slow' }],
        stage: {
          MethodSettings: [
            { HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 0.05, ThrottlingBurstLimit: burst },
          ],
        },
      });
    const statuses = async (stack: LocalStack) =>
      (await Promise.all(Array.from({ length: 8 }, () => fetch(`${stack.url}/slow`)))).map((r) => r.status).sort();
    // burst + rate × 1 s = 3 + 0.05 ≤ 4: what the gateway lets through, Lambda runs. (A token every
    // 20 s: the 8 may arrive spread out on a busy machine and still find no refill.)
    expect(await statuses(await burstOf(3))).toEqual([200, 200, 200, 429, 429, 429, 429, 429]);
    // 8 + 1 > 4: past the reservation, Lambda refuses the rest (INTEGRATION_FAILURE, 500 when not customized).
    expect(await statuses(await burstOf(8))).toEqual([200, 200, 200, 200, 500, 500, 500, 500]);
  });

  it('refuses to start on a stage cache it does not emulate', async () => {
    await expect(serve(throttled([{ HttpMethod: '*', ResourcePath: '/*', CachingEnabled: true }]))).rejects.toThrow(
      /^API Gateway stage MethodSettings \/\* \*: caching is not emulated by the local stack$/,
    );
  });
});
