import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { documentClient } from './client';
import { cancellationCodes, isTransactionConflict } from './errors';

type TransactItems = NonNullable<TransactWriteCommandInput['TransactItems']>;

const MAX_ATTEMPTS = 6;

/**
 * One TransactWriteItems, retried only when DynamoDB cancelled it for a conflict with another
 * transaction in flight on the same items (a race, not a verdict). Returns the cancellation
 * codes by item position when a condition failed, so the caller can say which rule was broken;
 * undefined on success.
 */
export async function transactWrite(items: TransactItems): Promise<string[] | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      await documentClient.send(new TransactWriteCommand({ TransactItems: items }));
      return undefined;
    } catch (error) {
      if (isTransactionConflict(error) && attempt < MAX_ATTEMPTS) {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * 2 ** attempt));
        continue;
      }
      const codes = cancellationCodes(error);
      if (codes && codes.includes('ConditionalCheckFailed')) return codes;
      throw error;
    }
  }
}
