import { startDynamoDbLocal, type DynamoDbLocal } from '#infra/local/aws/dynamodb-local';

/**
 * The test run's one DynamoDB Local, in memory, for the projects that name this global setup (int)
 * or global-setup-e2e.ts (e2e). Jest runs each distinct globalSetup module once, and only when a
 * project that names it has tests in the run (so `--selectProjects unit` starts no JVM), and each
 * distinct globalTeardown module once, after every test: global-teardown.ts stops it then. Test
 * workers start after this and inherit the endpoint through the environment.
 */
export type RunState = typeof globalThis & { testDynamoDbLocal?: Promise<DynamoDbLocal> };

export default async function globalSetup(): Promise<void> {
  const state = globalThis as RunState;
  state.testDynamoDbLocal ??= startDynamoDbLocal();
  process.env.TEST_DYNAMODB_ENDPOINT = (await state.testDynamoDbLocal).endpoint;
}
