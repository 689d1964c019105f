import { describe, expect, it } from '@jest/globals';
import { runToEnd } from '../support/processes';
import { expectWith } from '../support/expect-with';

/** Every command-line tool the README names answers --help with its usage and exit code 0, as typed through npm. */
describe('--help', () => {
  it.each([
    [['start', '--', '--help'], 'Usage: npm start'],
    [['run', 'admin', '--', '--help'], 'npm run admin -- token create'],
    [['run', 'admin', '--', 'token', 'create', '--help'], 'Usage: npm run admin -- token create --org ORG'],
    [['run', 'load', '--', '--help'], 'Usage: npm run load'],
    [['run', 'bench', '--', '--help'], 'Usage: npm run bench'],
    [['run', 'openapi', '--', '--help'], 'Usage: npm run openapi'],
  ])('npm %j exits 0 with its usage', async (args, usage) => {
    const { code, output } = await runToEnd(['npm', ...args], { TABLE_NAME: undefined, AWS_ENDPOINT_URL_DYNAMODB: undefined });
    expectWith(code, output).toBe(0);
    expect(output).toContain(usage);
  }, 60_000);
});
