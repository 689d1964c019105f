import { compileRoute, lambdaContext, proxyEvent, type CompiledRoute } from '#infra/local/gateway';
import { encodePrincipal, type Principal } from '#shared/auth/principal';
import { API_BASE_PATH } from '#shared/config';
import { routes } from '#shared/routes';

export interface RouteAnswer {
  status: number;
  /** The parsed body; undefined when empty. */
  json: any;
}

const compiled = new Map<string, Promise<CompiledRoute[]>>();

/**
 * One request to the real handler of its route, in this process (as the authorizer had let
 * `principal` through): for int tests and the bench, where HTTP and child processes would only
 * blur what is measured or raced.
 */
export async function callRoute(functionName: string, path: string, principal: Principal, body?: unknown, headers: Record<string, string> = {}): Promise<RouteAnswer> {
  if (!compiled.has(functionName)) compiled.set(functionName, Promise.all(routes.filter((r) => r.function === functionName).map(compileRoute)));
  const url = new URL(`http://127.0.0.1${API_BASE_PATH}${path}`);
  const route = (await compiled.get(functionName)!).find((c) => c.pattern.test(url.pathname));
  if (!route) throw new Error(`${functionName} serves no route at ${path}`);
  const event = proxyEvent({
    url,
    rawHeaders: ['Host', '127.0.0.1', 'Accept', 'application/vnd.api+json', ...(body === undefined ? [] : ['Content-Type', 'application/vnd.api+json']), ...Object.entries(headers).flat()],
    body: body === undefined ? null : JSON.stringify(body),
  }, route);
  event.requestContext.authorizer = { principalId: principal.subject, ...encodePrincipal(principal) };
  const response = await route.handler(event, lambdaContext(route.route.function));
  return { status: response.statusCode, json: response.body ? JSON.parse(response.body) : undefined };
}
