import type { APIGatewayProxyResult } from 'aws-lambda';
import { API_VERSION, APP_NAME, RATE_LIMIT_PER_SECOND } from '../config';
import { errorDocument, type ApiError } from '../jsonapi/errors';
import { JSONAPI_MEDIA_TYPE } from '../jsonapi/media-type';

/** The headers of contract section 6, on every response the API or its gateway sends. */
export const COMMON_HEADERS: Readonly<Record<string, string>> = {
  'TFP-API-Version': API_VERSION,
  'TFP-AppName': APP_NAME,
  'X-RateLimit-Limit': String(RATE_LIMIT_PER_SECOND),
  'Cache-Control': 'no-store',
};

/**
 * The id of the request, as API Gateway's `$context.requestId` (in a function:
 * `event.requestContext.requestId`): the same id the access log and the functions' logs carry.
 */
export const REQUEST_ID_HEADER = 'X-Request-Id';

export const responseHeaders = (hasBody: boolean): Record<string, string> =>
  hasBody ? { 'Content-Type': JSONAPI_MEDIA_TYPE, ...COMMON_HEADERS } : { ...COMMON_HEADERS };

/** An error as the contract's response: JSON:API body, common headers, and the error's own (Retry-After). */
export function errorResponse(error: ApiError): APIGatewayProxyResult {
  return {
    statusCode: error.status,
    headers: { ...responseHeaders(true), ...error.headers },
    body: JSON.stringify(errorDocument(error)),
  };
}
