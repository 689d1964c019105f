import { readFileSync, statSync } from 'node:fs';
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
    [['run', 'hot-spots', '--', '--help'], 'Usage: npm run hot-spots'],
    [['run', 'store-burst', '--', '--help'], 'Usage: npm run store-burst'],
    [['run', 'cost', '--', '--help'], 'Usage: npm run cost'],
    [['run', 'openapi', '--', '--help'], 'Usage: npm run openapi'],
    [['run', 'lint:cfn', '--', '--help'], 'Usage: npm run lint:cfn'],
  ])(
    'npm %j exits 0 with its usage',
    async (args, usage) => {
      const { code, output } = await runToEnd(['npm', ...args], {
        TABLE_NAME: undefined,
        AWS_ENDPOINT_URL_DYNAMODB: undefined,
      });
      expectWith(code, output).toBe(0);
      expect(output).toContain(usage);
    },
    60_000,
  );
});

describe('npm run cost', () => {
  it('answers --help without rewriting docs/cost.md, and refuses an unknown flag in one line', async () => {
    const before = { text: readFileSync('docs/cost.md', 'utf8'), mtime: statSync('docs/cost.md').mtimeMs };
    const help = await runToEnd(['npm', 'run', '--silent', 'cost', '--', '--help'], {});
    expectWith(help.code, help.output).toBe(0);
    expect(help.output).not.toContain('wrote docs/cost.md');
    const unknown = await runToEnd(['npm', 'run', '--silent', 'cost', '--', '--chek'], {});
    expectWith(unknown.code, unknown.output).toBe(2);
    expect(unknown.output.trim().split('\n')).toEqual([
      expect.stringMatching(/^cost: Unknown option '--chek'.*--help says more\.$/),
    ]);
    expect({ text: readFileSync('docs/cost.md', 'utf8'), mtime: statSync('docs/cost.md').mtimeMs }).toEqual(before);
  }, 60_000);
});
