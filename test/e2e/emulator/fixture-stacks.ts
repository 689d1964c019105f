import { afterAll } from '@jest/globals';
import { startLocalStack, type LocalStack } from '#infra/local/local-stack';
import { fixtureAssembly, type FixtureApi } from '../../support/fixture-assembly';

/**
 * The emulator's tests' stacks: each on a hand-written template (test/support/fixture-assembly.ts),
 * stopped and removed after the test file that started it. The real stack's behaviour is tested in
 * the other e2e files, over the synthesized assembly.
 */
const stacks: Array<{ stack: LocalStack; remove(): void }> = [];
afterAll(async () => {
  for (const { stack, remove } of stacks) {
    await stack.close();
    remove();
  }
});

export async function serve(api: FixtureApi): Promise<LocalStack> {
  const assembly = fixtureAssembly(api);
  const stack = await startLocalStack({
    assembly,
    dynamoDbEndpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB!,
    tableName: process.env.TABLE_NAME!,
    log: () => undefined,
  }).catch((error: unknown) => {
    assembly.remove();
    throw error;
  });
  stacks.push({ stack, remove: assembly.remove });
  return stack;
}

export const echo = `export const handler = async (event) => ({ statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ pid: process.pid, event }) });`;
export const allowAll = `
let calls = 0;
export const handler = async (event) => {
  calls += 1;
  if (event.headers.Authorization === 'deny') return { principalId: 'x', policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Deny', Resource: '*' }] }, context: { why: 'denied by the fixture', calls } };
  if (event.headers.Authorization === 'fail') throw new Error('store unavailable');
  if (event.headers.Authorization === 'reject') throw new Error('Unauthorized');
  return { principalId: 'user', policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: event.methodArn.split('/').slice(0, 2).join('/') + '/*' }] }, context: { calls, expiresAt: 7 } };
};`;
export const literal = (text: string) => ({ 'application/json': text });
