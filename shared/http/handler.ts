import middy, { type MiddlewareObj } from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { authorize, decodePrincipal, ExpiredToken, type Principal, type Role } from '../auth/principal';
import {
  ApiError,
  BadRequest,
  Forbidden,
  GatewayTimeout,
  InternalError,
  NotFound,
  Unauthorized,
  Unavailable,
  WriteOutcomeUnknown,
} from '../jsonapi/errors';
import { UNAUTHORIZED_DETAIL } from '../auth/unauthorized';
import { assertAcceptable, assertRequestContentType } from '../jsonapi/media-type';
import { assertNoInclusion } from '../jsonapi/inclusion';
import { parseRequestDocument, type RequestData } from '../jsonapi/request-document';
import { isStoreUnavailable } from '../store/errors';
import { isWriteOutcomeUnknown } from '../store/write-outcome';
import { Contended, withStoreDeadline } from '../store/contention';
import { ClaimPending } from '../store/receipts';
import { logger } from '../observability/logger';
import { reportFailure } from '../observability/failures';
import { lambdaLogging, observeInvocation, type InvocationOutcome } from '../observability/invocation';
import { countAuthorization } from '../observability/metrics';
import { withOriginalStack } from '../observability/stack-traces';
import { FUNCTION_TIMEOUT_SECONDS } from '../config';
import { routeOf } from '../routes';
import { publicUrl } from './public-address';
import { distinctHeaderValues, mergeSpellings } from './headers';
import { decodeUtf8Body } from './request-body';
import { errorResponse, REQUEST_ID_HEADER, responseHeaders } from './responses';

export type Event = APIGatewayProxyEvent;

/** What a handler sees: the request already authenticated, negotiated and parsed. */
export interface ApiRequest {
  event: Event;
  pathParameters: Record<string, string | undefined>;
  query: Record<string, string | undefined>;
  /** Primary data of the request document, for endpoints that take a body. */
  data: RequestData;
  principal: Principal;
  /**
   * Throws 404 when the caller cannot see `organization` (or `run` of it), 403 when its role is
   * below this route's or it is bound to one run and the request is not about a run.
   */
  authorize(organization: string, run?: string): Role;
  /** The absolute URL of this request without its query string: the base of list links. */
  url: string;
}

/** `headers`: the answer's own, beside the contract's (a replayed create's Idempotent-Replayed). */
export type ApiResult = { status: 200 | 201; document: unknown; headers?: Record<string, string> } | { status: 204 };

export interface HandlerOptions {
  /** The JSON:API type the request body must carry (POST and PATCH). */
  bodyType?: string;
  /** The path parameter a PATCH body's optional `data.id` must equal. */
  idParameter?: string;
}

/**
 * The one middy chain every function gets: header normalization → content negotiation → body
 * parsing → handler → JSON:API serialization, with errors shaped last into the contract's bodies.
 */
export function jsonApiHandler(
  functionName: string,
  handle: (request: ApiRequest) => Promise<ApiResult>,
  options: HandlerOptions = {},
) {
  const route = routeOf(functionName);
  return middy<Event, APIGatewayProxyResult, Error, Context>({
    // Answer the contract's 504 shortly before Lambda would end the invocation with a bare timeout.
    timeoutEarlyInMillis: TIMEOUT_ANSWER_MARGIN_MS,
    timeoutEarlyResponse: () => {
      throw new GatewayTimeout();
    },
  })
    .use(observeInvocation<Event, APIGatewayProxyResult>(functionName, `${route.method} ${route.path}`, statusAnswered))
    .use(lambdaLogging())
    .use(jsonApiResponses())
    .use(everyHeaderValue())
    .use(httpHeaderNormalizer())
    .use(contentNegotiation(options.bodyType !== undefined))
    .handler(async (event, context) => {
      const principal = route.role === null ? anonymous : principalOf(event);
      // request_id: API Gateway's, the X-Request-Id of the response (function_request_id is Lambda's).
      logger.appendKeys({
        route: `${route.method} ${route.path}`,
        tokenId: principal.tokenId,
        request_id: event.requestContext.requestId,
      });
      const pathParameters = event.pathParameters ?? {};
      const request: ApiRequest = {
        event,
        pathParameters,
        query: event.queryStringParameters ?? {},
        data: options.bodyType
          ? parseRequestDocument(
              bodyText(event),
              options.bodyType,
              options.idParameter && pathParameters[options.idParameter],
            )
          : { type: '', attributes: {} },
        principal,
        authorize: (organization, run) =>
          countingRefusals(() => authorize(principal, organization, route.role ?? 'reader', run)),
        url: publicUrl(event),
      };
      // Every store call of the request, and any wait on a hot spot, ends by this deadline (shared/store/deadline.ts).
      const result = await withStoreDeadline(storeDeadline(context), () => handle(request));
      return toResponse(result, event);
    });
}

/** Time left for the error path (shaping, logging, metrics) once the handler is given up on. */
export const TIMEOUT_ANSWER_MARGIN_MS = 500;

/**
 * When this request's store calls must have ended: the function's timeout less the margin to
 * answer. Waits on a hot spot stop in time to answer 503 before it (shared/store/contention.ts).
 */
const storeDeadline = (context: Context | undefined) =>
  Date.now() +
  (context?.getRemainingTimeInMillis?.() ?? DEFAULT_REMAINING_MS) -
  TIMEOUT_ANSWER_MARGIN_MS -
  STORE_ANSWER_MARGIN_MS;
/**
 * Store calls end this long before the 504 would: a call cut at its deadline leaves the handler
 * time to answer what it knows (503, nothing written, or its outcome unknown) before middy's early
 * timeout answers 504 for it.
 */
