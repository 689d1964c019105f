import { request } from 'node:http';
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from '@jest/globals';
import { startLocalStack, type LocalStack } from '#infra/local/local-stack';
import { fixtureAssembly, type FixtureApi } from '../support/fixture-assembly';
import { expectWith } from '../support/expect-with';

/**
 * The local stack's fidelity to AWS's documented behaviour, each case on a hand-written template
 * that states exactly the configuration it exercises (the real stack's behaviour is tested in the
 * other e2e files, over the synthesized assembly).
 */
const stacks: Array<{ stack: LocalStack; remove(): void }> = [];
afterAll(async () => {
  for (const { stack, remove } of stacks) { await stack.close(); remove(); }
});

async function serve(api: FixtureApi): Promise<LocalStack> {
  const assembly = fixtureAssembly(api);
  const stack = await startLocalStack({
    assembly, dynamoDbEndpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB!, tableName: process.env.TABLE_NAME!, log: () => undefined,
  }).catch((error: unknown) => { assembly.remove(); throw error; });
  stacks.push({ stack, remove: assembly.remove });
  return stack;
}

const echo = `export const handler = async (event) => ({ statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ pid: process.pid, event }) });`;
const allowAll = `
let calls = 0;
export const handler = async (event) => {
  calls += 1;
  if (event.headers.Authorization === 'deny') return { principalId: 'x', policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Deny', Resource: '*' }] }, context: { why: 'denied by the fixture', calls } };
  if (event.headers.Authorization === 'fail') throw new Error('store unavailable');
  if (event.headers.Authorization === 'reject') throw new Error('Unauthorized');
  return { principalId: 'user', policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: event.methodArn.split('/').slice(0, 2).join('/') + '/*' }] }, context: { calls, expiresAt: 7 } };
};`;
const literal = (text: string) => ({ 'application/json': text });

describe('API Gateway: gateway responses', () => {
  it('gives a status set on DEFAULT_4XX to every 4xx type not customized itself, and keeps a customized type its own', async () => {
    const stack = await serve({
      functions: { Echo: { code: echo } },
      methods: [
        { method: 'GET', path: '/things', function: 'Echo' },
        // A MOCK that refuses any body type but JSON: API Gateway's UNSUPPORTED_MEDIA_TYPE (415 by default).
        { method: 'POST', path: '/things', mock: { PassthroughBehavior: 'NEVER', RequestTemplates: literal('{"statusCode": 200}'), IntegrationResponses: [{ StatusCode: '200' }] } },
      ],
      gatewayResponses: [
        { type: 'DEFAULT_4XX', statusCode: '400', templates: literal('{"fallback":true}') },
        { type: 'MISSING_AUTHENTICATION_TOKEN', statusCode: '404', templates: literal('{"own":$context.error.messageString}') },
      ],
    });
    const unsupported = await fetch(`${stack.url}/things`, { method: 'POST', headers: { 'Content-Type': 'text/csv' }, body: 'a,b' });
    expect(unsupported.status).toBe(400); // not 415: DEFAULT_4XX's status applies
    expect(await unsupported.json()).toEqual({ fallback: true });
    const unknown = await fetch(`${stack.url}/nowhere`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ own: 'Missing Authentication Token' });
  });

  it('keeps each type its default status when DEFAULT_4XX/5XX carry none, and answers with AWS\'s default body when nothing is customized', async () => {
    const stack = await serve({
      functions: { Echo: { code: echo } },
      methods: [{ method: 'POST', path: '/things', mock: { PassthroughBehavior: 'NEVER', RequestTemplates: literal('{"statusCode": 200}'), IntegrationResponses: [{ StatusCode: '200' }] } }],
      gatewayResponses: [{ type: 'DEFAULT_4XX', templates: literal('{"fallback":"$context.error.responseType"}') }],
    });
    const unsupported = await fetch(`${stack.url}/things`, { method: 'POST', headers: { 'Content-Type': 'text/csv' }, body: 'a,b' });
    expect(unsupported.status).toBe(415);
    expect(await unsupported.json()).toEqual({ fallback: 'UNSUPPORTED_MEDIA_TYPE' });

    const bare = await serve({ functions: { Echo: { code: echo } }, methods: [{ method: 'GET', path: '/things', function: 'Echo' }] });
    const missing = await fetch(`${bare.url}/nowhere`);
    expect(missing.status).toBe(403); // API Gateway's own answer for an unknown route
    expect(await missing.json()).toEqual({ message: 'Missing Authentication Token' });
  });
});

