import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { isServerError, isThrottlingError, isTransientError } from '@smithy/core/retry';

/** What the SDK's classifiers read: `$metadata`, `$retryable`, `$fault`, `name`, `code`, `cause`. */
type SdkError = Parameters<typeof isTransientError>[0];

/**
 * Store failures that mean "try again later", not "your request was wrong": the SDK's own
 * classification, the one its retry strategy uses (throttling, timeouts, connection errors,
 * 5xx), plus any error DynamoDB marks as its own fault. Whatever is left after the SDK's retries
 * is one of these or a real bug.
 */
export function isStoreUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof TransactionCanceledException) {
    // The SDK's metadata describes the call, not its items: each item's fate is DynamoDB's documented
    // cancellation reason code (TransactWriteItems, "CancellationReasons"). Throttled, or a conflict
    // that escaped the hot-spot retries (which end in Contended, contention.ts): ask the client to retry.
    return (error.CancellationReasons ?? []).some((r) =>
      r.Code === 'ThrottlingError' || r.Code === 'ProvisionedThroughputExceeded' || r.Code === 'TransactionConflict');
  }
  const sdkError = error as SdkError & { $fault?: string };
  return sdkError.$fault === 'server' || isThrottlingError(sdkError) || isTransientError(sdkError) || isServerError(sdkError);
}

/** Another transaction touched the same items at the same moment: safe to retry. */
export const isTransactionConflict = (error: unknown) =>
  error instanceof TransactionCanceledException && (error.CancellationReasons ?? []).some((r) => r.Code === 'TransactionConflict');
