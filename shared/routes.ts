import type { Role } from './auth/principal';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';
/** What a function may do to the table: the CDK stack grants exactly this, nothing more. */
export type TableAccess = 'none' | 'read' | 'write';

export interface Route {
  method: HttpMethod;
  /** Under API_BASE_PATH, with API Gateway's `{name}` path parameters. */
  path: string;
  /** The handler file under functions/, without extension; it exports `handler`. */
  function: string;
  /** The least role this endpoint needs in the organization it touches; null = no token at all. */
  role: Role | null;
  access: TableAccess;
}

/**
 * Every endpoint of the API, in one place. The local gateway serves it, the CDK stack deploys it
 * and the load tests drive it. Adding an endpoint is one row here plus its handler file.
 */
export const routes: readonly Route[] = [
  { method: 'GET', path: '/ping', function: 'ping', role: null, access: 'none' },
  // Reserved tag keys. The docs name /reserved-tags/:id, go-tfe and python-tfe call /reserved-tag-keys/:id.
  { method: 'GET', path: '/organizations/{organization_name}/reserved-tag-keys', function: 'reserved-tag-keys/list', role: 'reader', access: 'read' },
  { method: 'POST', path: '/organizations/{organization_name}/reserved-tag-keys', function: 'reserved-tag-keys/create', role: 'owner', access: 'write' },
  { method: 'PATCH', path: '/reserved-tags/{reserved_tag_key_id}', function: 'reserved-tag-keys/update', role: 'owner', access: 'write' },
  { method: 'PATCH', path: '/reserved-tag-keys/{reserved_tag_key_id}', function: 'reserved-tag-keys/update', role: 'owner', access: 'write' },
  { method: 'DELETE', path: '/reserved-tags/{reserved_tag_key_id}', function: 'reserved-tag-keys/delete', role: 'owner', access: 'write' },
  { method: 'DELETE', path: '/reserved-tag-keys/{reserved_tag_key_id}', function: 'reserved-tag-keys/delete', role: 'owner', access: 'write' },
  // Comments on runs, authorized through the run's organization.
  { method: 'GET', path: '/runs/{run_id}/comments', function: 'comments/list', role: 'reader', access: 'read' },
  { method: 'POST', path: '/runs/{run_id}/comments', function: 'comments/create', role: 'member', access: 'write' },
  { method: 'GET', path: '/comments/{comment_id}', function: 'comments/show', role: 'reader', access: 'read' },
];

/** The REQUEST authorizer guarding every route whose role is not null. */
export const AUTHORIZER_FUNCTION = 'authorizer';

/** Distinct handler files: two routes may share one function (the PATCH and DELETE aliases). */
export const functionNames = (table: readonly Route[] = routes) => [...new Set(table.map((r) => r.function))];

export function routeOf(functionName: string, table: readonly Route[] = routes): Route {
  const route = table.find((r) => r.function === functionName);
  if (!route) throw new Error(`No route uses function ${functionName}`);
  return route;
}
