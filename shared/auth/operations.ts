import { isExpired, type Principal } from './principal';
import { tokenIdOf, tokenMatchesHash } from './token-secret';
import { findToken } from '../store/tokens';
import type { TokenRejection } from '../observability/metrics';
import { UNAUTHORIZED_DETAIL } from './unauthorized';
import {
  checkWorkloadIdentity,
  looksLikeJwt,
  type JwtRefusal,
  type WorkloadIdentityRefusal,
} from '../workload-identity/verify';

/**
 * `why` says more than the metric's reason, for the log line: which check refused a JWT; `jwt`,
 * what the log line may say of it (its iss, aud and sub; the checks that failed, by name).
 */
export type TokenCheck =
  | { principal: Principal /** The trusts that accepted a workload identity token. */; trustIds?: string[] }
  | { rejected: TokenRejection; detail: string; why?: JwtRefusal; jwt?: RefusedJwt };
export type RefusedJwt = Omit<WorkloadIdentityRefusal, 'refused'>;

/** A refused JWT counts under the reason an operator token would: shape, unknown, or expired. */
const JWT_REJECTION: Record<JwtRefusal, TokenRejection> = {
  'too-long': 'malformed',
  unreadable: 'malformed',
  invalid: 'malformed',
  'untrusted-issuer': 'unknown',
  'no-trust-matches': 'unknown',
  expired: 'expired',
};

/**
 * Exactly `Bearer` (any case), one or more spaces or tabs, the token, nothing after it (RFC 9110
 * §11.6.2). The WAF's rate-limit key lowercases and compresses whitespace, so every spelling
 * accepted here counts against the one bucket of its token.
 */
const BEARER = /^bearer[ \t]+([^ \t]+)$/i;

/**
 * Checks an `Authorization` header: the principal of a live token, or why it is refused (for the
 * metric) with what the client is told. An operator token costs one GetItem at most, a JWT one
 * Query of its issuer's trusts (shared/workload-identity/verify.ts); a malformed token costs no
 * read at all. Store failures, and an issuer whose keys cannot be had, are thrown, not refusals.
 */
export async function checkToken(authorization: string | undefined, at = new Date()): Promise<TokenCheck> {
  if (!authorization) return { rejected: 'malformed', detail: UNAUTHORIZED_DETAIL.missing };
  const token = BEARER.exec(authorization)?.[1];
  if (!token) return { rejected: 'malformed', detail: UNAUTHORIZED_DETAIL.notBearer };
  if (looksLikeJwt(token)) {
    const check = await checkWorkloadIdentity(token, at);
    if ('principal' in check) return check;
    const { refused, ...jwt } = check;
    return {
      rejected: JWT_REJECTION[refused],
      detail: UNAUTHORIZED_DETAIL.notAccepted,
      why: refused,
      ...(Object.keys(jwt).length > 0 ? { jwt } : {}),
    };
  }
  const tokenId = tokenIdOf(token);
  // A Bearer token of the wrong shape is a token this service does not accept, like an unknown one.
  if (!tokenId) return { rejected: 'malformed', detail: UNAUTHORIZED_DETAIL.notAccepted };

  const record = await findToken(tokenId);
  if (!record || !tokenMatchesHash(token, record.tokenHash))
    return { rejected: 'unknown', detail: UNAUTHORIZED_DETAIL.notAccepted };
  if (record.revokedAt !== undefined) return { rejected: 'revoked', detail: UNAUTHORIZED_DETAIL.notAccepted };
  if (isExpired(record.expiresAt, at)) return { rejected: 'expired', detail: UNAUTHORIZED_DETAIL.notAccepted };
  const principal: Principal = { subject: record.subject, tokenId: record.tokenId, grants: record.grants };
  if (record.expiresAt !== undefined) principal.expiresAt = record.expiresAt;
  return { principal };
}

/** The principal of a live token, or undefined for anything else. */
export async function authenticate(authorization: string | undefined, at = new Date()): Promise<Principal | undefined> {
  const check = await checkToken(authorization, at);
  return 'principal' in check ? check.principal : undefined;
}
