/**
 * Organization names, one rule for the API and the operator CLI: HCP Terraform's characters
 * (ASCII letters, digits, `-` and `_`), starting with a letter or digit, at most 90 characters.
 * The first character rules out `__proto__`, the one name a plain JavaScript object cannot hold
 * as a key; the length keeps every DynamoDB key built from a name far below its 2,048-byte limit.
 */
export const ORGANIZATION_NAME_MAX_LENGTH = 90;

export const ORGANIZATION_NAME = new RegExp(`^[A-Za-z0-9][A-Za-z0-9_-]{0,${ORGANIZATION_NAME_MAX_LENGTH - 1}}$`);

export const isOrganizationName = (name: unknown): name is string =>
  typeof name === 'string' && ORGANIZATION_NAME.test(name);

/** The rule in words, for the CLI's refusal and the README. */
export const ORGANIZATION_NAME_RULE = `1-${ORGANIZATION_NAME_MAX_LENGTH} letters, digits, - or _, starting with a letter or digit`;
