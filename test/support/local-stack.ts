import { afterAll, beforeAll } from '@jest/globals';
import { startLocalStack, type LocalStack } from '#infra/local/local-stack';
import { TestApi } from './api';

export interface LocalStackHandle {
  /** A client of the stack, as an API caller sees it: over HTTP, paths under /api/v2. */
  api: TestApi;
  stack(): LocalStack;
  /** Every log line the functions wrote, as `[FunctionLogicalId] line`. */
  logs: string[];
  /** The DynamoDB calls `fn` made the functions send (as the IAM check saw them), with its result. */
  roundTrips<T>(fn: () => Promise<T>): Promise<{ result: T; commands: string[] }>;
}

/**
 * The synthesized stack (the `local` stage's cloud assembly, synthesized once per run by the
 * global setup) served for this test file over this file's table, stopped after it.
 */
export function useLocalStack(): LocalStackHandle {
  let stack: LocalStack | undefined;
  const api = new TestApi('');
  const logs: string[] = [];
  beforeAll(async () => {
    stack = await startLocalStack({
      dynamoDbEndpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB!,
      tableName: process.env.TABLE_NAME!,
      log: (name, line) => {
        logs.push(`[${name}] ${line}`);
      },
    });
    (api as { baseUrl: string }).baseUrl = stack.url;
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });
  return {
    api,
    stack: () => stack!,
    logs,
    async roundTrips(fn) {
      const calls = stack!.dynamoDbCalls;
      const before = calls.length;
      const result = await fn();
      return { result, commands: calls.slice(before).map((call) => `${call.operation}Command`) };
    },
  };
}
