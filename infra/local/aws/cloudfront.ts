import { randomBytes } from 'node:crypto';
import { runInNewContext } from 'node:vm';
import type { HttpRequest } from './apigateway';
import { LOCAL_REGION, type Stack } from './cloudformation';

/**
 * The local stand-in for the CloudFront front the stack puts before the stage when it has no
 * custom domain: this server is the distribution, so each request gets what CloudFront would add
 * on its way to the origin, before WAF sees it. The distribution's viewer-request CloudFront
 * Function runs on the request (cloudfront-js-2.0, here in a VM context), then the origin's
 * custom headers are set, replacing any the client sent (CloudFront "Adding custom headers to
 * origin requests"). Values resolve like every other template value, so a header and the WAF rule
 * that checks it resolve to the same string. Like CloudFront, it gives each request an id,
 * `X-Amz-Cf-Id`, sent to the origin and on the answer, whoever answered (WAF's static answers too).
 */
/** The request id CloudFront puts on every answer it serves and on every request it sends to the origin. */
export const CLOUDFRONT_ID_HEADER = 'X-Amz-Cf-Id';

/**
 * Stage variables as the local front serves them: this server is the distribution and speaks
 * plain HTTP, so a variable holding a distribution's `https://` address holds its `http://` one.
 */
export function plainHttpStageVariables(stack: Stack, variables: Record<string, string>): Record<string, string> {
  const served = { ...variables };
  for (const [distribution] of stack.resourcesOf('AWS::CloudFront::Distribution')) {
    const domain = stack.string({ 'Fn::GetAtt': [distribution, 'DomainName'] });
    for (const [name, value] of Object.entries(served))
      if (value === `https://${domain}`) served[name] = `http://${domain}`;
  }
  return served;
}

export class LocalFront {
  private readonly viewerRequest: string | undefined;
  private readonly originHeaders: Array<[string, string]>;

  private constructor(viewerRequest: string | undefined, originHeaders: Array<[string, string]>) {
    this.viewerRequest = viewerRequest;
    this.originHeaders = originHeaders;
  }