const STORE_ANSWER_MARGIN_MS = 500;
/** A caller without a Lambda context (a test invoking the handler) gets the deployed timeout. */
const DEFAULT_REMAINING_MS = FUNCTION_TIMEOUT_SECONDS * 1000;

/** 403 and 404 from the role check are authorization outcomes too: count them, then let them answer. */
function countingRefusals<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof Forbidden) countAuthorization('forbidden');
    else if (error instanceof NotFound) countAuthorization('not-visible');
    throw error;
  }
}

/**
 * The principal the authorizer vouched for. Two different Authorization headers are refused here
 * too: API Gateway may answer from an Allow cached for one of them without asking the authorizer.
 */
function principalOf(event: Event): Principal {
  if (distinctHeaderValues(event, 'authorization').length > 1) throw new Unauthorized(UNAUTHORIZED_DETAIL.ambiguous);
  return decodePrincipal(event.requestContext.authorizer);
}

const anonymous: Principal = { subject: 'anonymous', tokenId: 'none', grants: {} };

function bodyText(event: Event): string | null {
  if (event.body === null || event.body === undefined) return null;
  return event.isBase64Encoded ? decodeUtf8Body(event.body) : event.body;
}

function toResponse(result: ApiResult, event: Event): APIGatewayProxyResult {
  const headers = { ...responseHeaders(result.status !== 204), ...requestIdHeader(event) };
  if (result.status === 204) return { statusCode: 204, headers, body: '' };
  return {
    statusCode: result.status,
    headers: { ...headers, ...result.headers },
    body: JSON.stringify(result.document),
  };
}

/** API Gateway's id of this request, the one its access log and gateway responses carry. */
const requestIdHeader = (event: Event | undefined): Record<string, string> => {
  const id = event?.requestContext?.requestId;
  return id ? { [REQUEST_ID_HEADER]: id } : {};
};

/**
 * Every failure leaves as a contract error body. Its onError runs before the logger's and
 * observability's (middy runs onError handlers in reverse order of use), so they see the answer.
 */
function jsonApiResponses(): MiddlewareObj<Event, APIGatewayProxyResult> {
  return {
    onError: async (request) => {
      const error = request.error;
      let apiError: ApiError;
      if (error instanceof ApiError) {
        apiError = error;
        if (error instanceof ExpiredToken) countAuthorization('expired');
        if (error instanceof GatewayTimeout) logger.error('gave up shortly before the function timeout');
      } else if (isWriteOutcomeUnknown(error)) {
        // Committed, or maybe: the answer was lost, or what follows the commit did not finish.
        if (isStoreUnavailable(error)) reportFailure(error);
        else logger.warn('write outcome unknown', { error: withOriginalStack(error) as Error });
        apiError = new WriteOutcomeUnknown();
      } else if (error instanceof ClaimPending) {
        const retryAfter = Math.max(1, Math.ceil((error.leaseUntil - Date.now()) / 1000));
        logger.warn('waited on an earlier attempt of this create', {
          hotSpot: error.hotSpot,
          ...error.where,
          retryAfter,
        });
        apiError = new Unavailable(
          `An earlier attempt of this create (same receipt) may still be in progress; this request wrote nothing. By Retry-After its outcome is settled: retry then, and it answers with that attempt's ${error.hotSpot === 'run' ? 'comment' : 'key'}, or creates it once.`,
          retryAfter,
        );
      } else if (error instanceof Contended) {
        // Which run or organization goes in the log line, never in a metric dimension (counted in contention.ts).
        logger.warn('gave up waiting on a busy hot spot', {
          hotSpot: error.hotSpot,
          ...error.where,
          attempts: error.attempts,
          waitedMs: error.waitedMs,
        });
        apiError = new Unavailable(
          `The ${error.hotSpot} is busy with other writes right now; this request waited its turn for as long as it could and wrote nothing. Retry it after Retry-After.`,
        );
      } else {
        // A service unavailable is a 503 to retry; anything else a bug.
        apiError = reportFailure(error) === 'failed' ? new InternalError() : new Unavailable();
      }
      const response = errorResponse(apiError);
      request.response = { ...response, headers: { ...response.headers, ...requestIdHeader(request.event) } };
    },
  };
}

/** A request's trace ends with the status actually answered (the error's, once shaped). */
function statusAnswered({ response }: { response?: APIGatewayProxyResult | null }): InvocationOutcome {
  const status = response?.statusCode ?? 500;
  return { outcome: String(status), status };
}

/**
 * multiValueHeaders keeps every value of a header sent under several spellings (the normalizer
 * after it keeps one key per lower-cased name, the last): a credential sent twice stays visible.
 */
function everyHeaderValue(): MiddlewareObj<Event, APIGatewayProxyResult> {
  return {
    before: ({ event }) => {
      if (event.multiValueHeaders) event.multiValueHeaders = mergeSpellings(event.multiValueHeaders);
    },
  };
}

/** 406 for an unusable Accept, 400 for an `include`, 415 for a body that is not JSON:API or JSON; GET and DELETE never 415. */
function contentNegotiation(takesBody: boolean): MiddlewareObj<Event, APIGatewayProxyResult> {
  return {
    before: async ({ event }) => {
      assertAcceptable(event.headers.accept);
      assertNoInclusion(event.queryStringParameters, event.multiValueQueryStringParameters);
      if (takesBody) {
        // Two media types are none: the body would be read as whichever came last.
        if (distinctHeaderValues(event, 'content-type').length > 1)
          throw new BadRequest('more than one Content-Type header: send exactly one');
        assertRequestContentType(event.headers['content-type']);
      }
    },
  };
}
