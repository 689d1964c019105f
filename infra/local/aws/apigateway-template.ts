import type { Stack } from './cloudformation';

/**
 * API Gateway's part of the template, read and checked: the REST API, its one stage, resources,
 * methods, REQUEST authorizers and gateway responses. A setting the local stack does not emulate
 * stops the start with one line naming it. apigateway.ts serves requests on what this reads.
 */
export interface RestApi {
  restApiId: string;
  stageName: string;
  /** AWS::ApiGateway::RestApi BinaryMediaTypes, lower case, `~1` read as `/`. */
  binaryMediaTypes: string[];
  stageVariables: Record<string, string> | null;
  /** The resource tree from `/`, each resource with its methods. */
  root: Resource;
  authorizers: Map<string, Authorizer>;
  /** Gateway responses customized by the template, by response type. */
  gatewayResponses: Map<string, GatewayResponseConfig>;
}

export interface ReadOptions {
  /** Whether Lambda would find what an integration URI names (`NAME` or `NAME:QUALIFIER`). */
  knows?: (target: string) => boolean;
  /** The stage's variables as this machine serves them (the local front speaks plain HTTP: cloudfront.ts). */
  servedVariables?: (variables: Record<string, string>) => Record<string, string>;
}

/** https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html */
export const GATEWAY_RESPONSE_DEFAULTS: Record<string, { status: number; message: string | null }> = {
  ACCESS_DENIED: { status: 403, message: 'User is not authorized to access this resource with an explicit deny' },
  API_CONFIGURATION_ERROR: { status: 500, message: 'Internal server error' },
  AUTHORIZER_CONFIGURATION_ERROR: { status: 500, message: null },
  AUTHORIZER_FAILURE: { status: 500, message: null },
  BAD_REQUEST_PARAMETERS: { status: 400, message: 'Bad request parameters' },
  BAD_REQUEST_BODY: { status: 400, message: 'Invalid request body' },
  EXPIRED_TOKEN: { status: 403, message: 'Token expired' },
  INTEGRATION_FAILURE: { status: 504, message: 'Internal server error' },
  INTEGRATION_TIMEOUT: { status: 504, message: 'Endpoint request timed out' },
  INVALID_API_KEY: { status: 403, message: 'Forbidden' },
  INVALID_SIGNATURE: { status: 403, message: 'Invalid signature' },
  MISSING_AUTHENTICATION_TOKEN: { status: 403, message: 'Missing Authentication Token' },
  QUOTA_EXCEEDED: { status: 429, message: 'Limit Exceeded' },
  REQUEST_TOO_LARGE: { status: 413, message: 'Request Too Long' },
  RESOURCE_NOT_FOUND: { status: 404, message: 'Resource not found' },
  THROTTLED: { status: 429, message: 'Too Many Requests' },
  UNAUTHORIZED: { status: 401, message: 'Unauthorized' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Unsupported Media Type' },
  WAF_FILTERED: { status: 403, message: 'Forbidden' },
};

/** AWS::ApiGateway::Stage MethodSettings keys: emulated (throttling), or without effect here (logs, metrics). */
const METHOD_SETTINGS = new Set([
  'HttpMethod',
  'ResourcePath',
  'ThrottlingRateLimit',
  'ThrottlingBurstLimit',
  'LoggingLevel',
  'DataTraceEnabled',
  'MetricsEnabled',
  'CachingEnabled',
  'CacheTtlInSeconds',
  'CacheDataEncrypted',
]);

export interface Method {
  resourceId: string;
  resourcePath: string;
  httpMethod: string;
  authorizerId?: string;
  integration: any;
  /** What an AWS_PROXY integration invokes: `NAME` or `NAME:QUALIFIER`. */
  functionName?: string;
  /** The stage's throttle for this method: its own MethodSettings entry, else the stage-wide one. */
  throttle?: { rate: number; burst: number };
}

export interface Resource {
  id: string;
  path: string;
  part: string;
  children: Resource[];
  methods: Map<string, Method>;
}

export interface Authorizer {
  id: string;
  functionId: string;
  /** `method.request.header.Authorization`, … */
  identitySources: string[];
  ttlSeconds: number;
}

export interface GatewayResponseConfig {
  statusCode?: number;
  parameters: Record<string, string>;
  templates: Record<string, string>;
}

export function readRestApi(stack: Stack, options: ReadOptions = {}): RestApi {
  const { knows = () => true } = options;
  const functionOf = (uri: unknown): string => {
    const arn = /functions\/(.+)\/invocations$/.exec(stack.string(uri))?.[1] ?? '';
    const target = arn.split(':function:')[1];
    if (!target || !knows(target))
      throw new Error(
        `Integration URI ${stack.string(uri)} does not name a Lambda function, version or alias of this template`,
      );
    return target;
  };
  const { restApiId, binaryMediaTypes } = readApi(stack);
  const { stageName, stageVariables, methodSettings } = readStage(stack, options);
  const { root, byId } = readResources(stack);
  readMethods(stack, { root, byId, methodSettings, binaryMediaTypes, functionOf });
  return {
    restApiId,
    stageName,
    binaryMediaTypes,
    stageVariables,
    root,
    authorizers: readAuthorizers(stack, functionOf),
    gatewayResponses: readGatewayResponses(stack),
  };
}

function readApi(stack: Stack): { restApiId: string; binaryMediaTypes: string[] } {
  const apis = stack.resourcesOf('AWS::ApiGateway::RestApi');
  if (apis.length !== 1)
    throw new Error(`The local stack serves exactly one REST API; the template has ${apis.length}`);
  const [apiId, api] = apis[0]!;
  // AWS::ApiGateway::RestApi BinaryMediaTypes: `/` may be escaped as `~1`.
  const binaryMediaTypes = (stack.resolve(api.Properties?.BinaryMediaTypes ?? []) as string[]).map((type) =>
    type.replaceAll('~1', '/').toLowerCase(),
  );
  return { restApiId: stack.ref(apiId), binaryMediaTypes };
}

function readStage(stack: Stack, options: ReadOptions) {
  const stages = stack.resourcesOf('AWS::ApiGateway::Stage');
  if (stages.length !== 1)
    throw new Error(`The local stack serves exactly one stage; the template has ${stages.length}`);
  const stage = stages[0]![1].Properties;
  if (stage.CanarySetting)
    throw new Error('API Gateway stage: CanarySetting (a stage canary) is not emulated by the local stack');
  if (stage.CacheClusterEnabled)
    throw new Error('API Gateway stage: CacheClusterEnabled (the stage cache) is not emulated by the local stack');
  const resolved = stack.resolve(stage.Variables ?? null) as Record<string, string> | null;
  const variables = resolved && options.servedVariables ? options.servedVariables(resolved) : resolved;
  const methodSettings = (stage.MethodSettings ?? []) as Array<Record<string, unknown>>;
  for (const setting of methodSettings) {
    const where = `API Gateway stage MethodSettings ${setting.ResourcePath} ${setting.HttpMethod}`;
    const unknown = Object.keys(setting).filter((key) => !METHOD_SETTINGS.has(key));
    if (unknown.length > 0) throw new Error(`${where}: ${unknown.join(', ')} not emulated by the local stack`);
    if (setting.CachingEnabled === true) throw new Error(`${where}: caching is not emulated by the local stack`);
  }
  return {
    stageName: String(stage.StageName),
    stageVariables: variables && Object.keys(variables).length > 0 ? variables : null,
    methodSettings,
  };
}

function readResources(stack: Stack): { root: Resource; byId: Map<string, Resource> } {
  const root: Resource = { id: 'root', path: '/', part: '', children: [], methods: new Map() };
  const byId = new Map<string, Resource>();
  const build = (logicalId: string): Resource => {
    const known = byId.get(logicalId);
    if (known) return known;
    const props = stack.resource(logicalId).Properties;
    const parent = props.ParentId?.Ref ? build(props.ParentId.Ref as string) : root;
    const path = `${parent.path === '/' ? '' : parent.path}/${props.PathPart}`;
    const resource: Resource = { id: logicalId, path, part: props.PathPart, children: [], methods: new Map() };
    parent.children.push(resource);
    byId.set(logicalId, resource);
    return resource;
  };
  for (const [logicalId] of stack.resourcesOf('AWS::ApiGateway::Resource')) build(logicalId);
  return { root, byId };
}

interface MethodContext {
  root: Resource;
  byId: Map<string, Resource>;
  methodSettings: Array<Record<string, unknown>>;
  binaryMediaTypes: string[];
  functionOf: (uri: unknown) => string;
}

/** Each method, on its resource: checked, with its throttle and the function it invokes. */
function readMethods(stack: Stack, { root, byId, methodSettings, binaryMediaTypes, functionOf }: MethodContext): void {
  for (const [logicalId, method] of stack.resourcesOf('AWS::ApiGateway::Method')) {
    const p = method.Properties;
    const resource = p.ResourceId?.Ref ? byId.get(p.ResourceId.Ref as string) : root;
    if (!resource) throw new Error(`Method ${logicalId} is on an unknown resource`);
    const type = p.Integration?.Type;
    if (type !== 'AWS_PROXY' && type !== 'MOCK')
      throw new Error(`Method ${logicalId}: integration type ${type} is not emulated by the local stack`);
    if (!['NONE', 'CUSTOM'].includes(p.AuthorizationType ?? 'NONE'))
      throw new Error(`Method ${logicalId}: authorization ${p.AuthorizationType} is not emulated`);
    if (p.ApiKeyRequired) throw new Error(`Method ${logicalId}: API keys are not emulated`);
    if (p.RequestValidatorId) throw new Error(`Method ${logicalId}: request validators are not emulated`);
    const responses: any[] = p.Integration.IntegrationResponses ?? [];
    const templates = {
      ...p.Integration.RequestTemplates,
      ...Object.assign({}, ...responses.map((r) => r.ResponseTemplates)),
    };
    for (const template of Object.values(templates)) assertTemplate(String(template), logicalId);
    for (const r of responses)
      for (const v of Object.values(r.ResponseParameters ?? {})) assertMapping(String(v), logicalId);
    if (
      type === 'MOCK' &&
      binaryMediaTypes.length > 0 &&
      [p.Integration, ...responses].some((i: any) => i.ContentHandling !== 'CONVERT_TO_TEXT')
    ) {
      throw new Error(
        `Method ${logicalId}: a MOCK integration with binary media types is emulated with ContentHandling CONVERT_TO_TEXT only`,
      );
    }
    const throttle = throttleOf(methodSettings, resource.path, p.HttpMethod);
    resource.methods.set(p.HttpMethod, {
      resourceId: logicalId,
      resourcePath: resource.path,
      httpMethod: p.HttpMethod,
      ...(p.AuthorizationType === 'CUSTOM' ? { authorizerId: p.AuthorizerId?.Ref as string } : {}),
      integration: p.Integration,
      // Fails now for a URI it could not invoke.
      ...(type === 'AWS_PROXY' ? { functionName: functionOf(p.Integration.Uri) } : {}),
      ...(throttle ? { throttle } : {}),
    });
  }
}

function readAuthorizers(stack: Stack, functionOf: (uri: unknown) => string): Map<string, Authorizer> {
  const authorizers = new Map<string, Authorizer>();
  for (const [logicalId, authorizer] of stack.resourcesOf('AWS::ApiGateway::Authorizer')) {
    const p = authorizer.Properties;
    if (p.Type !== 'REQUEST')
      throw new Error(`Authorizer ${logicalId}: type ${p.Type} is not emulated by the local stack`);
    const identitySources = String(p.IdentitySource ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    for (const source of identitySources) {
      if (!/^method\.request\.(header|querystring)\.[^.]+$/.test(source))
        throw new Error(`Authorizer ${logicalId}: identity source ${source} is not emulated`);
    }
    // AWS::ApiGateway::Authorizer: AuthorizerResultTtlInSeconds defaults to 300.
    const ttlSeconds = Number(p.AuthorizerResultTtlInSeconds ?? 300);
    authorizers.set(logicalId, { id: logicalId, functionId: functionOf(p.AuthorizerUri), identitySources, ttlSeconds });
  }
  return authorizers;
}

function readGatewayResponses(stack: Stack): Map<string, GatewayResponseConfig> {
  const responses = new Map<string, GatewayResponseConfig>();
  for (const [logicalId, response] of stack.resourcesOf('AWS::ApiGateway::GatewayResponse')) {
    const p = response.Properties;
    if (!(p.ResponseType in GATEWAY_RESPONSE_DEFAULTS) && !p.ResponseType.startsWith('DEFAULT_'))
      throw new Error(`Gateway response ${logicalId}: unknown type ${p.ResponseType}`);
    for (const v of Object.values(p.ResponseParameters ?? {})) assertMapping(String(v), logicalId);
    for (const t of Object.values(p.ResponseTemplates ?? {})) assertTemplate(String(t), logicalId);
    responses.set(p.ResponseType, {
      ...(p.StatusCode !== undefined ? { statusCode: Number(p.StatusCode) } : {}),
      parameters: p.ResponseParameters ?? {},
      templates: p.ResponseTemplates ?? {},
    });
  }
  return responses;
}

const MAPPING = /^('.*'|context\.[\w.]+|stageVariables\.\w+|method\.request\.(header|querystring|path)\.[\w-]+)$/s;
function assertMapping(expression: string, where: string): void {
  if (!MAPPING.test(expression))
    throw new Error(`${where}: the mapping expression ${expression} is not emulated by the local stack`);
}

/** Templates are literal text with `$context.*` / `$stageVariables.*` references; other VTL stops the start. */
export const VTL_REFERENCE = /\$(context\.[\w.]+|stageVariables\.\w+)/g;
function assertTemplate(template: string, where: string): void {
  const rest = template.replace(VTL_REFERENCE, '');
  if (/[$#]/.test(rest))
    throw new Error(
      `${where}: the mapping template uses VTL the local stack does not emulate: ${template.slice(0, 80)}`,
    );
}

/**
 * A method's throttle from the stage's MethodSettings: its own entry (ResourcePath with `/` written
 * `~1`, e.g. `/~1api~1v2~1ping`, and its HttpMethod) over `/*` and `*`, field by field
 * (AWS::ApiGateway::Stage MethodSetting). None when no entry sets a rate.
 */
function throttleOf(
  settings: Array<Record<string, unknown>>,
  resourcePath: string,
  httpMethod: string,
): { rate: number; burst: number } | undefined {
  const path = resourcePath === '/' ? '/' : `/${resourcePath.replaceAll('/', '~1')}`;
  const matching = settings
    .filter(
      (s) =>
        (s.ResourcePath === '/*' || s.ResourcePath === path) && (s.HttpMethod === '*' || s.HttpMethod === httpMethod),
    )
    .sort((a, b) => specificity(a) - specificity(b)); // the most specific last
  const field = (name: string) => matching.reduce<unknown>((value, s) => s[name] ?? value, undefined);
  const rate = field('ThrottlingRateLimit');
  if (rate === undefined) return undefined;
  return { rate: Number(rate), burst: Number(field('ThrottlingBurstLimit') ?? 0) };
}
const specificity = (s: Record<string, unknown>) => (s.ResourcePath === '/*' ? 0 : 2) + (s.HttpMethod === '*' ? 0 : 1);
