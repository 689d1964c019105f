import { randomBytes, randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { Stack } from './cloudformation';
import { LOCAL_ACCOUNT, LOCAL_REGION } from './cloudformation';
import {
  GATEWAY_RESPONSE_DEFAULTS,
  readRestApi,
  VTL_REFERENCE,
  type Method,
  type ReadOptions,
  type Resource,
  type RestApi,
} from './apigateway-template';
import { headerValue } from '#shared/http/headers';
import { policyAllows } from './iam';
import type { InvocationResult } from './lambda';
import { newTraceId } from './xray';

/**
 * The local stand-in for API Gateway (REST API, v1), read from the template: resources and
 * methods, AWS_PROXY and MOCK integrations, the REQUEST authorizer with its identity source and
 * result cache, stage variables and method throttling, and the gateway responses applied by API
 * Gateway's documented rules. The stage is served at the root of the host, as a custom domain's
 * base path mapping (or a front with the stage as its origin path) serves it.
 */
export interface HttpRequest {
  method: string;
  /** Path and query as sent (`/api/v2/ping?x=1`). */
  url: string;
  rawHeaders: string[];
  body: Buffer;
  sourceIp: string;
  httpVersion: string;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
  /** The gateway response type when API Gateway answered by itself. */
  errorType?: string;
}

export type Invoke = (functionLogicalId: string, event: unknown) => Promise<InvocationResult>;

/** https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html */
export const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
const DEFAULT_INTEGRATION_TIMEOUT_MS = 29_000;

export { GATEWAY_RESPONSE_DEFAULTS };

/**
 * A Lambda proxy integration that fails is API Gateway's INTEGRATION_FAILURE (its access log's
 * `$context.error.responseType`), with the status of the failure unless the gateway response sets
 * one: 502 when the function ran and failed (it threw, timed out, crashed or answered a malformed
 * result), 500 when Lambda refused the invocation (throttled)
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html). Only API
 * Gateway's own integration timeout is INTEGRATION_TIMEOUT (504).
 */
const FUNCTION_ERROR_STATUS = 502;
const INVOCATION_REFUSED_STATUS = 500;

interface RequestState {
  requestId: string;
  extendedRequestId: string;
  startedAt: number;
  /** The X-Ray trace API Gateway starts for the request: its functions' segments join it. */
  traceId: string;
  headers: Record<string, string>;
  multiValueHeaders: Record<string, string[]>;
  query: Record<string, string>;
  multiQuery: Record<string, string[]>;
  pathParameters: Record<string, string>;
  authorizer?: Record<string, unknown>;
  errorMessage?: string | null;
}

export interface ApiGatewayOptions {
  /** Invokes what an integration URI names: `NAME`, or `NAME:QUALIFIER` for a version or an alias. */
  invoke: Invoke;
  /** Called once each request is answered, with its trace id (the X-Ray daemon then prints it whole). */
  onRequestEnd?: (traceId: string) => void;
}

type AuthorizerDecision = { principalId: string; policyDocument: any; context?: Record<string, unknown> };

export class ApiGateway {
  private readonly api: RestApi;
  private readonly throttles = new Map<string, TokenBucket>();
  private readonly authorizerCache = new Map<string, { decision: AuthorizerDecision; expires: number }>();
  private readonly invoke: Invoke;
  private readonly onRequestEnd: ((traceId: string) => void) | undefined;

  constructor(api: RestApi, options: ApiGatewayOptions) {
    this.api = api;
    this.invoke = options.invoke;
    this.onRequestEnd = options.onRequestEnd;
  }

  /** The template's REST API (read and checked by apigateway-template.ts), served. */
  static of(stack: Stack, options: ApiGatewayOptions & ReadOptions): ApiGateway {
    return new ApiGateway(readRestApi(stack, options), options);
  }

  get restApiId(): string {
    return this.api.restApiId;
  }
  get stageName(): string {
    return this.api.stageName;
  }

  /** One request, as API Gateway handles it after WAF let it through; then its trace ends (the X-Ray daemon prints it whole). */
  async handle(request: HttpRequest): Promise<HttpResponse> {
    const state = this.requestState(request);
    try {
      return await this.answer(request, state);
    } finally {
      this.onRequestEnd?.(state.traceId);
    }
  }

  private async answer(request: HttpRequest, state: RequestState): Promise<HttpResponse> {
    if (request.body.length > MAX_PAYLOAD_BYTES) return this.gatewayResponse('REQUEST_TOO_LARGE', state);
    const url = URL.parse(request.url, 'http://local');
    // A request target no resource can match (it does not even parse as a path) is an unknown route.
    if (!url) return this.gatewayResponse('MISSING_AUTHENTICATION_TOKEN', state);

    const match = this.route(url.pathname);
    const method = match?.resource.methods.get(request.method) ?? match?.resource.methods.get('ANY');
    // An unknown path and a known path without the method both answer MISSING_AUTHENTICATION_TOKEN.
    if (!match || !method) return this.gatewayResponse('MISSING_AUTHENTICATION_TOKEN', state);
    state.pathParameters = match.parameters;

    if (method.throttle && !this.bucket(method).take()) return this.gatewayResponse('THROTTLED', state);

    const event = this.proxyEvent(request, url, method, state);
    if (method.authorizerId) {
      const refused = await this.authorize(method, event, state);
      if (refused) return refused;
    }
    if (method.integration.Type === 'MOCK') return this.mock(method, state);
    return this.proxy(method, event, state);
  }

  /** Literal path parts win over `{param}`; `{name+}` takes the rest of the path. */
  private route(path: string): { resource: Resource; parameters: Record<string, string> } | undefined {
    const parts = path
      .replace(/\/$/, '')
      .split('/')
      .slice(1)
      .filter((part, i, all) => part !== '' || i < all.length - 1);
    const walk = (
      resource: Resource,
      index: number,
      parameters: Record<string, string>,
    ): { resource: Resource; parameters: Record<string, string> } | undefined => {
      if (index === parts.length) return { resource, parameters };
      const part = parts[index]!;
      const literal = resource.children.find((c) => c.part === part);
      const found = literal && walk(literal, index + 1, parameters);
      if (found) return found;
      for (const child of resource.children) {
        const greedy = /^\{(\w+)\+\}$/.exec(child.part);
        if (greedy)
          return {
            resource: child,
            parameters: { ...parameters, [greedy[1]!]: parts.slice(index).map(decode).join('/') },
          };
        const name = /^\{(\w+)\}$/.exec(child.part)?.[1];
        const deeper =
          name && part !== '' ? walk(child, index + 1, { ...parameters, [name]: decode(part) }) : undefined;
        if (deeper) return deeper;
      }
      return undefined;
    };
    return walk(this.api.root, 0, {});
  }

  /** API Gateway throttles each method on its own: one token bucket per method. */
  private bucket(method: Method): TokenBucket {
    const key = `${method.resourcePath} ${method.httpMethod}`;
    let bucket = this.throttles.get(key);
    if (!bucket) this.throttles.set(key, (bucket = new TokenBucket(method.throttle!.rate, method.throttle!.burst)));
    return bucket;
  }

  private requestState(request: HttpRequest): RequestState {
    const { headers, multiValueHeaders } = headersOf(request.rawHeaders);
    const { query, multiQuery } = queryOf(
      request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '',
    );
    return {
      requestId: randomUUID(),
      extendedRequestId: randomBytes(8).toString('base64url'),
      startedAt: Date.now(),
      traceId: newTraceId(),
      headers,
      multiValueHeaders,
      query,
      multiQuery,
      pathParameters: {},
    };
  }

  /** The REST API (v1) proxy event, as API Gateway sends it to a Lambda proxy integration. */
  private proxyEvent(request: HttpRequest, url: URL, method: Method, state: RequestState): APIGatewayProxyEvent {
    const headers = { ...state.headers };
    const multiValueHeaders = { ...state.multiValueHeaders };
    const forwardedFor = [headerValue(headers, 'x-forwarded-for'), request.sourceIp].filter(Boolean).join(', ');
    const added: Record<string, string> = {
      'X-Forwarded-For': forwardedFor,
      'X-Forwarded-Proto': 'http',
      'X-Amzn-Trace-Id': `Root=${state.traceId}`,
    };
    for (const [name, value] of Object.entries(added)) {
      for (const existing of Object.keys(headers))
        if (existing.toLowerCase() === name.toLowerCase()) {
          delete headers[existing];
          delete multiValueHeaders[existing];
        }
      headers[name] = value;
      multiValueHeaders[name] = [value];
    }
    const hasQuery = Object.keys(state.query).length > 0;
    const hasPath = Object.keys(state.pathParameters).length > 0;
    const now = new Date(state.startedAt);
    return {
      resource: method.resourcePath,
      path: url.pathname,
      httpMethod: request.method,
      headers,
      multiValueHeaders,
      queryStringParameters: hasQuery ? state.query : null,
      multiValueQueryStringParameters: hasQuery ? state.multiQuery : null,
      pathParameters: hasPath ? state.pathParameters : null,
      stageVariables: this.api.stageVariables,
      ...this.proxyBody(request.body, headerValue(headers, 'content-type')),
      requestContext: {
        accountId: LOCAL_ACCOUNT,
        apiId: this.api.restApiId,
        authorizer: null,
        domainName: headerValue(headers, 'host') ?? '127.0.0.1',
        domainPrefix: (headerValue(headers, 'host') ?? '127.0.0.1').split('.')[0],
        extendedRequestId: state.extendedRequestId,
        httpMethod: request.method,
        path: url.pathname,
        protocol: `HTTP/${request.httpVersion}`,
        requestId: state.requestId,
        requestTime: apiGatewayTime(now),
        requestTimeEpoch: state.startedAt,
        resourceId: method.resourceId,
        resourcePath: method.resourcePath,
        stage: this.api.stageName,
        identity: {
          accessKey: null,
          accountId: null,
          apiKey: null,
          apiKeyId: null,
          caller: null,
          clientCert: null,
          cognitoAuthenticationProvider: null,
          cognitoAuthenticationType: null,
          cognitoIdentityId: null,
          cognitoIdentityPoolId: null,
          principalOrgId: null,
          sourceIp: request.sourceIp,
          user: null,
          userAgent: headerValue(headers, 'user-agent') ?? null,
          userArn: null,
        },
      } as APIGatewayProxyEvent['requestContext'],
    };
  }

  /**
   * A Lambda proxy's body: the client's bytes base64-encoded when the Content-Type is a binary media
   * type, otherwise text decoded as UTF-8 (invalid bytes become U+FFFD, as a text payload would).
   * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-payload-encodings-workflow.html
   */
  private proxyBody(body: Buffer, contentType: string | undefined): { body: string | null; isBase64Encoded: boolean } {
    if (body.length === 0) return { body: null, isBase64Encoded: false };
    if (this.isBinary(contentType)) return { body: body.toString('base64'), isBase64Encoded: true };
    return { body: body.toString('utf8'), isBase64Encoded: false };
  }

  /** Whether a media type (parameters ignored) matches the API's binary media types, `*` wildcards included. */
  private isBinary(mediaType: string | undefined): boolean {
    const [type, subtype] = (mediaType ?? '').split(';')[0]!.trim().toLowerCase().split('/');
    if (!type || !subtype) return false;
    return this.api.binaryMediaTypes.some((binary) => {
      const [t, s] = binary.split('/');
      return (t === '*' || t === type) && (s === '*' || s === subtype);
    });
  }

  /** Runs the method's REQUEST authorizer (through its result cache); a response when it refuses. */
  private async authorize(
    method: Method,
    event: APIGatewayProxyEvent,
    state: RequestState,
  ): Promise<HttpResponse | undefined> {
    const authorizer = this.api.authorizers.get(method.authorizerId!);
    if (!authorizer) throw new Error(`Method ${method.resourceId} names an unknown authorizer`);
    const identity = authorizer.identitySources.map((source) => {
      const [, , kind, name] = source.split('.') as [string, string, string, string];
      return kind === 'header' ? headerValue(state.headers, name) : state.query[name];
    });
    // API Gateway answers 401 without calling the authorizer when an identity source is missing or empty.
    if (identity.some((value) => value === undefined || value === ''))
      return this.gatewayResponse('UNAUTHORIZED', state);
    const methodArn = `arn:aws:execute-api:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${this.api.restApiId}/${this.api.stageName}/${event.httpMethod}${event.path}`;

    // The cache is keyed on the identity sources' values (API Gateway: "Configure a Lambda authorizer").
    const cacheKey = `${authorizer.id}\0${identity.join('\0')}`;
    let decision = authorizer.ttlSeconds > 0 ? this.authorizerCache.get(cacheKey) : undefined;
    if (decision && decision.expires <= Date.now()) decision = undefined;
    if (!decision) {
      const {
        multiValueHeaders,
        headers,
        queryStringParameters,
        multiValueQueryStringParameters,
        pathParameters,
        stageVariables,
        requestContext,
        resource,
        path,
        httpMethod,
      } = event;
      const outcome = await this.invoke(authorizer.functionId, {
        type: 'REQUEST',
        methodArn,
        resource,
        path,
        httpMethod,
        headers,
        multiValueHeaders,
        queryStringParameters,
        multiValueQueryStringParameters,
        pathParameters,
        stageVariables,
        requestContext,
      });
      if (!outcome.ok) {
        if (outcome.error?.errorMessage === 'Unauthorized') return this.gatewayResponse('UNAUTHORIZED', state);
        return this.gatewayResponse('AUTHORIZER_FAILURE', state);
      }
      const result = outcome.result as AuthorizerDecision;
      if (!validDecision(result)) return this.gatewayResponse('AUTHORIZER_CONFIGURATION_ERROR', state);
      decision = { decision: result, expires: Date.now() + authorizer.ttlSeconds * 1000 };
      if (authorizer.ttlSeconds > 0) this.authorizerCache.set(cacheKey, decision);
    }
    const { principalId, policyDocument, context } = decision.decision;
    state.authorizer = { ...context, principalId };
    if (!policyAllows([policyDocument.Statement].flat(), { action: 'execute-api:Invoke', resource: methodArn }))
      return this.gatewayResponse('ACCESS_DENIED', state);
    event.requestContext.authorizer = { ...context, principalId, integrationLatency: Date.now() - state.startedAt };
    return undefined;
  }

  /** Forgets every cached authorizer result: `aws apigateway flush-stage-authorizers-cache`. */
  flushAuthorizerCache(): void {
    this.authorizerCache.clear();
  }

  /**
   * What reaches each function the API invokes (by name, without a version or alias): its routes as
   * `$context.resourcePath` names them (`GET /api/v2/ping`), or `authorizer`. The local logs label
   * each function's lines with it.
   */
  functionRoutes(): Map<string, string[]> {
    const routes = new Map<string, string[]>();
    const add = (target: string, route: string) => {
      const name = target.split(':')[0]!;
      routes.set(name, [...(routes.get(name) ?? []), route]);
    };
    const visit = (resource: Resource) => {
      for (const method of resource.methods.values()) {
        if (method.integration.Type === 'AWS_PROXY')
          add(method.functionName!, `${method.httpMethod} ${method.resourcePath}`);
      }
      resource.children.forEach(visit);
    };
    visit(this.api.root);
    for (const authorizer of this.api.authorizers.values()) add(authorizer.functionId, 'authorizer');
    return routes;
  }

  private async proxy(method: Method, event: APIGatewayProxyEvent, state: RequestState): Promise<HttpResponse> {
    const timeoutMs = Number(method.integration.TimeoutInMillis ?? DEFAULT_INTEGRATION_TIMEOUT_MS);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const outcome = await Promise.race([this.invoke(method.functionName!, event), timedOut]);
    clearTimeout(timer);
    if (outcome === 'timeout') return this.gatewayResponse('INTEGRATION_TIMEOUT', state);
    if (outcome.rejected) return this.gatewayResponse('INTEGRATION_FAILURE', state, INVOCATION_REFUSED_STATUS);
    const result = outcome.result as APIGatewayProxyResult | undefined;
    if (!outcome.ok || !validProxyResult(result))
      return this.gatewayResponse('INTEGRATION_FAILURE', state, FUNCTION_ERROR_STATUS);

    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
    for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) headers[name] = values.map(String);
    if (!Object.keys(headers).some((n) => n.toLowerCase() === 'content-type'))
      headers['Content-Type'] = 'application/json';
    headers['x-amzn-RequestId'] = state.requestId;
    const body = result.isBase64Encoded
      ? Buffer.from(result.body ?? '', 'base64')
      : Buffer.from(result.body ?? '', 'utf8');
    return { status: Number(result.statusCode), headers, body };
  }

  /** A MOCK integration: its request template picks the status, an integration response answers. */
  private mock(method: Method, state: RequestState): HttpResponse {
    const integration = method.integration;
    const contentType = (headerValue(state.headers, 'content-type') ?? 'application/json')
      .split(';')[0]!
      .trim()
      .toLowerCase();
    const templates: Record<string, string> = integration.RequestTemplates ?? {};
    const template = templates[contentType];
    const behavior = integration.PassthroughBehavior ?? 'WHEN_NO_MATCH';
    // API Gateway: "Integration passthrough behaviors".
    if (
      template === undefined &&
      (behavior === 'NEVER' || (behavior === 'WHEN_NO_TEMPLATES' && Object.keys(templates).length > 0))
    ) {
      return this.gatewayResponse('UNSUPPORTED_MEDIA_TYPE', state);
    }
    const responses: any[] = integration.IntegrationResponses ?? [];
    const byDefault = responses.find((r) => !r.SelectionPattern);
    // A body passed through is not a template: the mock answers its default integration response
    // (https://docs.aws.amazon.com/apigateway/latest/developerguide/how-to-mock-integration.html).
    if (template === undefined)
      return byDefault ? this.mockResponse(byDefault, state) : this.gatewayResponse('API_CONFIGURATION_ERROR', state);
    let statusCode = 200;
    try {
      statusCode = Number(JSON.parse(renderTemplate(template, this.vtlContext(state))).statusCode ?? 200);
    } catch {
      statusCode = 500;
    }
    const chosen =
      responses.find((r) => r.SelectionPattern && new RegExp(`^${r.SelectionPattern}$`).test(String(statusCode))) ??
      byDefault;
    if (!chosen) return this.gatewayResponse('API_CONFIGURATION_ERROR', state);
    return this.mockResponse(chosen, state);
  }

  /** A mock's integration response, with its mapped headers and the template `Accept` picks. */
  private mockResponse(chosen: any, state: RequestState): HttpResponse {
    const headers: Record<string, string> = {};
    for (const [target, expression] of Object.entries((chosen.ResponseParameters ?? {}) as Record<string, string>)) {
      const name = target.replace(/^method\.response\.header\./, '');
      const value = this.mapping(expression, state);
      if (value !== undefined) headers[name] = value;
    }
    const [type, body] = pickTemplate(chosen.ResponseTemplates ?? {}, headerValue(state.headers, 'accept'));
    if (!Object.keys(headers).some((n) => n.toLowerCase() === 'content-type'))
      headers['Content-Type'] = type ?? 'application/json';
    headers['x-amzn-RequestId'] = state.requestId;
    return {
      status: Number(chosen.StatusCode),
      headers,
      body: Buffer.from(renderTemplate(body ?? '', this.vtlContext(state))),
    };
  }

  /**
   * A gateway response by API Gateway's rules: the type's own customization wins; otherwise
   * DEFAULT_4XX or DEFAULT_5XX (by the type's default status) gives headers and templates; and a
   * status code set on DEFAULT_4XX/5XX replaces the default status of every type not customized.
   * `failureStatus` is the status of an integration's own failure (502, 500), which a response
   * without a status of its own keeps.
   */
  gatewayResponse(type: string, state: RequestState, failureStatus?: number): HttpResponse {
    const defaults = GATEWAY_RESPONSE_DEFAULTS[type]!;
    const own = this.api.gatewayResponses.get(type);
    const fallback = this.api.gatewayResponses.get(defaults.status >= 500 ? 'DEFAULT_5XX' : 'DEFAULT_4XX');
    const config = own ?? fallback;
    const status = own?.statusCode ?? fallback?.statusCode ?? failureStatus ?? defaults.status;
    state.errorMessage = defaults.message;
    const headers: Record<string, string> = {};
    for (const [target, expression] of Object.entries(config?.parameters ?? {})) {
      const name = target.replace(/^gatewayresponse\.header\./, '');
      const value = this.mapping(expression, state, type);
      if (value !== undefined) headers[name] = value;
    }
    const [contentType, template] =
      config && Object.keys(config.templates).length > 0
        ? pickTemplate(config.templates, headerValue(state.headers, 'accept'))
        : ['application/json', '{"message":$context.error.messageString}'];
    if (!Object.keys(headers).some((n) => n.toLowerCase() === 'content-type'))
      headers['Content-Type'] = contentType ?? 'application/json';
    headers['x-amzn-RequestId'] = state.requestId;
    headers['x-amzn-ErrorType'] = failureStatus === undefined ? type : 'InternalServerErrorException';
    return {
      status,
      headers,
      body: Buffer.from(renderTemplate(template ?? '', this.vtlContext(state, type))),
      errorType: type,
    };
  }

  /** A response for a request refused before routing (WAF_FILTERED, an unreadable request). */
  refuse(type: string, request: HttpRequest): HttpResponse {
    return this.gatewayResponse(type, this.requestState(request));
  }

  private vtlContext(state: RequestState, errorType?: string): Record<string, string> {
    return {
      '$context.requestId': state.requestId,
      '$context.extendedRequestId': state.extendedRequestId,
      '$context.error.responseType': errorType ?? '',
      '$context.error.message': state.errorMessage ?? '',
      '$context.error.messageString': JSON.stringify(state.errorMessage ?? null),
      ...Object.fromEntries(Object.entries(this.api.stageVariables ?? {}).map(([k, v]) => [`$stageVariables.${k}`, v])),
      ...Object.fromEntries(
        Object.entries(state.authorizer ?? {}).map(([k, v]) => [`$context.authorizer.${k}`, String(v)]),
      ),
    };
  }

  /** A response parameter's mapping expression (API Gateway: "Parameter mapping"). */
  private mapping(expression: string, state: RequestState, errorType?: string): string | undefined {
    if (/^'.*'$/s.test(expression)) return expression.slice(1, -1);
    const [source, ...rest] = expression.split('.');
    const name = rest.join('.');
    if (source === 'context') return this.vtlContext(state, errorType)[`$context.${name}`];
    if (source === 'stageVariables') return this.api.stageVariables?.[name];
    if (expression.startsWith('method.request.header.'))
      return headerValue(state.headers, expression.slice('method.request.header.'.length));
    if (expression.startsWith('method.request.querystring.'))
      return state.query[expression.slice('method.request.querystring.'.length)];
    if (expression.startsWith('method.request.path.'))
      return state.pathParameters[expression.slice('method.request.path.'.length)];
    return undefined;
  }
}

