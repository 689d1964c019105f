import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { AsyncLocalStorage } from 'node:async_hooks';
import { InvokeStoreBase } from '@aws/lambda-invoke-store';
import type {
  APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayProxyResult, APIGatewayRequestAuthorizerEvent, Context,
} from 'aws-lambda';
import { API_BASE_PATH, AUTHORIZER_CACHE_TTL_SECONDS, MAX_BODY_BYTES } from '#shared/config';
import { gatewayErrorResponse } from '#shared/http/gateway-responses';
import { errorResponse } from '#shared/http/responses';
import { headerValue } from '#shared/http/headers';
import { MethodNotAllowed } from '#shared/jsonapi/errors';
import { JSON_BODY_TYPES } from '#shared/jsonapi/media-type';
import { AUTHORIZER_FUNCTION, routes as allRoutes, type Route } from '#shared/routes';
import { decode, headersOf, queryOf } from './aws/apigateway';
import { policyAllows, type Statement } from './aws/iam';
import { answerParserRefusals } from './parser-refusals';

/**
 * Dev mode (`npm run dev`) and in-process invocation for tests and the bench: the route table's
 * TypeScript handlers in this process, behind REST API (v1) proxy events, the REQUEST authorizer
 * and its cache. Not what deploys: `npm start` and the e2e tests serve the synthesized assembly
 * (local-stack.ts); test/infra/api.test.ts keeps this one's routes equal to the template's.
 */
export interface LocalGateway {
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface LocalGatewayOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  routes?: readonly Route[];
  authorizerCacheTtlSeconds?: number;
  /** Called once per request, after the response: an access log without tokens. */
  onRequest?: (entry: { method: string; path: string; status: number; ms: number }) => void;
}

type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
type AuthorizerHandler = (event: APIGatewayRequestAuthorizerEvent, context: Context) => Promise<APIGatewayAuthorizerResult>;

export interface CompiledRoute {
  route: Route;
  pattern: RegExp;
  parameterNames: string[];
  handler: ProxyHandler;
}

const ACCOUNT = '000000000000';
const REGION = 'local';
const API_ID = 'local';
const STAGE = 'local';

