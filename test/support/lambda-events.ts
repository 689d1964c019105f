import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { encodePrincipal, type Principal } from '#shared/auth/principal';
import { API_BASE_PATH } from '#shared/config';
import { routes, type Route } from '#shared/routes';

/**
 * The events and contexts Lambda hands a function, for tests that invoke a handler in their own
 * process: one builder of each, shaped as API Gateway's REST API (v1) proxy integration sends them.
 */

type Identity = APIGatewayProxyEvent['requestContext']['identity'];

export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** A request as a client sent it, before API Gateway turned it into a proxy event. */
export interface ProxyRequest {
  /** Default GET. */
  method?: string;
  /** The full path, with its query string if any: `/api/v2/ping?x=1`. */
  path: string;
  /** The API Gateway resource that matched (`/api/v2/runs/{run_id}/comments`); default: the path. */
  resource?: string;
  pathParameters?: Record<string, string> | null;
  /** Header lines as sent, in order, each name in the client's casing (a name may repeat). */
  headers?: Array<[string, string]>;
  body?: string | null;
  /** The body is the client's bytes, base64-encoded (a binary media type). */
  isBase64Encoded?: boolean;
  stageVariables?: Record<string, string> | null;
  /** What the authorizer passed on (`requestContext.authorizer`). */
  authorizer?: APIGatewayProxyEvent['requestContext']['authorizer'];
}

/** The proxy event API Gateway would send for `request`. */
export function proxyEvent(request: ProxyRequest): APIGatewayProxyEvent {
  const method = request.method ?? 'GET';
  const [path, search = ''] = request.path.split(/\?(.*)/s) as [string, string?];
  const headers: Record<string, string> = Object.create(null);
  const multiValueHeaders: Record<string, string[]> = Object.create(null);
  for (const [name, value] of request.headers ?? []) {
    headers[name] = value;
    (multiValueHeaders[name] ??= []).push(value);
  }
  const query: Record<string, string> = Object.create(null);
  const multiQuery: Record<string, string[]> = Object.create(null);
  for (const pair of search.split('&').filter(Boolean)) {
    const [rawName, ...rest] = pair.split('=');
    const [name, value] = [decode(rawName!), decode(rest.join('='))];
    query[name] = value;
    (multiQuery[name] ??= []).push(value);
  }
  const hasQuery = Object.keys(query).length > 0;
  const resource = request.resource ?? path;
  const header = (wanted: string) => Object.entries(headers).find(([name]) => name.toLowerCase() === wanted)?.[1];
  return {
    resource,
    path,
    httpMethod: method,
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters: request.pathParameters ?? null,
    stageVariables: request.stageVariables ?? null,
    body: request.body ?? null,
    isBase64Encoded: request.isBase64Encoded ?? false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'test',
      authorizer: request.authorizer ?? null,
      domainName: header('host') ?? '127.0.0.1',
      httpMethod: method,
      path,
      protocol: 'HTTP/1.1',
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: 'test',
      resourcePath: resource,
      stage: 'test',
      identity: { sourceIp: '127.0.0.1', userAgent: header('user-agent') ?? null } as Identity,
    },
  };
}

/** Percent-escapes decoded as API Gateway decodes them (`page%5Bsize%5D` → `page[size]`). */
function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The Lambda context of one invocation of `functionName`, with `remainingMs` left before its timeout. */
export function lambdaContext(functionName: string, remainingMs = 29_000): Context {
  const deadline = Date.now() + remainingMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'test',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** The Accept header line a request of these tests sends unless it says otherwise. */
export const ACCEPT_JSON_API: [string, string] = ['Accept', 'application/vnd.api+json'];

export interface RouteRequest {
  /** The route's function, as the route table names it (`comments/create`). */
  function: string;
  /** The path under /api/v2, with its query string if any. */
  path: string;
  /** As the authorizer had let it through; none for a route without a role. */
  principal?: Principal;
  /** A request document, sent as JSON:API. */
  body?: unknown;
  /** Header lines beyond Host, Accept and (with a body) Content-Type. */
  headers?: Array<[string, string]>;
}

export interface RouteInvocation {
  handler: ProxyHandler;
  event: APIGatewayProxyEvent;
  route: Route;
}

/**
 * The real handler of a route and the proxy event API Gateway would send it for `request`, the
 * route found by its function and path (`/runs/run-x/comments` → `run_id: 'run-x'`).
 */
export async function routeInvocation(request: RouteRequest): Promise<RouteInvocation> {
  const path = `${API_BASE_PATH}${request.path}`;
  const pathname = path.split('?')[0]!;
  const match = routes
    .filter((r) => r.function === request.function)
    .map((route) => ({ route, ...matchPath(route, pathname) }))
    .find((m) => m.pathParameters !== undefined);
  if (!match) throw new Error(`${request.function} serves no route at ${request.path}`);
  const event = proxyEvent({
    method: match.route.method,
    path,
    resource: `${API_BASE_PATH}${match.route.path}`,
    pathParameters: match.pathParameters,
    headers: [
      ['Host', '127.0.0.1'],
      ACCEPT_JSON_API,
      ...(request.body === undefined ? [] : [['Content-Type', 'application/vnd.api+json'] as [string, string]]),
      ...(request.headers ?? []),
    ],
    body: request.body === undefined ? null : JSON.stringify(request.body),
    authorizer: request.principal ? authorizerContext(request.principal) : null,
  });
  return { handler: await handlerOf(match.route.function), event, route: match.route };
}

/** What the authorizer passes on for `principal`: `requestContext.authorizer`. */
export const authorizerContext = (principal: Principal) => ({
  principalId: principal.subject,
  ...encodePrincipal(principal),
});

/** `pathname`'s path parameters on `route` (null for a route without any); none if it does not match. */
function matchPath(route: Route, pathname: string): { pathParameters?: Record<string, string> | null } {
  const names: string[] = [];
  const pattern = `${API_BASE_PATH}${route.path}`.replace(/\{(\w+)\}/g, (_, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  const values = new RegExp(`^${pattern}/?$`).exec(pathname)?.slice(1);
  if (!values) return {};
  if (names.length === 0) return { pathParameters: null };
  return { pathParameters: Object.fromEntries(names.map((name, i) => [name, decode(values[i]!)])) };
}

const handlers = new Map<string, Promise<ProxyHandler>>();

/** The handler a function's module exports (`functions/comments/create.ts`), loaded once. */
export function handlerOf(functionName: string): Promise<ProxyHandler> {
  if (!handlers.has(functionName)) {
    handlers.set(
      functionName,
      (async () => {
        // A computed file path (not a template literal import): jest then loads nested handler files too.
        const file = fileURLToPath(new URL(`../../functions/${functionName}.ts`, import.meta.url));
        const module = (await import(file)) as { handler?: unknown };
        if (typeof module.handler === 'function') return module.handler as ProxyHandler;
        throw new Error(`functions/${functionName}.ts does not export a handler`);
      })(),
    );
  }
  return handlers.get(functionName)!;
}
