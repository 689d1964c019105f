import { isExpired, type Principal } from './principal';
import { tokenIdOf, tokenMatchesHash } from './token-secret';
import { findToken } from '../store/tokens';
import type { TokenRejection } from '../observability/metrics';

export type TokenCheck = { principal: Principal } | { rejected: TokenRejection };

/**
 * Exactly `Bearer` (any case), one or more spaces or tabs, the token, nothing after it (RFC 9110
 * §11.6.2). The WAF's rate-limit key lowercases and compresses whitespace, so every spelling
 * accepted here counts against the one bucket of its token.
 */
const BEARER = /^bearer[ \t]+([^ \t]+)$/i;

/**
 * Checks an `Authorization` header: the principal of a live token, or why it is refused. One
 * GetItem at most; a malformed token costs no read at all. Store failures are thrown, not refusals.
 */
export async function checkToken(authorization: string | undefined, at = new Date()): Promise<TokenCheck> {
  const token = BEARER.exec(authorization ?? '')?.[1];
  const tokenId = token ? tokenIdOf(token) : undefined;
  if (!token || !tokenId) return { rejected: 'malformed' };

  const record = await findToken(tokenId);
  if (!record || !tokenMatchesHash(token, record.tokenHash)) return { rejected: 'unknown' };
  if (record.revokedAt !== undefined) return { rejected: 'revoked' };
  if (isExpired(record.expiresAt, at)) return { rejected: 'expired' };
  const principal: Principal = { subject: record.subject, tokenId: record.tokenId, grants: record.grants };
  if (record.expiresAt !== undefined) principal.expiresAt = record.expiresAt;
  return { principal };
}

/** The principal of a live token, or undefined for anything else. */
export async function authenticate(authorization: string | undefined, at = new Date()): Promise<Principal | undefined> {
  const check = await checkToken(authorization, at);
  return 'principal' in check ? check.principal : undefined;
}