export async function startGateway(options: LocalGatewayOptions = {}): Promise<LocalGateway> {
  concurrentInvocations();
  const compiled = await Promise.all((options.routes ?? allRoutes).map(compileRoute));
  const authorizer = (await importFunction(AUTHORIZER_FUNCTION)) as AuthorizerHandler;
  const cache = new AuthorizerCache((options.authorizerCacheTtlSeconds ?? AUTHORIZER_CACHE_TTL_SECONDS) * 1000);

  const server = createServer((req, res) => {
    const started = performance.now();
    serve(req, compiled, authorizer, cache)
      .catch((error: unknown) => {
        console.error('local gateway failure', error);
        return gatewayErrorResponse('DEFAULT_5XX');
      })
      .then((result) => {
        send(res, result);
        options.onRequest?.({ method: req.method ?? '', path: (req.url ?? '').split('?')[0]!, status: result.statusCode, ms: performance.now() - started });
      });
  });
  server.keepAliveTimeout = 65_000;
  answerParserRefusals(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

async function serve(
  req: IncomingMessage, compiled: CompiledRoute[], authorizer: AuthorizerHandler, cache: AuthorizerCache,
): Promise<APIGatewayProxyResult> {
  const url = new URL(req.url ?? '/', 'http://local');
  const method = (req.method ?? 'GET').toUpperCase();
  const onPath = compiled.filter((c) => c.pattern.test(url.pathname));
  if (onPath.length === 0) return gatewayErrorResponse('MISSING_AUTHENTICATION_TOKEN');
  const match = onPath.find((c) => c.route.method === method);
  if (!match) return errorResponse(new MethodNotAllowed());

  const body = await readBody(req);
  if (body === 'too large') return gatewayErrorResponse('REQUEST_TOO_LARGE');
  const event = proxyEvent(
    { url, rawHeaders: req.rawHeaders, body, httpVersion: req.httpVersion, sourceIp: req.socket.remoteAddress ?? '127.0.0.1' },
    match,
  );
  // The address clients use, as the stack's `publicAddress` stage variable: from the socket, never from Host.
  event.stageVariables = { publicAddress: `http://127.0.0.1:${req.socket.localPort}` };

  if (match.route.role !== null) {
    const authorization = headerValue(event.headers, 'authorization');
    // Like API Gateway: an empty identity source is a 401 without calling the authorizer.
    if (!authorization) return gatewayErrorResponse('UNAUTHORIZED');
    const decision = await cache.get(authorization, () => invocation(lambdaContext(AUTHORIZER_FUNCTION), (context) => authorizer(authorizerEvent(event), context)));
    if (decision === 'unauthorized') return gatewayErrorResponse('UNAUTHORIZED');
    if (decision === 'failed') return gatewayErrorResponse('AUTHORIZER_FAILURE');
    if (!policyAllows([decision.policyDocument.Statement].flat() as Statement[], { action: 'execute-api:Invoke', resource: methodArn(event) })) return gatewayErrorResponse('ACCESS_DENIED', { authorizer: decision.context ?? undefined });
    event.requestContext.authorizer = { principalId: decision.principalId, ...decision.context };
  }
  return invocation(lambdaContext(match.route.function), (context) => match.handler(event, context));
}

/** A route with its path pattern and loaded handler (the bench invokes handlers through these too). */
export async function compileRoute(route: Route): Promise<CompiledRoute> {
  const parameterNames: string[] = [];
  const source = `${API_BASE_PATH}${route.path}`.replace(/\{(\w+)\}/g, (_, name: string) => {
    parameterNames.push(name);
    return '([^/]+)';
  });
  const handler = (await importFunction(route.function)) as ProxyHandler;
  return { route, pattern: new RegExp(`^${source}/?$`), parameterNames, handler };
}

async function importFunction(name: string): Promise<unknown> {
  // A computed path (not a template literal) so test runners load nested handler files too.
  const file = fileURLToPath(new URL(`../../functions/${name}.ts`, import.meta.url));
  const module = (await import(file)) as { handler?: unknown };
  if (typeof module.handler !== 'function') throw new Error(`functions/${name}.ts does not export a handler`);
  return module.handler;
}

async function readBody(req: IncomingMessage): Promise<GatewayRequest['body'] | 'too large'> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) {
    req.resume();
    return 'too large';
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) {
      req.resume();
      return 'too large';
    }
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return null;
  const bytes = Buffer.concat(chunks);
  // As the stack's API: JSON bodies are binary media types, passed as the client's bytes (json-api-gateway.ts).
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  return (JSON_BODY_TYPES as readonly string[]).includes(type) ? { base64: bytes.toString('base64') } : bytes.toString('utf8');
}

/** An HTTP request as the gateway sees it: raw header pairs keep the client's header casing. */
export interface GatewayRequest {
  url: URL;
  rawHeaders: string[];
  /** Text, or the client's bytes base64-encoded (a binary media type). */
  body: string | { base64: string } | null;
  httpVersion?: string;
  sourceIp?: string;
}

/** The REST API (v1) proxy event API Gateway would send the route's function for this request. */
export function proxyEvent(req: GatewayRequest, match: CompiledRoute): APIGatewayProxyEvent {
  const { url, body } = req;
  const { headers, multiValueHeaders } = headersOf(req.rawHeaders);
  headers['X-Forwarded-Proto'] = 'http';
  multiValueHeaders['X-Forwarded-Proto'] = ['http'];
  const { query, multiQuery } = queryOf(url.search.slice(1));

  const values = match.pattern.exec(url.pathname)!.slice(1);
  const pathParameters = Object.fromEntries(match.parameterNames.map((name, i) => [name, decode(values[i]!)]));
  const resource = `${API_BASE_PATH}${match.route.path}`;
  const hasQuery = Object.keys(query).length > 0;
  return {
    resource,
    path: url.pathname,
    httpMethod: match.route.method,
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters: match.parameterNames.length > 0 ? pathParameters : null,
    stageVariables: null,
    body: typeof body === 'object' && body !== null ? body.base64 : body,
    isBase64Encoded: typeof body === 'object' && body !== null,
    requestContext: {
      accountId: ACCOUNT,
      apiId: API_ID,
      authorizer: null,
      domainName: headerValue(headers, 'host') ?? '127.0.0.1',
      httpMethod: match.route.method,
      path: url.pathname,
      protocol: `HTTP/${req.httpVersion ?? '1.1'}`,
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: resource,
      stage: STAGE,
      identity: { sourceIp: req.sourceIp ?? '127.0.0.1', userAgent: headerValue(headers, 'user-agent') ?? null } as APIGatewayProxyEvent['requestContext']['identity'],
    },
  };
}

