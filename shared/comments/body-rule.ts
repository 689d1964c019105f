/** A comment's type and body rule: what comment.ts validates and the OpenAPI document states. */
export const COMMENT_TYPE = 'comments';
/** Keeps a full list page (100 comments) far under Lambda's 6 MB response limit. */
export const MAX_COMMENT_BODY_BYTES = 16_384;
/** Control characters (C0, DEL, C1) other than tab, LF and CR, or a lone surrogate (not storable as UTF-8). */
export const INVALID_CHARACTER = /(?![\t\n\r])\p{Cc}|\p{Cs}/u;
