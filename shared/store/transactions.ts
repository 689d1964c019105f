import { TransactionCanceledException, type CancellationReason } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { documentClient } from './client';
import { isTransactionConflict } from './errors';

type TransactItems = NonNullable<TransactWriteCommandInput['TransactItems']>;

const MAX_ATTEMPTS = 6;

/**
 * One TransactWriteItems, retried only when DynamoDB cancelled it for a conflict with another
 * transaction in flight on the same items (a race, not a verdict). Returns the cancellation
 * reasons by item position when a condition failed (each with the item as it is, low-level, where
 * the item asked for ReturnValuesOnConditionCheckFailure), so the caller can say which rule was
 * broken; undefined on success.
 */
export async function transactWrite(items: TransactItems): Promise<CancellationReason[] | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      await documentClient.send(new TransactWriteCommand({ TransactItems: items }));
      return undefined;
    } catch (error) {
      if (isTransactionConflict(error) && attempt < MAX_ATTEMPTS) {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * 2 ** attempt));
        continue;
      }
      const reasons = error instanceof TransactionCanceledException ? error.CancellationReasons ?? [] : [];
      if (reasons.some((reason) => reason.Code === 'ConditionalCheckFailed')) return reasons;
      throw error;
    }
  }
}