describe('API Gateway: the REQUEST authorizer', () => {
  const api = (ttlSeconds: number): FixtureApi => ({
    functions: { Echo: { code: echo }, Auth: { code: allowAll } },
    methods: [{ method: 'GET', path: '/things', function: 'Echo', authorizer: true }, { method: 'GET', path: '/other', function: 'Echo', authorizer: true }],
    authorizer: { function: 'Auth', ttlSeconds },
  });

  it('caches a decision per identity-source value for its TTL and passes its context to the function', async () => {
    const stack = await serve(api(300));
    const context = async (path: string, token: string) => ((await (await fetch(`${stack.url}${path}`, { headers: { Authorization: token } })).json()) as any).event.requestContext.authorizer;
    expect((await context('/things', 'a')).calls).toBe(1);
    expect((await context('/other', 'a')).calls).toBe(1); // cached: the policy covers both routes
    expect((await context('/things', 'b')).calls).toBe(2); // another identity: another call
    stack.gateway.flushAuthorizerCache();
    expect((await context('/things', 'a')).calls).toBe(3);
    expect(await context('/things', 'a')).toMatchObject({ principalId: 'user', expiresAt: 7 });
  });

  it('calls the authorizer every time with a TTL of 0, and answers 401 without calling it when the identity source is missing', async () => {
    const stack = await serve(api(0));
    const calls = async () => ((await (await fetch(`${stack.url}/things`, { headers: { Authorization: 'a' } })).json()) as any).event.requestContext.authorizer.calls;
    expect(await calls()).toBe(1);
    expect(await calls()).toBe(2);
    const missing = await fetch(`${stack.url}/things`);
    expect(missing.status).toBe(401);
    expect(await calls()).toBe(3);
  });

  it('maps a Deny to ACCESS_DENIED, `Unauthorized` to UNAUTHORIZED and any other error to AUTHORIZER_FAILURE', async () => {
    const stack = await serve(api(300));
    const status = async (token: string) => (await fetch(`${stack.url}/things`, { headers: { Authorization: token } })).status;
    expect(await status('deny')).toBe(403);
    expect(await status('reject')).toBe(401);
    expect(await status('fail')).toBe(500);
  });

  it('fills a gateway response template\'s $context.authorizer.<key> from the Deny\'s context, cached or not, with the status set on the response', async () => {
    const stack = await serve({
      ...api(300),
      gatewayResponses: [{ type: 'ACCESS_DENIED', statusCode: '401', templates: literal('{"why":"$context.authorizer.why","calls":$context.authorizer.calls}') }],
    });
    for (const _ of [1, 2]) {
      const response = await fetch(`${stack.url}/things`, { headers: { Authorization: 'deny' } });
      expect({ status: response.status, json: await response.json() }).toEqual({ status: 401, json: { why: 'denied by the fixture', calls: 1 } });
    }
  });
});

describe('API Gateway and Lambda: limits', () => {
  it('answers 413 past the 10 MB payload limit without invoking the function', async () => {
    const stack = await serve({ functions: { Echo: { code: echo } }, methods: [{ method: 'POST', path: '/things', function: 'Echo' }] });
    const response = await fetch(`${stack.url}/things`, { method: 'POST', body: Buffer.alloc(10 * 1024 * 1024 + 1, 97) });
    expect(response.status).toBe(413);
    expect(stack.lambda.started.get('Echo')).toBeUndefined();
    expect((await fetch(`${stack.url}/things`, { method: 'POST', body: 'small' })).status).toBe(200);
  });

  it('ends an invocation past the function timeout as Lambda does (INTEGRATION_FAILURE, 502 when not customized; the next invocation cold)', async () => {
    const stack = await serve({
      functions: { Slow: { code: `export const handler = async (e) => { if (e.queryStringParameters?.wait) await new Promise((r) => setTimeout(r, 5000)); return { statusCode: 200, body: String(process.pid) }; };`, timeout: 1 } },
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
      functions: { Slow: { code: `export const handler = async () => { await new Promise((r) => setTimeout(r, 3000)); return { statusCode: 200, body: '' }; };`, timeout: 10 } },
      methods: [{ method: 'GET', path: '/slow', function: 'Slow', timeoutMs: 500 }],
    });
    const response = await fetch(`${stack.url}/slow`);
    expect(response.status).toBe(504);
    expect(await response.json()).toEqual({ message: 'Endpoint request timed out' });
  });
});