function renderTemplate(template: string, context: Record<string, string>): string {
  return template.replace(VTL_REFERENCE, (reference) => context[reference] ?? '');
}

/** The template for the client's Accept when there is one, else application/json, else the first. */
function pickTemplate(
  templates: Record<string, string>,
  accept: string | undefined,
): [string | undefined, string | undefined] {
  const wanted = (accept ?? '').split(',').map((t) => t.split(';')[0]!.trim().toLowerCase());
  const type =
    wanted.find((t) => t in templates) ??
    ('application/json' in templates ? 'application/json' : Object.keys(templates)[0]);
  return [type, type === undefined ? undefined : templates[type]];
}

function validDecision(result: AuthorizerDecision | undefined): result is AuthorizerDecision {
  if (
    !result ||
    typeof result !== 'object' ||
    !result.policyDocument ||
    !Array.isArray(result.policyDocument.Statement)
  )
    return false;
  // API Gateway accepts only strings, numbers and booleans as context values.
  return Object.values(result.context ?? {}).every((v) => ['string', 'number', 'boolean'].includes(typeof v));
}

function validProxyResult(result: APIGatewayProxyResult | undefined): result is APIGatewayProxyResult {
  return (
    !!result &&
    typeof result === 'object' &&
    Number.isInteger(Number(result.statusCode)) &&
    (result.body === undefined || result.body === null || typeof result.body === 'string')
  );
}

