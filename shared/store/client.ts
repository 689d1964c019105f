import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { requiredEnv } from '../config';
import { tracer } from '../observability/tracer';

/**
 * How long one DynamoDB call may take, retries included, so that a stalled store ends as the
 * contract's 503 long before the function's timeout: at most 2 attempts of 1.5 s without a byte
 * (plus the SDK's backoff, about 0.1 s) ≈ 3.1 s per call, and no request makes more than 2 calls.
 * A healthy call takes a few milliseconds; connecting takes well under a second.
 */
export const STORE_TIMEOUTS = { connectionTimeoutMs: 1_000, requestTimeoutMs: 1_500, maxAttempts: 2 } as const;

/**
 * One document client per process, created at init so warm invocations reuse its connections.
 * It finds DynamoDB Local through AWS_ENDPOINT_URL_DYNAMODB, so no code here knows about it.
 * Traced: in Lambda with tracing on, each call is an X-Ray subsegment (operation, table, retries;
 * never items).
 */
export const documentClient = DynamoDBDocumentClient.from(
  tracer.captureAWSv3Client(
    new DynamoDBClient({
      maxAttempts: STORE_TIMEOUTS.maxAttempts,
      requestHandler: {
        connectionTimeout: STORE_TIMEOUTS.connectionTimeoutMs,
        requestTimeout: STORE_TIMEOUTS.requestTimeoutMs,
        // Without it the SDK only logs a warning when requestTimeout passes and keeps waiting
        // (@smithy/types NodeHttpHandlerOptions): a stalled store would hold the function to its timeout.
        throwOnRequestTimeout: true,
      },
    }),
  ),
  { marshallOptions: { removeUndefinedValues: true } },
);

/** Read per call (not at import) so tests and the local gateway can point at a fresh table. */
export const tableName = () => requiredEnv('TABLE_NAME');
