import { randomInt } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` characters of [A-Za-z0-9], uniformly distributed (randomInt rejects modulo bias). */
export function randomAlphanumeric(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

const ID_PREFIXES = ['rtk', 'wsc', 'at', 'run', 'trust'] as const;
export type IdPrefix = (typeof ID_PREFIXES)[number];

/** Resource ids in the HCP Terraform shape: a type prefix and 16 alphanumerics. */
export const newId = (prefix: IdPrefix) => `${prefix}-${randomAlphanumeric(16)}`;

const ID_PATTERNS = Object.fromEntries(ID_PREFIXES.map((p) => [p, new RegExp(`^${p}-[A-Za-z0-9]{16}$`)])) as Record<
  IdPrefix,
  RegExp
>;

/** The one rule for an id of `prefix`, for the checks here and the OpenAPI document. */
export const idPattern = (prefix: IdPrefix): RegExp => ID_PATTERNS[prefix];

export const isId = (prefix: IdPrefix, value: string | undefined): value is string =>
  value !== undefined && ID_PATTERNS[prefix].test(value);

/** ISO-8601 UTC with milliseconds and `Z`: the only timestamp format the API emits. */
export const now = () => new Date().toISOString();
/** What `now()` prints, as the OpenAPI document states it. */
export const TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
