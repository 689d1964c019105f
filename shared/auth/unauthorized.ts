/**
 * What a 401 tells the client, one of three: enough for a newcomer to fix the request, nothing an
 * attacker can use (unknown, revoked and expired tokens get the same text). No `$`, `#`, `"` or
 * `\`: the texts travel through the authorizer's context into API Gateway's gateway response
 * templates, which substitute them as they are.
 */
export const UNAUTHORIZED_DETAIL = {
  missing: 'no Authorization header: send Authorization: Bearer <token>',
  notBearer: 'not a Bearer token: send Authorization: Bearer <token>',
  notAccepted: 'token not accepted: it is unknown, revoked or expired',
  ambiguous: 'more than one Authorization header: send exactly one Authorization: Bearer <token>',
} as const;

/** The key of a Deny's authorizer context that holds the 401's detail: `$context.authorizer.detail`. */
export const DETAIL_CONTEXT_KEY = 'detail';
