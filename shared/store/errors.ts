import { isServerError, isThrottlingError, isTransientError } from '@smithy/core/retry';

/** What the SDK's classifiers read: `$metadata`, `$retryable`, `$fault`, `name`, `code`, `cause`. */
type SdkError = Parameters<typeof isTransientError>[0];

/**
 * Store failures that mean "try again later", not "your request was wrong": the SDK's own
 * classification, the one its retry strategy uses (throttling, timeouts, connection errors,
 * 5xx, and errors the model marks retryable), plus any error DynamoDB marks as its own fault.
 * Whatever is left after the SDK's retries is one of these or a real bug.
 */
export function isStoreUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  // The request's deadline ended the call (client.ts): the store did not answer in time.
  if (error.name === 'AbortError') return true;
  const sdkError = error as SdkError & { $fault?: string };
  return (
    sdkError.$fault === 'server' || isThrottlingError(sdkError) || isTransientError(sdkError) || isServerError(sdkError)
  );
}

/**
 * A global table in multi-Region strong consistency refused the write because another Region is
 * writing the same item at this moment: nothing was written, and trying again succeeds once that
 * write is done. The store treats it as a lost round on a hot spot.
 */
export const isReplicatedWriteConflict = (error: unknown) =>
  error instanceof Error && error.name === 'ReplicatedWriteConflictException';

export const isConditionFailed = (error: unknown) =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';
