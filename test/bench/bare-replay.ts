import {
  BatchWriteItemCommand,
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactGetItemsCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDbCall } from '../support/round-trips';

/**
 * The warm baseline as a function of its own (test/bench/warm.ts): bundled as the stack bundles
 * its functions and run in a sandbox like theirs, it sends the requests it is given through the
 * bare low-level client and does nothing else. A request the function saw refused may be refused
 * again.
 */
const COMMANDS = {
  BatchWriteItemCommand,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactGetItemsCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} as const;

const client = new DynamoDBClient({});

export const handler = async (calls: DynamoDbCall[]) => {
  for (const { command, input, refused } of calls) {
    const Command = COMMANDS[command as keyof typeof COMMANDS] as (new (input: unknown) => GetItemCommand) | undefined;
    if (!Command) throw new Error(`the bare replay does not send ${command}`);
    await client.send(new Command(input)).catch((error: unknown) => {
      if (!refused) throw error;
    });
  }
  return { statusCode: 204, body: '' };
};
