/** A reserved tag key's type and rule: what reserved-tag-key.ts validates and the OpenAPI document states. */
export const RESERVED_TAG_KEY_TYPE = 'reserved-tag-keys';
export const KEY_MAX_LENGTH = 128;
/** 1-128 of ASCII letters, digits, space and . = + - @ : _ — with no space at either end (the OpenAPI document's too). */
export const KEY_PATTERN = new RegExp(`^(?! )[A-Za-z0-9 .=+\\-@:_]{1,${KEY_MAX_LENGTH}}(?<! )$`);
/**
 * The live keys an organization may hold. The organization's head, which every change of a key
 * writes whole, grows with them (a count per span of up to 100 keys: shared/store/tag-key-windows.ts):
 * at this many a change writes 2 to 3 units there, and the head stays far from DynamoDB's 400 KB
 * item limit.
 */
export const KEYS_PER_ORGANIZATION = 10_000;
