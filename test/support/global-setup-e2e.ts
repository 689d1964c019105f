import { ensureAssembly } from '#infra/local/assembly';
import { startDynamoDbLocal } from '#infra/local/aws/dynamodb-local';
import type { RunState } from './global-setup';

/**
 * The e2e project's global setup: the run's one DynamoDB Local (shared with int, see global-setup.ts)
 * and the `local` stage's cloud assembly, which the e2e tests serve: synthesized here, once, before
 * any worker starts (only when its sources changed), then shared by every test file.
 * (Node loads global setups itself, without jest's resolver: this file repeats global-setup.ts's
 * three lines rather than import it by a `.ts` path.)
 */
export default async function globalSetupEndToEnd(): Promise<void> {
  const state = globalThis as RunState;
  state.testDynamoDbLocal ??= startDynamoDbLocal();
  const assembly = ensureAssembly((line) => process.stderr.write(`${line}\n`));
  process.env.TEST_DYNAMODB_ENDPOINT = (await state.testDynamoDbLocal).endpoint;
  await assembly;
}
