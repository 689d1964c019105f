import { describe, expect, it } from '@jest/globals';
import { serve, echo } from './fixture-stacks';
import type { FixtureApi } from '../../support/fixture-assembly';

/**
 * CloudFront (infra/local/aws/cloudfront.ts): the distribution's behaviour before the stage. Each
 * case runs on a hand-written template that states exactly the configuration it exercises
 * (fixture-stacks.ts).
 */
describe('CloudFront: the distribution’s behaviour', () => {
  const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
  const ALL_VIEWER_EXCEPT_HOST = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';
  // The fixture's API, as CDK writes a RestApi origin's domain.
  const API_DOMAIN = {
    'Fn::Join': ['', [{ Ref: 'Api' }, '.execute-api.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }]],
  };
  const fronted = (
    behavior: Record<string, unknown> = {},
    config: Record<string, unknown> = {},
    origin: Record<string, unknown> = {},
  ): FixtureApi => ({
    functions: { Echo: { code: echo } },
    methods: [{ method: 'GET', path: '/things', function: 'Echo' }],
    resources: {
      Front: {
        Type: 'AWS::CloudFront::Distribution',
        Properties: {
          DistributionConfig: {
            Enabled: true,
            Origins: [
              {
                Id: 'stage',
                DomainName: API_DOMAIN,
                OriginPath: '/test',
                CustomOriginConfig: { OriginProtocolPolicy: 'https-only' },
                OriginCustomHeaders: [{ HeaderName: 'X-Origin', HeaderValue: 'front' }],
                ...origin,
              },
            ],
            DefaultCacheBehavior: {
              TargetOriginId: 'stage',
              ViewerProtocolPolicy: 'https-only',
              CachePolicyId: CACHING_DISABLED,
              OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST,
              AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
              ...behavior,
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
    [
      { CachePolicyId: '658327ea-f89d-4fab-a63d-7e88639e58f6' },
      {},
      'CloudFront distribution: cache policy "658327ea-f89d-4fab-a63d-7e88639e58f6" (only CachingDisabled) is not emulated by the local front',
    ],
    [
      { AllowedMethods: ['GET', 'HEAD'] },
      {},
      'CloudFront distribution: AllowedMethods GET,HEAD (only all methods) is not emulated by the local front',
    ],
    [
      { ResponseHeadersPolicyId: '67f7725c-6f97-4210-82d7-5512b31e9d03' },
      {},
      'CloudFront distribution: DefaultCacheBehavior ResponseHeadersPolicyId is not emulated by the local front',
    ],
    [
      {},
      { CustomErrorResponses: [{ ErrorCode: 404, ResponseCode: 200, ResponsePagePath: '/index.html' }] },
      'CloudFront distribution: custom error response 404 (ResponseCode, ResponsePagePath) is not emulated by the local front',
    ],
    [
      {},
      { WebACLId: 'arn:aws:wafv2:us-east-1:000000000000:global/webacl/x/y' },
      'CloudFront distribution: WebACLId is not emulated by the local front',
    ],
  ])('refuses to start, in one line, on a behaviour %j %j it does not play', async (behavior, config, message) => {
    await expect(serve(fronted(behavior, config))).rejects.toThrow(
      new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`),
    );
  });

  // The front serves the stage at its root: another origin path (API Gateway would answer 403, no such stage) or domain it cannot follow.
  it.each([
    [
      { OriginPath: '/not-the-stage' },
      'CloudFront distribution: origin path "/not-the-stage" (only the stage\'s, /test) is not emulated by the local front',
    ],
    [
      { OriginPath: undefined },
      'CloudFront distribution: origin path "" (only the stage\'s, /test) is not emulated by the local front',
    ],
    [
      { DomainName: 'api.example' },
      'CloudFront distribution: origin domain "api.example" (only the stage\'s API, Api.execute-api.us-east-1.amazonaws.com) is not emulated by the local front',
    ],
  ])('refuses to start, in one line, on an origin %j that is not the stage', async (origin, message) => {
    await expect(serve(fronted({}, {}, origin))).rejects.toThrow(
      new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`),
    );
  });
});