describe('Lambda: instances', () => {
  it('serves one invocation per instance: concurrent requests start instances with their own module state and environment', async () => {
    const stack = await serve({
      functions: {
        Counter: {
          code: `let count = 0; export const handler = async () => { count += 1; await new Promise((r) => setTimeout(r, 300)); return { statusCode: 200, body: JSON.stringify({ pid: process.pid, count, table: process.env.TABLE_NAME, own: process.env.OWN, path: process.env.NODE_OPTIONS ?? null }) }; };`,
          environment: { OWN: 'counter' },
        },
      },
      methods: [{ method: 'GET', path: '/count', function: 'Counter' }],
    });
    const concurrent = await Promise.all(Array.from({ length: 4 }, async () => (await fetch(`${stack.url}/count`)).json() as Promise<any>));
    expect(new Set(concurrent.map((r) => r.pid)).size).toBe(4);
    expect(concurrent.map((r) => r.count)).toEqual([1, 1, 1, 1]);
    expect(concurrent[0]).toMatchObject({ table: process.env.TABLE_NAME, own: 'counter', path: null });
    const next = (await (await fetch(`${stack.url}/count`)).json()) as any;
    expect(concurrent.map((r) => r.pid)).toContain(next.pid); // a warm instance is reused
    expect(next.count).toBe(2);
    expect(stack.lambda.started.get('Counter')).toBe(4);
  });
});