function authorizerEvent(event: APIGatewayProxyEvent): APIGatewayRequestAuthorizerEvent {
  return {
    type: 'REQUEST',
    methodArn: methodArn(event),
    resource: event.resource,
    path: event.path,
    httpMethod: event.httpMethod,
    headers: event.headers,
    multiValueHeaders: event.multiValueHeaders,
    queryStringParameters: event.queryStringParameters,
    multiValueQueryStringParameters: event.multiValueQueryStringParameters,
    pathParameters: event.pathParameters,
    stageVariables: event.stageVariables,
    requestContext: event.requestContext,
  } as APIGatewayRequestAuthorizerEvent;
}

const methodArn = (event: APIGatewayProxyEvent) =>
  `arn:aws:execute-api:${REGION}:${ACCOUNT}:${API_ID}/${STAGE}/${event.httpMethod}${event.resource}`;

type Decision = APIGatewayAuthorizerResult | 'unauthorized' | 'failed';

/** API Gateway's authorizer cache: one decision per identity-source value, for the TTL. */
class AuthorizerCache {
  private readonly entries = new Map<string, { decision: APIGatewayAuthorizerResult; expires: number }>();
  private readonly ttlMs: number;

  constructor(ttlMs: number) {
    this.ttlMs = ttlMs;
  }

  async get(identity: string, authorize: () => Promise<APIGatewayAuthorizerResult>): Promise<Decision> {
    const cached = this.entries.get(identity);
    if (cached && cached.expires > Date.now()) return cached.decision;
    try {
      const decision = await authorize();
      if (this.ttlMs > 0) this.entries.set(identity, { decision, expires: Date.now() + this.ttlMs });
      return decision;
    } catch (error) {
      if (error instanceof Error && error.message === 'Unauthorized') return 'unauthorized';
      console.error('authorizer failed', error instanceof Error ? error.name : 'unknown error');
      return 'failed';
    }
  }
}

/**
 * Every function runs in this one process, many invocations at once: as Lambda does when an
 * environment takes concurrent invocations (AWS_LAMBDA_MAX_CONCURRENCY), each invocation gets its
 * own InvokeStore context, where Powertools keeps its per-invocation state (the logger's keys and
 * Lambda context), so no request's keys end up on another's log lines. Installed in place of any
 * store already there: the AWS SDK creates a single-context one on its first call.
 */
class ConcurrentInvocations extends InvokeStoreBase {
  readonly #contexts = new AsyncLocalStorage<Record<string | symbol, unknown>>();
  getContext() { return this.#contexts.getStore(); }
  hasContext() { return this.#contexts.getStore() !== undefined; }
  get<T>(key: string | symbol) { return this.#contexts.getStore()?.[key] as T | undefined; }
  set<T>(key: string | symbol, value: T) {
    const context = this.#contexts.getStore();
    if (!context || this.isProtectedKey(key)) throw new Error(`InvokeStore: cannot set ${String(key)} here`);
    context[key] = value;
  }
  run<T>(context: Record<string | symbol, unknown>, fn: () => T): T { return this.#contexts.run(context, fn); }
}
const invocations = new ConcurrentInvocations();

function concurrentInvocations(): void {
  const lambda = globalThis as { awslambda?: Record<string, unknown> };
  (lambda.awslambda ??= {}).InvokeStore = invocations;
  process.env.AWS_LAMBDA_MAX_CONCURRENCY ??= '1000';
}

/** One invocation in its own InvokeStore context, keyed by its request id as the runtime does. */
function invocation<T>(context: Context, invoke: (context: Context) => Promise<T>): Promise<T> {
  return invocations.run({ [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: context.awsRequestId }, () => invoke(context));
}

export function lambdaContext(functionName: string): Context {
  const deadline = Date.now() + 29_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function send(res: ServerResponse, result: APIGatewayProxyResult): void {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) headers[name] = values.map(String);
  const body = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body ?? '', 'utf8');
  if (result.statusCode !== 204) headers['Content-Length'] = String(body.length);
  res.writeHead(result.statusCode, headers);
  res.end(result.statusCode === 204 ? undefined : body);
}
