import { Forbidden, NotFound, Unauthorized } from '../jsonapi/errors';
import { isOrganizationName } from '../organizations';
import { UNAUTHORIZED_DETAIL } from './unauthorized';

export const ROLES = ['reader', 'member', 'owner'] as const;
export type Role = (typeof ROLES)[number];

export const isRole = (value: unknown): value is Role => ROLES.includes(value as Role);

/**
 * Who is calling: the subject a token was issued to (or a workload identity token's `sub`) and its
 * role in each organization.
 */
export interface Principal {
  subject: string;
  /** The operator token's id, or the ids of the trusts that accepted a workload identity token. */
  tokenId: string;
  grants: Record<string, Role>;
  /** Organizations where a run-scoped trust lets the caller act on one run only: its id. */
  runs?: Record<string, string>;
  /** When the token stops working (ISO-8601); absent for a token that never expires. */
  expiresAt?: string;
}

/** What an action needs, in the words a 403 detail uses. */
export const ROLE_RANK: Record<Role, number> = { reader: 0, member: 1, owner: 2 };

/**
 * Checks that the principal holds at least `minimum` in `organization`. An organization the
 * principal has no role in is a 404, exactly as if it did not exist, and so is a name no
 * organization can have (shared/organizations.ts); a role too low is a 403. A principal bound to
 * one run of the organization sees no other run (404) and nothing but runs (403): `run` names the
 * run the request is about, if it is about one.
 */
export function authorize(principal: Principal, organization: string, minimum: Role, run?: string): Role {
  const role =
    isOrganizationName(organization) && Object.hasOwn(principal.grants, organization)
      ? principal.grants[organization]
      : undefined;
  if (role === undefined || !isRole(role)) throw new NotFound();
  const boundRun =
    principal.runs && Object.hasOwn(principal.runs, organization) ? principal.runs[organization] : undefined;
  if (boundRun !== undefined && run !== boundRun) {
    if (run !== undefined) throw new NotFound();
    throw new Forbidden(
      `this token acts only on run ${boundRun} in organization ${organization}: its comments, nothing else`,
    );
  }
  if (ROLE_RANK[role] < ROLE_RANK[minimum]) {
    throw new Forbidden(
      `this action requires the ${minimum} role in organization ${organization}; the token has ${role}`,
    );
  }
  return role;
}

/** True when the principal can see the organization at all (any role). */
export const canSee = (principal: Principal, organization: string) => Object.hasOwn(principal.grants, organization);

/**
 * The organizations `authorize` lets the principal act on at `minimum` or above, the organization
 * itself and not only one run of it: a name no organization can have, or a run-bound grant, is left out.
 */
export const organizationsWith = (principal: Principal, minimum: Role) =>
  Object.entries(principal.grants)
    .filter(
      ([organization, role]) =>
        isOrganizationName(organization) &&
        isRole(role) &&
        ROLE_RANK[role] >= ROLE_RANK[minimum] &&
        !(principal.runs && Object.hasOwn(principal.runs, organization)),
    )
    .map(([organization]) => organization);

/** A token expires at its `expiresAt` instant, not after it. */
export const isExpired = (expiresAt: string | undefined, at: Date) =>
  expiresAt !== undefined && Date.parse(expiresAt) <= at.getTime();

/** Serialized into the authorizer context (API Gateway only passes flat string values). */
export const PRINCIPAL_CONTEXT_KEY = 'principal';

export function encodePrincipal(principal: Principal): Record<string, string> {
  return { [PRINCIPAL_CONTEXT_KEY]: JSON.stringify(principal) };
}

/**
 * The principal the authorizer passed, refused with 401 once its token has expired: API Gateway
 * may serve a cached authorizer answer for up to its TTL after that instant.
 */
export function decodePrincipal(context: Record<string, unknown> | null | undefined, at = new Date()): Principal {
  const raw = context?.[PRINCIPAL_CONTEXT_KEY];
  // Only a route without the authorizer would get here: nothing vouched for the token.
  if (typeof raw !== 'string') throw new Unauthorized(UNAUTHORIZED_DETAIL.notAccepted);
  const principal = JSON.parse(raw) as Principal;
  if (isExpired(principal.expiresAt, at)) throw new ExpiredToken();
  return principal;
}

/** A 401 that says which refusal it was, for the metric; the client reads the text of any refused token. */
export class ExpiredToken extends Unauthorized {
  constructor() {
    super(UNAUTHORIZED_DETAIL.notAccepted);
  }
}
