import { randomInt } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` characters of [A-Za-z0-9], uniformly distributed (randomInt rejects modulo bias). */
export function randomAlphanumeric(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

/** Resource ids in the HCP Terraform shape: a type prefix and 16 alphanumerics. */
export const newId = (prefix: 'rtk' | 'wsc' | 'at' | 'run') => `${prefix}-${randomAlphanumeric(16)}`;

export const isId = (prefix: 'rtk' | 'wsc' | 'at' | 'run', value: string | undefined): value is string =>
  value !== undefined && new RegExp(`^${prefix}-[A-Za-z0-9]{16}$`).test(value);

/** ISO-8601 UTC with milliseconds and `Z`: the only timestamp format the API emits. */
export const now = () => new Date().toISOString();
