import { TransactionCanceledException, type CancellationReason } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { documentClient } from './client';
import { isTransactionConflict } from './errors';
import { LOST_ROUND, whileContended, type HotSpot } from './contention';

type TransactItems = NonNullable<TransactWriteCommandInput['TransactItems']>;

/**
 * One TransactWriteItems on a hot spot, tried again while DynamoDB cancels it for a conflict with
 * another transaction in flight on the same items (a race, not a verdict), for as long as the
 * request can wait (contention.ts). Returns the cancellation reasons by item position when a
 * condition failed (each with the item as it is, low-level, where the item asked for
 * ReturnValuesOnConditionCheckFailure), so the caller can say which rule was broken; undefined on
 * success.
 */
export function transactWrite(hotSpot: HotSpot, where: Record<string, string>, items: TransactItems): Promise<CancellationReason[] | undefined> {
  return whileContended(hotSpot, where, () => transactWriteOnce(items));
}

/** One attempt: LOST_ROUND for a conflict, the reasons for a failed condition, undefined on success. */
export async function transactWriteOnce(items: TransactItems): Promise<CancellationReason[] | undefined | typeof LOST_ROUND> {
  try {
    await documentClient.send(new TransactWriteCommand({ TransactItems: items }));
    return undefined;
  } catch (error) {
    if (isTransactionConflict(error)) return LOST_ROUND;
    const reasons = error instanceof TransactionCanceledException ? error.CancellationReasons ?? [] : [];
    if (reasons.some((reason) => reason.Code === 'ConditionalCheckFailed')) return reasons;
    throw error;
  }
}
