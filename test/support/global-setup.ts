import { ensureAssembly } from '#infra/local/assembly';
import { startDynamoDbLocal, type DynamoDbLocal } from '#infra/local/dynamodb-local';

/**
 * The test run's one DynamoDB Local, in memory. Jest runs a project's globalSetup only when the run
 * has a test of that project, so `--selectProjects unit` starts no JVM; the projects that need the
 * store (int, e2e) share this one, counted here and stopped by the last globalTeardown.
 * Test workers start after this and inherit the endpoint through the environment.
 */
export type SharedDynamoDbLocal = typeof globalThis & { testDynamoDbLocal?: { dynamo: Promise<DynamoDbLocal>; users: number } };

export default async function globalSetup(_globalConfig: unknown, project: { displayName?: { name?: string } }): Promise<void> {
  const shared = globalThis as SharedDynamoDbLocal;
  shared.testDynamoDbLocal ??= { dynamo: startDynamoDbLocal(), users: 0 };
  shared.testDynamoDbLocal.users++;
  // The e2e tests serve the `local` stage's cloud assembly: synthesized here, once, before any
  // worker starts (only when its sources changed), then shared by every test file.
  const assembly = project.displayName?.name === 'e2e' ? ensureAssembly((line) => process.stderr.write(`${line}\n`)) : undefined;
  process.env.TEST_DYNAMODB_ENDPOINT = (await shared.testDynamoDbLocal.dynamo).endpoint;
  await assembly;
}
