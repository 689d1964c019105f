import { hash, timingSafeEqual } from 'node:crypto';
import { APP_NAME } from '../config';
import { randomAlphanumeric } from '../ids';

/**
 * A token is `tfcapi_` + the 16 characters of its id + 40 random alphanumerics (238 bits).
 * The prefix makes a leaked token recognizable to secret scanners; carrying the id lets the
 * authorizer find the record with one GetItem, then compare hashes in constant time.
 */
export const TOKEN_PREFIX = `${APP_NAME.split('-')[0]}api_`;
const ID_LENGTH = 16;
const SECRET_LENGTH = 40;
const TOKEN_PATTERN = new RegExp(`^${TOKEN_PREFIX}([A-Za-z0-9]{${ID_LENGTH}})[A-Za-z0-9]{${SECRET_LENGTH}}$`);

export function newTokenSecret(): { tokenId: string; token: string } {
  const idPart = randomAlphanumeric(ID_LENGTH);
  return { tokenId: `at-${idPart}`, token: `${TOKEN_PREFIX}${idPart}${randomAlphanumeric(SECRET_LENGTH)}` };
}

/** The token id a well-formed token names, or undefined for anything else. */
export function tokenIdOf(token: string): string | undefined {
  const match = TOKEN_PATTERN.exec(token);
  return match ? `at-${match[1]}` : undefined;
}

/** SHA-256 suffices: the secret is 238 random bits, so there is nothing to brute-force slowly. */
export const hashToken = (token: string) => hash('sha256', token, 'base64url');

export function tokenMatchesHash(token: string, storedHash: string): boolean {
  const a = Buffer.from(hashToken(token));
  const b = Buffer.from(storedHash);
  return a.length === b.length && timingSafeEqual(a, b);
}
