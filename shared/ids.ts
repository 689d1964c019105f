import { randomInt } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` characters of [A-Za-z0-9], uniformly distributed (randomInt rejects modulo bias). */
export function randomAlphanumeric(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

const ID_PREFIXES = ['rtk', 'wsc', 'at', 'run', 'trust'] as const;
type IdPrefix = (typeof ID_PREFIXES)[number];

/** Resource ids in the HCP Terraform shape: a type prefix and 16 alphanumerics. */
export const newId = (prefix: IdPrefix) => `${prefix}-${randomAlphanumeric(16)}`;

const ID_PATTERNS = Object.fromEntries(ID_PREFIXES.map((p) => [p, new RegExp(`^${p}-[A-Za-z0-9]{16}$`)])) as Record<IdPrefix, RegExp>;

export const isId = (prefix: IdPrefix, value: string | undefined): value is string => value !== undefined && ID_PATTERNS[prefix].test(value);

/** ISO-8601 UTC with milliseconds and `Z`: the only timestamp format the API emits. */
export const now = () => new Date().toISOString();
