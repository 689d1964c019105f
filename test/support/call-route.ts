import type { Principal } from '#shared/auth/principal';
import { lambdaContext, routeInvocation } from './lambda-events';

export interface RouteAnswer {
  status: number;
  /** The parsed body; undefined when empty. */
  json: any;
  headers: Record<string, unknown>;
}

/**
 * One request to the real handler of its route, in this process (as the authorizer had let
 * `principal` through): for int tests and the bench, where HTTP and child processes would only
 * blur what is measured or raced.
 */
export async function callRoute(
  functionName: string,
  path: string,
  principal: Principal,
  body?: unknown,
  headers: Record<string, string> = {},
  /** The time the invocation has (Lambda's remaining time): the request's deadline comes from it. */
  remainingMs?: number,
): Promise<RouteAnswer> {
  const { handler, event, route } = await routeInvocation({
    function: functionName,
    path,
    principal,
    body,
    headers: Object.entries(headers),
  });
  const response = await handler(event, lambdaContext(route.function, remainingMs));
  return {
    status: response.statusCode,
    json: response.body ? JSON.parse(response.body) : undefined,
    headers: response.headers ?? {},
  };
}
