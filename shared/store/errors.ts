import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';

/** DynamoDB answers that mean "try again later", not "your request was wrong". */
const UNAVAILABLE = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'LimitExceededException',
]);

export function isStoreUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (UNAVAILABLE.has(error.name)) return true;
  if (error instanceof TransactionCanceledException) {
    // Throttled, or still contended after our retries (see transactions.ts): ask the client to retry.
    return (error.CancellationReasons ?? []).some((r) =>
      r.Code === 'ThrottlingError' || r.Code === 'ProvisionedThroughputExceeded' || r.Code === 'TransactionConflict');
  }
  // Connection refused or reset: the store is unreachable.
  const code = (error as { code?: string }).code;
  return code === 'ECONNREFUSED' || code === 'ECONNRESET';
}

/** Which items of a cancelled transaction failed their condition, by position. */
export function cancellationCodes(error: unknown): string[] | undefined {
  if (!(error instanceof TransactionCanceledException)) return undefined;
  return (error.CancellationReasons ?? []).map((r) => r.Code ?? 'None');
}

/** Another transaction touched the same items at the same moment: safe to retry. */
export const isTransactionConflict = (error: unknown) =>
  cancellationCodes(error)?.includes('TransactionConflict') ?? false;
