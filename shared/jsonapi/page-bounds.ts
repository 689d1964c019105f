/** The page parameters' bounds: the rule pagination.ts enforces and the OpenAPI document states. */
export const MAX_PAGE_SIZE = 100;
/**
 * The largest `page[number]` answered (2^31 − 1, the largest page number a 32-bit client can
 * send); any page up to it is a page, empty past the end, whatever the size.
 */
export const MAX_PAGE_NUMBER = 2_147_483_647;
