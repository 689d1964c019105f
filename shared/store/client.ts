import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { requiredEnv } from '../config';
import { traceDynamoDbCalls } from '../observability/tracer';
import { markWriteAttempts, writeAwareRetries } from './write-outcome';
import { currentDeadline } from './deadline';

/**
 * How long one DynamoDB call may take: `maxAttempts` attempts of `requestTimeoutMs` each (connecting
 * included: @smithy/node-http-handler) and the SDK's backoff between them; a write that may have been
 * applied is not retried. Every call is also cut at the request's deadline (withinDeadline below),
 * so however many calls a request makes, a stalled store ends as the contract's 503 before the
 * function's timeout. What healthy calls take: docs/performance.md.
 */
export const STORE_TIMEOUTS = { connectionTimeoutMs: 1_000, requestTimeoutMs: 1_500, maxAttempts: 2 } as const;

/**
 * The longest one store call can take: its attempts and the SDK's backoff between them (≤ 1 s even
 * when throttled). A request waiting on a hot spot starts another attempt only if it would still
 * end before the handler's deadline (shared/store/contention.ts).
 */
export const STORE_CALL_MAX_MS = STORE_TIMEOUTS.maxAttempts * STORE_TIMEOUTS.requestTimeoutMs + 1_000;

const client = new DynamoDBClient({
  maxAttempts: STORE_TIMEOUTS.maxAttempts,
  // A write that may have been applied is not retried: its caller answers that its outcome is unknown.
  retryStrategy: writeAwareRetries(STORE_TIMEOUTS.maxAttempts),
  requestHandler: {
    connectionTimeout: STORE_TIMEOUTS.connectionTimeoutMs,
    requestTimeout: STORE_TIMEOUTS.requestTimeoutMs,
    // Without it the SDK only logs a warning when requestTimeout passes and keeps waiting
    // (@smithy/types NodeHttpHandlerOptions): a stalled store would hold the function to its timeout.
    throwOnRequestTimeout: true,
  },
});
markWriteAttempts(client);

/**
 * One document client per process, created at init so warm invocations reuse its connections.
 * It finds DynamoDB Local through AWS_ENDPOINT_URL_DYNAMODB, so no code here knows about it.
 * Traced: in a sampled Lambda invocation, each call is a DynamoDB span of its trace (operation,
 * table, outcome, time; never items): shared/observability/tracer.ts.
 */
export const documentClient = DynamoDBDocumentClient.from(traceDynamoDbCalls(client), {
  marshallOptions: { removeUndefinedValues: true },
});

/**
 * The options of every call on the request path: the request's deadline as an outer bound
 * (deadline.ts), so that whatever a stalled store does, no call outlives the time the function has
 * to answer: the answer is the contract's 503 (for a write, "outcome unknown"), never a timeout.
 */
export const withinDeadline = () => ({ abortSignal: AbortSignal.timeout(Math.max(1, currentDeadline() - Date.now())) });

/** Read per call (not at import) so tests and the local gateway can point at a fresh table. */
export const tableName = () => requiredEnv('TABLE_NAME');
