import { request } from 'node:http';
import { describe, expect, it } from '@jest/globals';
import { serve, echo } from './fixture-stacks';
import type { FixtureApi } from '../../support/fixture-assembly';
import type { LocalStack } from '#infra/local/local-stack';

/**
 * WAF (infra/local/aws/waf.ts): its rules, custom responses and rate-based rules. Each case runs
 * on a hand-written template that states exactly the configuration it exercises (fixture-
 * stacks.ts).
 */
describe('WAF', () => {
  const rateLimited = (limit: number): FixtureApi => ({
    functions: { Echo: { code: echo } },
    methods: [
      { method: 'GET', path: '/things', function: 'Echo' },
      { method: 'POST', path: '/things', function: 'Echo' },
    ],
    webAcl: {
      DefaultAction: { Allow: {} },
      AssociationConfig: { RequestBody: { API_GATEWAY: { DefaultSizeInspectionLimit: 'KB_16' } } },
      CustomResponseBodies: { Slow: { ContentType: 'APPLICATION_JSON', Content: '{"slow":true}' } },
      Rules: [
        {
          Name: 'PerToken',
          Priority: 0,
          Action: {
            Block: {
              CustomResponse: {
                ResponseCode: 429,
                CustomResponseBodyKey: 'Slow',
                ResponseHeaders: [{ Name: 'X-RateLimit-Reset', Value: '60.000' }],
              },
            },
          },
          Statement: {
            RateBasedStatement: {
              Limit: limit,
              EvaluationWindowSec: 60,
              AggregateKeyType: 'CUSTOM_KEYS',
              CustomKeys: [
                {
                  Header: {
                    Name: 'Authorization',
                    TextTransformations: [
                      { Priority: 0, Type: 'LOWERCASE' },
                      { Priority: 1, Type: 'COMPRESS_WHITE_SPACE' },
                    ],
                  },
                },
              ],
            },
          },
          VisibilityConfig: { MetricName: 'PerToken', CloudWatchMetricsEnabled: true, SampledRequestsEnabled: false },
        },
        {
          Name: 'BigBody',
          Priority: 1,
          Action: { Block: {} },
          Statement: {
            SizeConstraintStatement: {
              FieldToMatch: { Body: { OversizeHandling: 'MATCH' } },
              ComparisonOperator: 'GT',
              Size: 1024,
              TextTransformations: [{ Priority: 0, Type: 'NONE' }],
            },
          },
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
      methods: [
        { method: 'POST', path: '/hooks/{name}', function: 'Echo' },
        { method: 'GET', path: '/things', function: 'Echo' },
      ],
      webAcl: {
        DefaultAction: { Allow: {} },
        Rules: [
          {
            Name: 'PerHook',
            Priority: 0,
            Action: { Block: {} },
            Statement: {
              RateBasedStatement: {
                Limit: 10,
                EvaluationWindowSec: 60,
                AggregateKeyType: 'CUSTOM_KEYS',
                CustomKeys: [{ UriPath: { TextTransformations: [{ Priority: 0, Type: 'LOWERCASE' }] } }],
                ScopeDownStatement: {
                  ByteMatchStatement: {
                    FieldToMatch: { UriPath: {} },
                    PositionalConstraint: 'CONTAINS',
                    SearchString: '/hooks/',
                    TextTransformations: [{ Priority: 0, Type: 'NONE' }],
                  },
                },
              },
            },
            VisibilityConfig: { MetricName: 'PerHook', CloudWatchMetricsEnabled: true, SampledRequestsEnabled: false },
          },
        ],
      },
    });
    const hook = (name: string) =>
      fetch(`${stack.url}/hooks/${name}`, { method: 'POST', body: '{}' }).then((r) => r.status);
    for (let i = 0; i < 10; i++) expect(await hook(i % 2 ? 'acme' : 'ACME')).toBe(200); // one bucket: the key is lower-cased
    expect(await hook('acme')).toBe(403); // over the limit: blocked (no custom response: WAF_FILTERED)
    expect(await hook('globex')).toBe(200); // another path, another bucket
    for (let i = 0; i < 12; i++) expect((await fetch(`${stack.url}/things`)).status).toBe(200); // outside the scope-down: never counted
  });

  it('counts a path as routed after URL_DECODE, NORMALIZE_PATH and LOWERCASE: every spelling of one hook is one bucket', async () => {
    const asRouted = [
      { Priority: 0, Type: 'URL_DECODE' },
      { Priority: 1, Type: 'NORMALIZE_PATH' },
      { Priority: 2, Type: 'LOWERCASE' },
    ];
    const stack = await serve({
      functions: { Echo: { code: echo } },
      methods: [{ method: 'POST', path: '/hooks/{name}', function: 'Echo' }],
      webAcl: {
        DefaultAction: { Allow: {} },
        CustomResponseBodies: { Slow: { ContentType: 'APPLICATION_JSON', Content: '{"slow":true}' } },
        Rules: [
          {
            Name: 'PerHook',
            Priority: 0,
            Action: { Block: { CustomResponse: { ResponseCode: 429, CustomResponseBodyKey: 'Slow' } } },
            Statement: {
              RateBasedStatement: {
                Limit: 10,
                EvaluationWindowSec: 60,
                AggregateKeyType: 'CUSTOM_KEYS',
                CustomKeys: [{ UriPath: { TextTransformations: asRouted } }],
                ScopeDownStatement: {
                  ByteMatchStatement: {
                    FieldToMatch: { UriPath: {} },
                    PositionalConstraint: 'CONTAINS',
                    SearchString: '/hooks/',
                    TextTransformations: asRouted,
                  },
                },
              },
            },
            VisibilityConfig: { MetricName: 'PerHook', CloudWatchMetricsEnabled: true, SampledRequestsEnabled: false },
          },
        ],
      },
    });
    // The path on the request line exactly as written (fetch would resolve the dot segments itself).
    const hook = (path: string) =>
      new Promise<number>((resolve, reject) => {
        request(`${stack.url}${path}`, { method: 'POST', path }, (response) => {
          response.resume();
          resolve(response.statusCode!);
        })
          .on('error', reject)
          .end('{}');
      });
    const spellings = [
      '/hooks/acme',
      '/hooks/%61cme',
      '/hooks/ACM%45',
      '/./hooks/acme',
      '/x/../hooks/acme',
      '//hooks//acme',
      '/%68ooks/acme',
      '/hooks/./acme',
      '/x/y/../../hooks/acme',
      '/hooks/acme',
    ];
    for (const path of spellings) expect(await hook(path)).not.toBe(429);
    expect(await hook('/hooks/%41cme')).toBe(429); // the eleventh, however spelled: over the limit
    expect(await hook('/hooks/globex')).not.toBe(429); // another hook, another bucket
  });

  it('refuses to start, naming it, on a statement it does not implement', async () => {
    const api = rateLimited(10);
    (api.webAcl!.Rules as any[]).push({
      Name: 'Geo',
      Priority: 5,
      Action: { Block: {} },
      Statement: { GeoMatchStatement: { CountryCodes: ['AQ'] } },
      VisibilityConfig: {},
    });
    await expect(serve(api)).rejects.toThrow('WAF rule Geo: GeoMatchStatement is not emulated by the local stack');
  });
});

describe('WAF: rate-based rules on a forwarded IP', () => {
  const perClient = (fallback: 'MATCH' | 'NO_MATCH'): FixtureApi => ({
    functions: { Echo: { code: echo } },
    methods: [{ method: 'GET', path: '/things', function: 'Echo' }],
    webAcl: {
      DefaultAction: { Allow: {} },
      Rules: [
        {
          Name: 'PerClient',
          Priority: 0,
          Action: { Block: {} },
          Statement: {
            RateBasedStatement: {
              Limit: 10,
              EvaluationWindowSec: 60,
              AggregateKeyType: 'FORWARDED_IP',
              ForwardedIPConfig: { HeaderName: 'X-Client-Ip', FallbackBehavior: fallback },
            },
          },
          VisibilityConfig: { MetricName: 'PerClient', CloudWatchMetricsEnabled: true, SampledRequestsEnabled: false },
        },
      ],
    },
  });
  const get = (stack: LocalStack, ip?: string) =>
    fetch(`${stack.url}/things`, { headers: ip === undefined ? {} : { 'X-Client-Ip': ip } }).then((r) => r.status);

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
