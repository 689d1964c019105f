import type { RunState } from './global-setup';

/**
 * Stops the run's DynamoDB Local. Jest runs this once, after every test of every project, however
 * many projects name it (see global-setup.ts).
 */
export default async function globalTeardown(): Promise<void> {
  const state = globalThis as RunState;
  const dynamo = state.testDynamoDbLocal;
  delete state.testDynamoDbLocal;
  await (await dynamo)?.stop();
}