  /** The template's one distribution, or undefined when a custom domain (or nothing) is the front. */
  static of(stack: Stack): LocalFront | undefined {
    const distributions = stack.resourcesOf('AWS::CloudFront::Distribution');
    if (distributions.length === 0) return undefined;
    if (distributions.length > 1)
      throw new Error(`The local stack plays one CloudFront front; the template has ${distributions.length}`);
    const config = distributions[0]![1].Properties.DistributionConfig;
    if ((config.CacheBehaviors ?? []).length > 0 || config.Origins.length !== 1) {
      throw new Error('The local front plays one origin with the default behavior only');
    }
    assertPassThrough(config);
    assertOriginIsTheStage(stack, config.Origins[0]);
    const associations = (config.DefaultCacheBehavior.FunctionAssociations ?? []) as Array<{
      EventType: string;
      FunctionARN: unknown;
    }>;
    if (associations.some((a) => a.EventType !== 'viewer-request'))
      throw new Error('The local front runs viewer-request functions only');
    const viewerRequest = associations.map((association) => {
      const [logicalId] = (association.FunctionARN as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'];
      const fn = stack.resource(logicalId).Properties;
      if (fn.FunctionConfig.Runtime !== 'cloudfront-js-2.0')
        throw new Error(`CloudFront Function runtime ${fn.FunctionConfig.Runtime} is not emulated`);
      return stack.string(fn.FunctionCode);
    })[0];
    const originHeaders = (
      (config.Origins[0].OriginCustomHeaders ?? []) as Array<{ HeaderName: string; HeaderValue: unknown }>
    ).map(({ HeaderName, HeaderValue }): [string, string] => [HeaderName, stack.string(HeaderValue)]);
    return new LocalFront(viewerRequest, originHeaders);
  }

  /** CloudFront's id of one request (X-Amz-Cf-Id): opaque URL-safe base64, as CloudFront's look. */
  requestId(): string {
    return randomBytes(40).toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
  }

  /** The request as it reaches the origin (the stage), with its `requestId()`. */
  forward(request: HttpRequest, requestId: string): HttpRequest {
    let rawHeaders = request.rawHeaders;
    if (this.viewerRequest) {
      const before = headerObject(rawHeaders);
      const event = {
        version: '1.0',
        context: { eventType: 'viewer-request' },
        viewer: { ip: request.sourceIp },
        request: {
          method: request.method,
          uri: request.url.split('?')[0],
          querystring: {},
          headers: structuredClone(before),
          cookies: {},
        },
      };
      const result = runInNewContext(`${this.viewerRequest}\nhandler(event);`, { event }) as {
        headers: Record<string, { value: string }>;
      };
      for (const [name, { value }] of Object.entries(result.headers)) {
        if (before[name]?.value !== value) rawHeaders = withHeader(rawHeaders, name, value);
      }
    }
    for (const [name, value] of this.originHeaders) rawHeaders = withHeader(rawHeaders, name, value);
    // "The headers that CloudFront automatically includes in every origin request, including Host, User-Agent, and X-Amz-Cf-Id."
    rawHeaders = withHeader(rawHeaders, CLOUDFRONT_ID_HEADER, requestId);
    return { ...request, rawHeaders };
  }
}

/**
 * What the local front plays is a pass-through: every method allowed, nothing cached (errors
 * included), every viewer header and the query string forwarded. A distribution setting that would
 * make CloudFront answer otherwise (cache, refuse a method, rewrite an error, add response headers)
 * stops the start with one line naming it. Settings of the edge itself (TLS, HTTP versions, IPv6,
 * price class, logs) change nothing a request here could tell; this server speaks plain HTTP.
 */
const MANAGED_POLICIES = {
  /** CachingDisabled: nothing is cached (https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/using-managed-cache-policies.html). */
  cache: ['4135ea2d-6df8-44a3-9df3-4b5a84be39ad'],
  /** AllViewer and AllViewerExceptHostHeader: every viewer header (Host aside), cookie and query string reaches the origin. */
  originRequest: ['216adef6-5c7f-47e4-b989-5492eafa07d3', 'b689b0a8-53d0-40ab-baf2-68738e2966ac'],
};
const ALL_METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'];
const DISTRIBUTION_SETTINGS = new Set([
  'Comment',
  'Enabled',
  'HttpVersion',
  'IPV6Enabled',
  'PriceClass',
  'Aliases',
  'ViewerCertificate',
  'Logging',
  'Origins',
  'DefaultCacheBehavior',
  'CacheBehaviors',
  'CustomErrorResponses',
]);
const BEHAVIOR_SETTINGS = new Set([
  'TargetOriginId',
  'ViewerProtocolPolicy',
  'AllowedMethods',
  'CachedMethods',
  'CachePolicyId',
  'OriginRequestPolicyId',
  'Compress',
  'FunctionAssociations',
  'RealtimeLogConfigArn',
]);
const ORIGIN_SETTINGS = new Set([
  'Id',
  'DomainName',
  'OriginPath',
  'CustomOriginConfig',
  'OriginCustomHeaders',
  'ConnectionAttempts',
  'ConnectionTimeout',
]);

function assertPassThrough(config: any): void {
  const refuse = (what: string) => {
    throw new Error(`CloudFront distribution: ${what} is not emulated by the local front`);
  };
  const unknown = (settings: Record<string, unknown>, known: Set<string>) =>
    Object.keys(settings).filter((key) => !known.has(key));
  for (const key of unknown(config, DISTRIBUTION_SETTINGS)) refuse(key);
  const behavior = config.DefaultCacheBehavior;
  for (const key of unknown(behavior, BEHAVIOR_SETTINGS)) refuse(`DefaultCacheBehavior ${key}`);
  for (const key of unknown(config.Origins[0], ORIGIN_SETTINGS)) refuse(`origin ${key}`);
  if ([...(behavior.AllowedMethods ?? ['GET', 'HEAD'])].sort().join() !== ALL_METHODS.join())
    refuse(`AllowedMethods ${(behavior.AllowedMethods ?? ['GET', 'HEAD']).join(',')} (only all methods)`);
  if (!MANAGED_POLICIES.cache.includes(behavior.CachePolicyId))
    refuse(`cache policy ${JSON.stringify(behavior.CachePolicyId ?? 'legacy ForwardedValues')} (only CachingDisabled)`);
  if (!MANAGED_POLICIES.originRequest.includes(behavior.OriginRequestPolicyId))
    refuse(
      `origin request policy ${JSON.stringify(behavior.OriginRequestPolicyId)} (only AllViewer, AllViewerExceptHostHeader)`,
    );
  // An error response that only sets how long CloudFront caches the error changes nothing here (nothing is cached).
  for (const response of (config.CustomErrorResponses ?? []) as Array<Record<string, unknown>>) {
    const replaced = Object.keys(response).filter((key) => !['ErrorCode', 'ErrorCachingMinTTL'].includes(key));
    if (replaced.length > 0) refuse(`custom error response ${response.ErrorCode} (${replaced.join(', ')})`);
  }
}

/**
 * This server hands the request to the template's one stage, served at its root: that is what the
 * distribution does only when its origin is that API's execute-api domain with the stage as origin
 * path. Another path reaches no stage (API Gateway answers 403), another domain another server.
 */
function assertOriginIsTheStage(stack: Stack, origin: { DomainName: unknown; OriginPath?: unknown }): void {
  const refuse = (what: string) => {
    throw new Error(`CloudFront distribution: ${what} is not emulated by the local front`);
  };
  const apis = stack.resourcesOf('AWS::ApiGateway::RestApi');
  const stages = stack.resourcesOf('AWS::ApiGateway::Stage');
  if (apis.length !== 1 || stages.length !== 1)
    refuse(`an origin with ${apis.length} REST APIs and ${stages.length} stages in the template`);
  const apiDomain = `${stack.ref(apis[0]![0])}.execute-api.${LOCAL_REGION}.amazonaws.com`;
  const stagePath = `/${stack.string(stages[0]![1].Properties.StageName)}`;
  const domain = stack.string(origin.DomainName);
  const path = origin.OriginPath === undefined ? '' : stack.string(origin.OriginPath);
  if (domain !== apiDomain) refuse(`origin domain ${JSON.stringify(domain)} (only the stage's API, ${apiDomain})`);
  if (path !== stagePath) refuse(`origin path ${JSON.stringify(path)} (only the stage's, ${stagePath})`);
}

/** CloudFront Functions see header names in lower case, one value each. */
function headerObject(rawHeaders: string[]): Record<string, { value: string }> {
  const headers: Record<string, { value: string }> = Object.create(null); // `constructor` is a header name like any other
  for (let i = 0; i < rawHeaders.length; i += 2)
    headers[rawHeaders[i]!.toLowerCase()] ??= { value: rawHeaders[i + 1]! };
  return headers;
}

/** The raw header pairs with every `name` (any case) replaced by one `name: value`. */
function withHeader(rawHeaders: string[], name: string, value: string): string[] {
  const kept: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() !== name.toLowerCase()) kept.push(rawHeaders[i]!, rawHeaders[i + 1]!);
  }
  return [...kept, name, value];
}