describe('WAF', () => {
  const rateLimited = (limit: number): FixtureApi => ({
    functions: { Echo: { code: echo } },
    methods: [{ method: 'GET', path: '/things', function: 'Echo' }, { method: 'POST', path: '/things', function: 'Echo' }],
    webAcl: {
      DefaultAction: { Allow: {} },
      AssociationConfig: { RequestBody: { API_GATEWAY: { DefaultSizeInspectionLimit: 'KB_16' } } },
      CustomResponseBodies: { Slow: { ContentType: 'APPLICATION_JSON', Content: '{"slow":true}' } },
      Rules: [
        {
          Name: 'PerToken', Priority: 0,
          Action: { Block: { CustomResponse: { ResponseCode: 429, CustomResponseBodyKey: 'Slow', ResponseHeaders: [{ Name: 'X-RateLimit-Reset', Value: '60.000' }] } } },
          Statement: { RateBasedStatement: { Limit: limit, EvaluationWindowSec: 60, AggregateKeyType: 'CUSTOM_KEYS', CustomKeys: [{ Header: { Name: 'Authorization', TextTransformations: [{ Priority: 0, Type: 'LOWERCASE' }, { Priority: 1, Type: 'COMPRESS_WHITE_SPACE' }] } }] } },
          VisibilityConfig: { MetricName: 'PerToken', CloudWatchMetricsEnabled: true, SampledRequestsEnabled: false },
        },
        {
          Name: 'BigBody', Priority: 1, Action: { Block: {} },
          Statement: { SizeConstraintStatement: { FieldToMatch: { Body: { OversizeHandling: 'MATCH' } }, ComparisonOperator: 'GT', Size: 1024, TextTransformations: [{ Priority: 0, Type: 'NONE' }] } },
          VisibilityConfig: { MetricName: 'BigBody', CloudWatchMetricsEnabled: true, SampledRequestsEnabled: false },
        },
      ],
    },
  });

  it('counts a rate-based key after its text transformations and blocks over the limit with the custom response', async () => {
    const stack = await serve(rateLimited(10));
    const get = (authorization: string) => fetch(`${stack.url}/things`, { headers: { Authorization: authorization } });
    const spellings = ['Bearer tok', 'bearer tok', 'BEARER   tok'];
    for (let i = 0; i < 10; i++) expect((await get(spellings[i % 3]!)).status).toBe(200);
    const blocked = await get('Bearer\ttok');
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get('x-ratelimit-reset')).toBe('60.000');
    expect(await blocked.json()).toEqual({ slow: true });
    expect((await get('Bearer other')).status).toBe(200); // another key, another bucket
    expect((await fetch(`${stack.url}/things`)).status).toBe(200); // no key: not counted
  });

  it('matches a body over the size limit, and one past the inspection limit by its oversize handling', async () => {
    const stack = await serve(rateLimited(1000));
    const post = (size: number) => fetch(`${stack.url}/things`, { method: 'POST', body: Buffer.alloc(size, 97) });
    expect((await post(1024)).status).toBe(200);
    const blocked = await post(1025);
    expect(blocked.status).toBe(403); // no custom response: API Gateway's WAF_FILTERED
    expect(await blocked.json()).toEqual({ message: 'Forbidden' });
    expect((await post(17 * 1024)).status).toBe(403);
  });

  it('counts a rate-based rule only on the requests its scope-down statement matches, one bucket per URI path', async () => {
    const stack = await serve({
      functions: { Echo: { code: echo } },
      methods: [{ method: 'POST', path: '/hooks/{name}', function: 'Echo' }, { method: 'GET', path: '/things', function: 'Echo' }],
      webAcl: {
        DefaultAction: { Allow: {} },
        Rules: [{
          Name: 'PerHook', Priority: 0, Action: { Block: {} },
          Statement: { RateBasedStatement: {
            Limit: 10, EvaluationWindowSec: 60, AggregateKeyType: 'CUSTOM_KEYS',
            CustomKeys: [{ UriPath: { TextTransformations: [{ Priority: 0, Type: 'LOWERCASE' }] } }],
            ScopeDownStatement: { ByteMatchStatement: { FieldToMatch: { UriPath: {} }, PositionalConstraint: 'CONTAINS', SearchString: '/hooks/', TextTransformations: [{ Priority: 0, Type: 'NONE' }] } },
          } },
          VisibilityConfig: { MetricName: 'PerHook', CloudWatchMetricsEnabled: true, SampledRequestsEnabled: false },
        }],
      },
    });
    const hook = (name: string) => fetch(`${stack.url}/hooks/${name}`, { method: 'POST', body: '{}' }).then((r) => r.status);
    for (let i = 0; i < 10; i++) expect(await hook(i % 2 ? 'acme' : 'ACME')).toBe(200); // one bucket: the key is lower-cased
    expect(await hook('acme')).toBe(403); // over the limit: blocked (no custom response: WAF_FILTERED)
    expect(await hook('globex')).toBe(200); // another path, another bucket
    for (let i = 0; i < 12; i++) expect((await fetch(`${stack.url}/things`)).status).toBe(200); // outside the scope-down: never counted
  });

  it('counts a path as routed after URL_DECODE, NORMALIZE_PATH and LOWERCASE: every spelling of one hook is one bucket', async () => {
    const asRouted = [{ Priority: 0, Type: 'URL_DECODE' }, { Priority: 1, Type: 'NORMALIZE_PATH' }, { Priority: 2, Type: 'LOWERCASE' }];
    const stack = await serve({
      functions: { Echo: { code: echo } },
      methods: [{ method: 'POST', path: '/hooks/{name}', function: 'Echo' }],
      webAcl: {
        DefaultAction: { Allow: {} },
        CustomResponseBodies: { Slow: { ContentType: 'APPLICATION_JSON', Content: '{"slow":true}' } },
        Rules: [{
          Name: 'PerHook', Priority: 0, Action: { Block: { CustomResponse: { ResponseCode: 429, CustomResponseBodyKey: 'Slow' } } },
          Statement: { RateBasedStatement: {
            Limit: 10, EvaluationWindowSec: 60, AggregateKeyType: 'CUSTOM_KEYS',
            CustomKeys: [{ UriPath: { TextTransformations: asRouted } }],
            ScopeDownStatement: { ByteMatchStatement: { FieldToMatch: { UriPath: {} }, PositionalConstraint: 'CONTAINS', SearchString: '/hooks/', TextTransformations: asRouted } },
          } },
          VisibilityConfig: { MetricName: 'PerHook', CloudWatchMetricsEnabled: true, SampledRequestsEnabled: false },
        }],
      },
    });
    // The path on the request line exactly as written (fetch would resolve the dot segments itself).
    const hook = (path: string) => new Promise<number>((resolve, reject) => {
      request(`${stack.url}${path}`, { method: 'POST', path }, (response) => { response.resume(); resolve(response.statusCode!); }).on('error', reject).end('{}');
    });
    const spellings = ['/hooks/acme', '/hooks/%61cme', '/hooks/ACM%45', '/./hooks/acme', '/x/../hooks/acme', '//hooks//acme', '/%68ooks/acme', '/hooks/./acme', '/x/y/../../hooks/acme', '/hooks/acme'];
    for (const path of spellings) expect(await hook(path)).not.toBe(429);
    expect(await hook('/hooks/%41cme')).toBe(429); // the eleventh, however spelled: over the limit
    expect(await hook('/hooks/globex')).not.toBe(429); // another hook, another bucket
  });

  it('refuses to start, naming it, on a statement it does not implement', async () => {
    const api = rateLimited(10);
    (api.webAcl!.Rules as any[]).push({ Name: 'Geo', Priority: 5, Action: { Block: {} }, Statement: { GeoMatchStatement: { CountryCodes: ['AQ'] } }, VisibilityConfig: {} });
    await expect(serve(api)).rejects.toThrow('WAF rule Geo: GeoMatchStatement is not emulated by the local stack');
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
  const api = (gatewayResponses: FixtureApi['gatewayResponses']): FixtureApi => ({
    functions: { Fails: { code: failing, timeout: 1, properties: { ReservedConcurrentExecutions: 1 } } },
    methods: [{ method: 'GET', path: '/fails', function: 'Fails' }, { method: 'GET', path: '/late', function: 'Fails', timeoutMs: 300 }],
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
    const stack = await serve(api(undefined));
    const crashed = await fetch(`${stack.url}/fails?crash=1`);
    expect(crashed.status).toBe(502);
    expect(crashed.headers.get('x-amzn-errortype')).toBe('InternalServerErrorException');
    expect(await crashed.json()).toEqual({ message: 'Internal server error' });
    // A reservation of 1: a second invocation while one is in flight is throttled by Lambda.
    const [slow, throttled] = await Promise.all([fetch(`${stack.url}/fails?wait=600`), new Promise((r) => setTimeout(r, 200)).then(() => fetch(`${stack.url}/fails`))]);
    expect(slow.status).toBe(200);
    expect(throttled.status).toBe(500);
    expect(await throttled.json()).toEqual({ message: 'Internal server error' });
    expect((await fetch(`${stack.url}/fails`)).status).toBe(200); // nothing in flight: served
  });

  it('answers an invocation Lambda throttles with the template’s INTEGRATION_FAILURE too', async () => {
    const stack = await serve(customized);
    const [slow, throttled] = await Promise.all([fetch(`${stack.url}/fails?wait=600`), new Promise((r) => setTimeout(r, 200)).then(() => fetch(`${stack.url}/fails`))]);
    expect(slow.status).toBe(200);
    expect(throttled.status).toBe(504);
    expect(await throttled.json()).toEqual({ type: 'INTEGRATION_FAILURE' });
  });
});

describe('API Gateway: per-method throttling', () => {
  const throttled = (settings: unknown[]): FixtureApi => ({
    functions: { Echo: { code: echo } },
    methods: [{ method: 'GET', path: '/limited', function: 'Echo' }, { method: 'POST', path: '/limited', function: 'Echo' }, { method: 'GET', path: '/free', function: 'Echo' }],
    stage: { MethodSettings: settings },
  });

  it('applies a method’s own MethodSettings entry over the stage-wide one, field by field', async () => {
    const stack = await serve(throttled([
      { HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 1, ThrottlingBurstLimit: 100 },
      { HttpMethod: 'GET', ResourcePath: '/~1limited', ThrottlingBurstLimit: 2 }, // the stage's rate of 1 a second, its own burst
    ]));
    const statuses = async (method: string, path: string, n: number) => {
      const all: number[] = [];
      for (let i = 0; i < n; i++) all.push((await fetch(`${stack.url}${path}`, { method, ...(method === 'POST' ? { body: '{}' } : {}) })).status);
      return all;
    };
    const limited = await statuses('GET', '/limited', 3);
    expect(limited).toEqual([200, 200, 429]);
    expect(await statuses('POST', '/limited', 5)).toEqual([200, 200, 200, 200, 200]); // another method, the stage's burst
    expect(await statuses('GET', '/free', 5)).toEqual([200, 200, 200, 200, 200]);
  });

  it('keeps a burst sized to the function’s reservation at the gateway (429), where a larger one meets Lambda’s throttle (5xx)', async () => {
    // A function reserved 4 executions, each request holding one for 400 ms; 8 requests at once.
    const slow = `export const handler = async () => { await new Promise((r) => setTimeout(r, 400)); return { statusCode: 200, body: '' }; };`;
    const burstOf = (burst: number) => serve({
      functions: { Slow: { code: slow, properties: { ReservedConcurrentExecutions: 4 } } },
      methods: [{ method: 'GET', path: '/slow', function: 'Slow' }],
      stage: { MethodSettings: [{ HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 1, ThrottlingBurstLimit: burst }] },
    });
    const statuses = async (stack: LocalStack) => (await Promise.all(Array.from({ length: 8 }, () => fetch(`${stack.url}/slow`)))).map((r) => r.status).sort();
    // burst + rate × 0.4 s = 3 + 0.4 ≤ 4: what the gateway lets through, Lambda runs.
    expect(await statuses(await burstOf(3))).toEqual([200, 200, 200, 429, 429, 429, 429, 429]);
    // 8 + 0.4 > 4: past the reservation, Lambda refuses the rest (INTEGRATION_FAILURE, 500 when not customized).
    expect(await statuses(await burstOf(8))).toEqual([200, 200, 200, 200, 500, 500, 500, 500]);
  });

  it('refuses to start on a stage cache it does not emulate', async () => {
    await expect(serve(throttled([{ HttpMethod: '*', ResourcePath: '/*', CachingEnabled: true }])))
      .rejects.toThrow(/^API Gateway stage MethodSettings \/\* \*: caching is not emulated by the local stack$/);
  });
});

describe('CloudFront: the distribution’s behaviour', () => {
  const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
  const ALL_VIEWER_EXCEPT_HOST = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';
  // The fixture's API, as CDK writes a RestApi origin's domain.
  const API_DOMAIN = { 'Fn::Join': ['', [{ Ref: 'Api' }, '.execute-api.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }]] };
  const fronted = (behavior: Record<string, unknown> = {}, config: Record<string, unknown> = {}, origin: Record<string, unknown> = {}): FixtureApi => ({
    functions: { Echo: { code: echo } },
    methods: [{ method: 'GET', path: '/things', function: 'Echo' }],
    resources: {
      Front: {
        Type: 'AWS::CloudFront::Distribution',
        Properties: {
          DistributionConfig: {
            Enabled: true,
            Origins: [{ Id: 'stage', DomainName: API_DOMAIN, OriginPath: '/test', CustomOriginConfig: { OriginProtocolPolicy: 'https-only' }, OriginCustomHeaders: [{ HeaderName: 'X-Origin', HeaderValue: 'front' }], ...origin }],
            DefaultCacheBehavior: {
              TargetOriginId: 'stage', ViewerProtocolPolicy: 'https-only', CachePolicyId: CACHING_DISABLED, OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST,
              AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'], ...behavior,
            },
            ...config,
          },
        },
      },
    },
  });

  it('plays a pass-through front (nothing cached, errors included; every method; viewer headers forwarded) and adds its origin headers', async () => {
    const stack = await serve(fronted({}, { CustomErrorResponses: [{ ErrorCode: 503, ErrorCachingMinTTL: 0 }] }));
    const echoed = (await (await fetch(`${stack.url}/things`, { headers: { 'X-Origin': 'client' } })).json()) as any;
    expect(echoed.event.headers['X-Origin']).toBe('front');
  });

  it.each([
    [{ CachePolicyId: '658327ea-f89d-4fab-a63d-7e88639e58f6' }, {}, 'CloudFront distribution: cache policy "658327ea-f89d-4fab-a63d-7e88639e58f6" (only CachingDisabled) is not emulated by the local front'],
    [{ AllowedMethods: ['GET', 'HEAD'] }, {}, 'CloudFront distribution: AllowedMethods GET,HEAD (only all methods) is not emulated by the local front'],
    [{ ResponseHeadersPolicyId: '67f7725c-6f97-4210-82d7-5512b31e9d03' }, {}, 'CloudFront distribution: DefaultCacheBehavior ResponseHeadersPolicyId is not emulated by the local front'],
    [{}, { CustomErrorResponses: [{ ErrorCode: 404, ResponseCode: 200, ResponsePagePath: '/index.html' }] }, 'CloudFront distribution: custom error response 404 (ResponseCode, ResponsePagePath) is not emulated by the local front'],
    [{}, { WebACLId: 'arn:aws:wafv2:us-east-1:000000000000:global/webacl/x/y' }, 'CloudFront distribution: WebACLId is not emulated by the local front'],
  ])('refuses to start, in one line, on a behaviour %j %j it does not play', async (behavior, config, message) => {
    await expect(serve(fronted(behavior, config))).rejects.toThrow(new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
  });

  // The front serves the stage at its root: another origin path (API Gateway would answer 403, no such stage) or domain it cannot follow.
  it.each([
    [{ OriginPath: '/not-the-stage' }, 'CloudFront distribution: origin path "/not-the-stage" (only the stage\'s, /test) is not emulated by the local front'],
    [{ OriginPath: undefined }, 'CloudFront distribution: origin path "" (only the stage\'s, /test) is not emulated by the local front'],
    [{ DomainName: 'api.example' }, 'CloudFront distribution: origin domain "api.example" (only the stage\'s API, Api.execute-api.us-east-1.amazonaws.com) is not emulated by the local front'],
  ])('refuses to start, in one line, on an origin %j that is not the stage', async (origin, message) => {
    await expect(serve(fronted({}, {}, origin))).rejects.toThrow(new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
  });
});

describe('WAF: rate-based rules on a forwarded IP', () => {
  const perClient = (fallback: 'MATCH' | 'NO_MATCH'): FixtureApi => ({
    functions: { Echo: { code: echo } },
    methods: [{ method: 'GET', path: '/things', function: 'Echo' }],
    webAcl: {
      DefaultAction: { Allow: {} },
      Rules: [{
        Name: 'PerClient', Priority: 0, Action: { Block: {} },
        Statement: { RateBasedStatement: { Limit: 10, EvaluationWindowSec: 60, AggregateKeyType: 'FORWARDED_IP', ForwardedIPConfig: { HeaderName: 'X-Client-Ip', FallbackBehavior: fallback } } },
        VisibilityConfig: { MetricName: 'PerClient', CloudWatchMetricsEnabled: true, SampledRequestsEnabled: false },
      }],
    },
  });
  const get = (stack: LocalStack, ip?: string) => fetch(`${stack.url}/things`, { headers: ip === undefined ? {} : { 'X-Client-Ip': ip } }).then((r) => r.status);

  it('does not apply the rule to a request without the header, whatever its fallback; a header without an IP takes the fallback', async () => {
    const match = await serve(perClient('MATCH'));
    for (let i = 0; i < 12; i++) expect(await get(match)).toBe(200); // never inspected, never counted
    expect(await get(match, 'not-an-ip')).toBe(403); // MATCH: the rule's action
    for (let i = 0; i < 10; i++) expect(await get(match, '192.0.2.1')).toBe(200);
    expect(await get(match, '192.0.2.1')).toBe(403); // over its limit
    const noMatch = await serve(perClient('NO_MATCH'));
    expect(await get(noMatch, 'not-an-ip')).toBe(200);
    expect(await get(noMatch)).toBe(200);
  });
});

describe('values CloudFormation refuses stop the start in one line', () => {
  const withRule = (statement: Record<string, unknown>): FixtureApi => ({
    functions: { Echo: { code: echo } },
    methods: [{ method: 'GET', path: '/things', function: 'Echo' }],
    webAcl: {
      DefaultAction: { Allow: {} },
      Rules: [{ Name: 'Rate', Priority: 0, Action: { Block: {} }, Statement: { RateBasedStatement: { AggregateKeyType: 'IP', ...statement } }, VisibilityConfig: {} }],
    },
  });
  const withFunction = (properties: Record<string, unknown>): FixtureApi => ({
    functions: { Echo: { code: echo, properties } },
    methods: [{ method: 'GET', path: '/things', function: 'Echo' }],
  });

  const cases: Array<[FixtureApi, string]> = [
    [withRule({ Limit: 5, EvaluationWindowSec: 60 }), 'WAF rule Rate: rate limit 5 is refused by WAF (10 to 2,000,000,000)'],
    [withRule({ Limit: 100, EvaluationWindowSec: 30 }), 'WAF rule Rate: evaluation window 30 s is refused by WAF (60, 120, 300 or 600)'],
    [withFunction({ Timeout: 0 }), 'Lambda Echo: Timeout 0 is refused by Lambda (1 to 900 seconds)'],
    [withFunction({ MemorySize: 64 }), 'Lambda Echo: MemorySize 64 is refused by Lambda (128 to 10240 MB)'],
    [withFunction({ SnapStart: { ApplyOn: 'PublishedVersions' } }), 'Lambda Echo: SnapStart not emulated by the local stack'],
    [{ ...withFunction({}), resources: { Url: { Type: 'AWS::Lambda::Url', Properties: {} } } }, "The template's Url (AWS::Lambda::Url) is not emulated by the local stack"],
  ];
  it.each(cases.map(([api, message]) => [message, api] as const))('%s', async (message, api) => {
    await expect(serve(api)).rejects.toThrow(new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
  });
});

describe('Lambda: init and invocation', () => {
  it('gives a function’s init its own time: an init longer than the timeout does not time the first invocation out', async () => {
    const stack = await serve({
      functions: { SlowInit: { code: `await new Promise((r) => setTimeout(r, 1500)); export const handler = async () => ({ statusCode: 200, body: 'ready' });`, timeout: 1 } },
      methods: [{ method: 'GET', path: '/slow-init', function: 'SlowInit' }],
    });
    const response = await fetch(`${stack.url}/slow-init`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ready');
  });

  it('stops an init past its 10 s and retries it with the invocation, within the function’s timeout', async () => {
    const stack = await serve({
      functions: { StuckInit: { code: `await new Promise((r) => setTimeout(r, 10_500)); export const handler = async () => ({ statusCode: 200, body: 'ready' });`, timeout: 1 } },
      methods: [{ method: 'GET', path: '/stuck', function: 'StuckInit' }],
    });
    const started = Date.now();
    const response = await fetch(`${stack.url}/stuck`);
    // 10 s of init, then the retried init runs out the 1 s timeout: a function error.
    expect(response.status).toBe(502);
    expect(Date.now() - started).toBeGreaterThanOrEqual(11_000);
    expect(stack.lambda.started.get('StuckInit')).toBe(2);
  }, 30_000);
});

describe('refusing to start', () => {
  // npm start prints the refusal after "npm start: ": what is refused comes first, a template setting or the port.
  it('names the port it could not take in its one line; a template refusal names the setting first', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    try {
      const assembly = fixtureAssembly({ functions: { Echo: { code: echo } }, methods: [{ method: 'GET', path: '/things', function: 'Echo' }] });
      const started = startLocalStack({ assembly, port, dynamoDbEndpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB!, tableName: process.env.TABLE_NAME!, log: () => undefined });
      await expect(started).rejects.toThrow(new RegExp(`^could not serve on 127\\.0\\.0\\.1:${port}: listen EADDRINUSE`));
      assembly.remove();
    } finally {
      holder.close();
    }
    await expect(serve({ functions: { Echo: { code: echo, properties: { SnapStart: { ApplyOn: 'PublishedVersions' } } } }, methods: [{ method: 'GET', path: '/things', function: 'Echo' }] }))
      .rejects.toThrow(/^Lambda Echo: SnapStart not emulated by the local stack$/);
  });
});

describe('Lambda: an init that failed', () => {
  it('is run again on the next invocation, in a fresh instance: an init that throws once fails one request only', async () => {
    // Throws on its first init only (a marker file beside the bundle), as a store or secret briefly unreachable at start would.
    const flaky = `import { existsSync, writeFileSync } from 'node:fs';
const marker = new URL('./init-failed-once', import.meta.url);
if (!existsSync(marker)) { writeFileSync(marker, ''); throw new Error('init failed once'); }
export const handler = async () => ({ statusCode: 200, body: String(process.pid) });`;
    const stack = await serve({ functions: { Flaky: { code: flaky } }, methods: [{ method: 'GET', path: '/flaky', function: 'Flaky' }] });
    const failed = await fetch(`${stack.url}/flaky`);
    expect(failed.status).toBe(502); // the init's error is the invocation's: INTEGRATION_FAILURE when not customized
    const after = await fetch(`${stack.url}/flaky`);
    expectWith(after.status, await after.text()).toBe(200);
    expect(stack.lambda.started.get('Flaky')).toBe(2);
  });
});

describe('Lambda: versions and aliases', () => {
  const versioned = `export const handler = async (event, context) => ({ statusCode: 200, body: JSON.stringify({
    pid: process.pid, version: process.env.AWS_LAMBDA_FUNCTION_VERSION, functionVersion: context.functionVersion, arn: context.invokedFunctionArn,
  }) });`;
  const api = (alias: Record<string, unknown> = {}): FixtureApi => ({
    functions: { Echo: { code: versioned, alias: 'live' } },
    methods: [{ method: 'GET', path: '/live', function: 'Echo', throughAlias: true }, { method: 'GET', path: '/latest', function: 'Echo' }],
    resources: alias,
  });

  it('runs what an alias points at: its version, in instances of its own, apart from $LATEST', async () => {
    const stack = await serve(api());
    const live = (await (await fetch(`${stack.url}/live`)).json()) as any;
    expect(live).toMatchObject({ version: '1', functionVersion: '1', arn: 'arn:aws:lambda:us-east-1:000000000000:function:Echo:live' });
    const latest = (await (await fetch(`${stack.url}/latest`)).json()) as any;
    expect(latest).toMatchObject({ version: '$LATEST', functionVersion: '$LATEST', arn: 'arn:aws:lambda:us-east-1:000000000000:function:Echo' });
    expect(latest.pid).not.toBe(live.pid);
    expect(stack.lambda.invocations.map(({ qualifier, version }) => `${qualifier}→${version}`)).toEqual(['live→1', '$LATEST→$LATEST']);
  });

  it('refuses to start on an alias that splits traffic between versions (what CodeDeploy sets during a shift)', async () => {
    const split = api();
    const stack = serve({
      ...split,
      resources: {
        Echo2: { Type: 'AWS::Lambda::Version', Properties: { FunctionName: { Ref: 'Echo' } } },
        EchoAlias: {
          Type: 'AWS::Lambda::Alias',
          Properties: { FunctionName: { Ref: 'Echo' }, FunctionVersion: '1', Name: 'live', RoutingConfig: { AdditionalVersionWeights: [{ FunctionVersion: '2', FunctionWeight: 0.1 }] } },
        },
      },
    });
    await expect(stack).rejects.toThrow(/^Lambda alias EchoAlias: RoutingConfig not emulated by the local stack$/);
  });
});
