import type { Principal } from './principal';
import { tokenIdOf, tokenMatchesHash } from './token-secret';
import { findToken } from '../store/tokens';

/**
 * Turns an `Authorization` header into a principal, or undefined for anything that is not a
 * live token: no header, another scheme, a malformed, unknown, revoked or expired token.
 * One GetItem at most; a malformed token costs no read at all.
 */
export async function authenticate(authorization: string | undefined, at = new Date()): Promise<Principal | undefined> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  const token = match?.[1];
  const tokenId = token ? tokenIdOf(token) : undefined;
  if (!token || !tokenId) return undefined;

  const record = await findToken(tokenId);
  if (!record || !tokenMatchesHash(token, record.tokenHash)) return undefined;
  if (record.revokedAt !== undefined) return undefined;
  if (record.expiresAt !== undefined && Date.parse(record.expiresAt) <= at.getTime()) return undefined;
  return { subject: record.subject, tokenId: record.tokenId, grants: record.grants };
}
