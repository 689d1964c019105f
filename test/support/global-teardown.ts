import type { SharedDynamoDbLocal } from './global-setup';

/** Stops the run's DynamoDB Local when the last project that uses it is done (see global-setup.ts). */
export default async function globalTeardown(): Promise<void> {
  const shared = globalThis as SharedDynamoDbLocal;
  const current = shared.testDynamoDbLocal;
  if (!current || --current.users > 0) return;
  delete shared.testDynamoDbLocal;
  await (await current.dynamo).stop();
}
