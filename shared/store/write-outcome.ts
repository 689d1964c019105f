import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { StandardRetryStrategy } from '@smithy/core/retry';

/**
 * Writes whose outcome is unknown. A write that reached DynamoDB and whose answer was lost (a
 * timeout or a reset after sending, a 5xx) may have been applied: DynamoDB finishes what it
 * received (a stalled store commits it when it resumes). Such a write is never retried by the SDK
 * (a retry's ConditionalCheckFailed would then be our own first attempt, answered as if someone
 * else had won), and its error is marked, so the answer says the outcome is unknown.
 */

/** DynamoDB operations that change items. */
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand']);

/** Node's errors for a connection that was never made: nothing was sent (DNS, refused, unreachable). */
const NEVER_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

type AttemptError = { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };

/** DynamoDB answered 4xx (it refused the request: throttled, invalid, condition failed), or no connection was made. */
function certainlyNotApplied(error: AttemptError): boolean {
  const status = error.$metadata?.httpStatusCode;
  if (status !== undefined) return status < 500;
  if (NEVER_CONNECTED.has(error.code ?? '')) return true;
  // @smithy/node-http-handler's connectionTimeout: a TimeoutError without ETIMEDOUT (requestTimeout's has it).
  return (
    error.name === 'TimeoutError' &&
    error.code === undefined &&
    /did not establish a connection/.test(error.message ?? '')
  );
}

const OUTCOME_UNKNOWN = '$writeOutcomeUnknown';

/** True for a failed write that may nevertheless have been applied. */
export const isWriteOutcomeUnknown = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && (error as Record<string, unknown>)[OUTCOME_UNKNOWN] === true;

/**
 * Marks the error of each write attempt that may have been applied. Added inside the SDK's retry
 * loop (step finalizeRequest, below the retry middleware's high priority), so it sees every attempt.
 */
export function markWriteAttempts(client: DynamoDBClient): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        if (
          WRITES.has(context.commandName ?? '') &&
          typeof error === 'object' &&
          error !== null &&
          !certainlyNotApplied(error as AttemptError)
        ) {
          (error as Record<string, unknown>)[OUTCOME_UNKNOWN] = true;
        }
        throw error;
      }
    },
    { step: 'finalizeRequest', priority: 'low', name: 'writeOutcomeMiddleware' },
  );
}

/** The SDK's standard retries, except for a write whose attempt may have been applied: that error is final. */
export function writeAwareRetries(maxAttempts: number): StandardRetryStrategy {
  const strategy = new StandardRetryStrategy(maxAttempts);
  const refresh = strategy.refreshRetryTokenForRetry.bind(strategy);
  strategy.refreshRetryTokenForRetry = async (token, errorInfo) => {
    if (isWriteOutcomeUnknown(errorInfo.error)) throw errorInfo.error;
    return refresh(token, errorInfo);
  };
  return strategy;
}

/**
 * Runs what follows a change's commit (its derived writes): the change is made whatever happens
 * next, so a failure here is answered as an unknown outcome, whose retry (same receipt) finds the
 * change and finishes it, never as "nothing was written".
 */
export async function afterCommit<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const marked = typeof error === 'object' && error !== null ? error : new Error(String(error));
    (marked as Record<string, unknown>)[OUTCOME_UNKNOWN] = true;
    throw marked;
  }
}

/**
 * Runs writes for a request that has not committed its own change: finishing someone else's (a
 * repair), or preparing its own (a receipt's claim). Whatever happens to them, this request's
 * outcome is known (nothing of its own is committed), so their failure is answered as the store
 * being unavailable, never "outcome unknown".
 */
export async function repairing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (typeof error === 'object' && error !== null) delete (error as Record<string, unknown>)[OUTCOME_UNKNOWN];
    throw error;
  }
}
