import * as errors from '../jsonapi/errors';
import { errorResponse } from './responses';
import { MAX_BODY_BYTES } from '../config';
import { DETAIL_CONTEXT_KEY, UNAUTHORIZED_DETAIL } from '../auth/unauthorized';

/**
 * The errors API Gateway answers by itself, before or instead of a function: one entry per gateway
 * response type (AWS docs, "Gateway response types for API Gateway"). The CDK stack turns each
 * into a gateway response with an explicit status, so no AWS default (`{"message": …}`, 403 for an
 * unknown route) reaches a client, and the local gateway sends the same bodies.
 */

/**
 * What a gateway response may take from the request. A gateway response's template is not VTL: API
 * Gateway substitutes `$context` variables into it, `$context.authorizer.<key>` among them (the
 * stringified value of that key of the authorizer's context).
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-swagger-extensions-gateway-responses.responseTemplates.html
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-mapping-template-reference.html
 */
export interface GatewayRequest {
  /** The authorizer's context (a Deny's carries the 401's detail). */
  authorizer?: Record<string, unknown>;
}

/** The unknown route's detail: API Gateway answers it before any authentication. */
export const UNKNOWN_PATH_DETAIL = 'unknown path: no endpoint of this API is at this path';

/** 429 from the stage throttle (a token bucket refilled every second): retry after one second. */
const tooManyRequests = () =>
  new errors.ApiError(429, 'too many requests', undefined, undefined, {
    'Retry-After': '1',
    'X-RateLimit-Reset': '1.000',
  });

export const GATEWAY_ERRORS = {
  /**
   * No Authorization header, or an empty one: API Gateway answers without calling the authorizer
   * when a REQUEST authorizer's identity source is missing, null or empty. It would also answer this
   * if the authorizer threw "Unauthorized", which ours never does: it refuses with a Deny.
   * https://repost.aws/knowledge-center/api-gateway-401-error-lambda-authorizer
   */
  UNAUTHORIZED: () => new errors.Unauthorized(UNAUTHORIZED_DETAIL.missing),
  /**
   * The authorizer's Deny: it rejects a token by denying it (its Allow always covers the whole API),
   * so this is a 401, whose detail the Deny's context gives: not a Bearer token, or not accepted.
   */
  ACCESS_DENIED: (request?: GatewayRequest) => new errors.Unauthorized(detailOf(request?.authorizer)),
  /** AWS credentials (SigV4) and API keys are not used here; if one ever reached API Gateway, the contract answers 401. */
  INVALID_SIGNATURE: () => new errors.Unauthorized(),
  EXPIRED_TOKEN: () => new errors.Unauthorized(),
  INVALID_API_KEY: () => new errors.Unauthorized(),
  /**
   * API Gateway's name for an unknown route (every known path has an ANY method: another method is
   * a 405); it would say 403 "Missing Authentication Token", the contract says 404 and why.
   */
  MISSING_AUTHENTICATION_TOKEN: () => new errors.ApiError(404, 'not found', UNKNOWN_PATH_DETAIL),
  RESOURCE_NOT_FOUND: () => new errors.NotFound(),
  /** WAF blocked without a custom response: a managed rule, or a call that bypassed the published address. */
  WAF_FILTERED: () => new errors.Forbidden('the request was blocked by the web application firewall'),
  REQUEST_TOO_LARGE: () => new errors.PayloadTooLarge(MAX_BODY_BYTES),
  /** Never expected: the 405 and discovery mocks pass a body of a type they have no template for through (WHEN_NO_MATCH). */
  UNSUPPORTED_MEDIA_TYPE: () =>
    new errors.UnsupportedMediaType('the request body has a media type this resource does not accept'),
  /** Request validators are off (the functions validate), so these cannot occur; if they did, they are the client's. */
  BAD_REQUEST_BODY: () => new errors.BadRequest('the request body is not valid'),
  BAD_REQUEST_PARAMETERS: () => new errors.BadRequest('the request parameters are not valid'),
  THROTTLED: () => tooManyRequests(),
  QUOTA_EXCEEDED: () => tooManyRequests(),
  /** The authorizer threw (the token store failed or timed out) or could not be reached: retryable. */
  AUTHORIZER_FAILURE: () => new errors.Unavailable(),
  AUTHORIZER_CONFIGURATION_ERROR: () => new errors.Unavailable(),
  /** API Gateway's 29 s limit. */
  INTEGRATION_TIMEOUT: () => new errors.GatewayTimeout(),
  /**
   * A function error that escaped the handler's own error handling (every thrown error, and a
   * handler about to time out, is answered inside the function): what is left is the runtime's
   * own, a timeout during init or past the handler's margin ("Task timed out"), or a crash. 504 is
   * AWS's default status for this type and the contract's for a function that ran out of time;
   * python-tfe retries 502, 503 and 504 alike.
   */
  INTEGRATION_FAILURE: () => new errors.GatewayTimeout(),
  API_CONFIGURATION_ERROR: () => new errors.InternalError(),
  /** Fallbacks for any type not listed above: a body, and no status (see FALLBACK_TYPES). */
  DEFAULT_4XX: () => new errors.BadRequest('the request could not be processed'),
  DEFAULT_5XX: () => new errors.InternalError(),
} satisfies Record<string, (request?: GatewayRequest) => errors.ApiError>;

/** The Deny's detail, when it is one of the texts a 401 may say; otherwise the text for a refused token. */
function detailOf(authorizer: Record<string, unknown> | undefined): string {
  const detail = authorizer?.[DETAIL_CONTEXT_KEY];
  return typeof detail === 'string' && detail !== '' ? detail : UNAUTHORIZED_DETAIL.notAccepted;
}

export type GatewayErrorType = keyof typeof GATEWAY_ERRORS;

/**
 * A status code set on DEFAULT_4XX or DEFAULT_5XX becomes the status of every 4xx or 5xx type that
 * is not customized itself (AWS docs, "Gateway response types"): these two carry a body only.
 */
export const FALLBACK_TYPES: readonly GatewayErrorType[] = ['DEFAULT_4XX', 'DEFAULT_5XX'];

export const gatewayErrorResponse = (type: GatewayErrorType, request?: GatewayRequest) =>
  errorResponse(GATEWAY_ERRORS[type](request));