/**
 * Raw header pairs as the proxy event carries them: the last value by name, and every value. Null
 * prototypes, so a header named `__proto__`, `constructor` or `toString` is just a name.
 */
export function headersOf(rawHeaders: string[]): {
  headers: Record<string, string>;
  multiValueHeaders: Record<string, string[]>;
} {
  const headers: Record<string, string> = Object.create(null);
  const multiValueHeaders: Record<string, string[]> = Object.create(null);
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    const value = rawHeaders[i + 1]!;
    headers[name] = value;
    (multiValueHeaders[name] ??= []).push(value);
  }
  return { headers, multiValueHeaders };
}

/** A query string as the proxy event carries it, decoded; built on null prototypes so `__proto__` is just a name. */
export function queryOf(search: string): { query: Record<string, string>; multiQuery: Record<string, string[]> } {
  const query: Record<string, string> = Object.create(null);
  const multiQuery: Record<string, string[]> = Object.create(null);
  for (const pair of search.split('&').filter(Boolean)) {
    const [rawName, ...rest] = pair.split('=');
    const name = decode(rawName!);
    const value = decode(rest.join('='));
    query[name] = value;
    (multiQuery[name] ??= []).push(value);
  }
  return { query, multiQuery };
}

/** Decodes like API Gateway: percent-escapes in names and values (`page%5Bsize%5D` → `page[size]`). */
export function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** `22/Nov/2026:09:30:00 +0000`, API Gateway's `requestTime`. */
function apiGatewayTime(date: Date): string {
  const month = date.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' });
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(date.getUTCDate())}/${month}/${date.getUTCFullYear()}:${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`;
}

/** API Gateway throttling: a token bucket per method, refilled at the rate, holding at most the burst. */
class TokenBucket {
  private tokens: number;
  private last = Date.now();
  private readonly rate: number;
  private readonly burst: number;

  constructor(rate: number, burst: number) {
    this.rate = rate;
    this.burst = burst;
    this.tokens = burst;
  }

  take(): boolean {
    const now = Date.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
