import { afterAll, describe, expect, it } from '@jest/globals';
import { startLocalStack, type LocalStack } from '#infra/local/local-stack';
import { fixtureAssembly, type FixtureApi } from '../support/fixture-assembly';

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
  });
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

  it('ends an invocation past the function timeout as Lambda does (502 through the gateway, the next invocation cold)', async () => {
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
    const stack = await serve(rateLimited(3));
    const get = (authorization: string) => fetch(`${stack.url}/things`, { headers: { Authorization: authorization } });
    const spellings = ['Bearer tok', 'bearer tok', 'BEARER   tok'];
    for (const spelling of spellings) expect((await get(spelling)).status).toBe(200);
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
            Limit: 2, EvaluationWindowSec: 60, AggregateKeyType: 'CUSTOM_KEYS',
            CustomKeys: [{ UriPath: { TextTransformations: [{ Priority: 0, Type: 'LOWERCASE' }] } }],
            ScopeDownStatement: { ByteMatchStatement: { FieldToMatch: { UriPath: {} }, PositionalConstraint: 'CONTAINS', SearchString: '/hooks/', TextTransformations: [{ Priority: 0, Type: 'NONE' }] } },
          } },
          VisibilityConfig: { MetricName: 'PerHook', CloudWatchMetricsEnabled: true, SampledRequestsEnabled: false },
        }],
      },
    });
    const hook = (name: string) => fetch(`${stack.url}/hooks/${name}`, { method: 'POST', body: '{}' }).then((r) => r.status);
    expect([await hook('acme'), await hook('ACME')]).toEqual([200, 200]); // one bucket: the key is lower-cased
    expect(await hook('acme')).toBe(403); // over the limit: blocked (no custom response: WAF_FILTERED)
    expect(await hook('globex')).toBe(200); // another path, another bucket
    for (let i = 0; i < 3; i++) expect((await fetch(`${stack.url}/things`)).status).toBe(200); // outside the scope-down: never counted
  });

  it('refuses to start, naming it, on a statement it does not implement', async () => {
    const api = rateLimited(10);
    (api.webAcl!.Rules as any[]).push({ Name: 'Geo', Priority: 5, Action: { Block: {} }, Statement: { GeoMatchStatement: { CountryCodes: ['AQ'] } }, VisibilityConfig: {} });
    await expect(serve(api)).rejects.toThrow('WAF rule Geo: GeoMatchStatement is not emulated by the local stack');
  });
});
