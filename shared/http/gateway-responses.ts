import type { ApiError } from '../jsonapi/errors';
import * as errors from '../jsonapi/errors';
import { errorResponse } from './responses';
import { MAX_BODY_BYTES } from '../config';

/**
 * The errors API Gateway answers by itself, before any function runs. The CDK stack turns each
 * into a gateway response and the local gateway sends the same body, so neither leaks AWS's
 * default `{"message": …}` shape that go-tfe cannot read.
 */
/** 429 with the wait in both forms go-tfe reads: whole seconds and float seconds. */
const tooManyRequests = () =>
  new errors.ApiError(429, 'too many requests', undefined, undefined, { 'Retry-After': '1', 'X-RateLimit-Reset': '1.000' });

export const GATEWAY_ERRORS = {
  /** Missing, malformed, unknown, revoked or expired token. */
  UNAUTHORIZED: () => new errors.Unauthorized(),
  /** The authorizer's policy denied the call. */
  ACCESS_DENIED: () => new errors.Forbidden('the token may not call this API'),
  /** API Gateway's name for an unknown route; it would say 403, the contract says 404. */
  MISSING_AUTHENTICATION_TOKEN: () => new errors.NotFound(),
  RESOURCE_NOT_FOUND: () => new errors.NotFound(),
  REQUEST_TOO_LARGE: () => new errors.PayloadTooLarge(MAX_BODY_BYTES),
  THROTTLED: () => tooManyRequests(),
  QUOTA_EXCEEDED: () => tooManyRequests(),
  DEFAULT_4XX: () => new errors.BadRequest('the request could not be processed'),
  DEFAULT_5XX: () => new errors.InternalError(),
} satisfies Record<string, () => ApiError>;

export type GatewayErrorType = keyof typeof GATEWAY_ERRORS;

export const gatewayErrorResponse = (type: GatewayErrorType) => errorResponse(GATEWAY_ERRORS[type]());
