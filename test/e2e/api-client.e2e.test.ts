import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { tokenFor } from '../support/api';
import { useLocalStack } from '../support/local-stack';
import { runToEnd } from '../support/processes';
import { expectWith } from '../support/expect-with';
import { PROJECT_ROOT } from '#infra/local/assembly';
import { TYPES_FILE } from '#infra/openapi/files';

/**
 * docs/api.md's TypeScript client as a reader uses it: the ```ts block saved as client.ts in an ESM
 * project beside openapi-typescript's types of docs/openapi.json, run with tsx against the local
 * stack, with API and TOKEN as npm start prints them.
 */
const { api } = useLocalStack();

const section = readFileSync(join(PROJECT_ROOT, 'docs/api.md'), 'utf8')
  .split('\n## ')
  .find((s) => s.startsWith('The OpenAPI document, and generated clients'))!;
const snippet = /```ts\n([\s\S]*?)```/.exec(section)![1]!;

let token: string;
beforeAll(async () => {
  token = await tokenFor({ 'example-org': 'owner' });
});

describe("api.md's TypeScript client", () => {
  it('says how to run it: saved as client.ts in an ESM project, with npx tsx client.ts', () => {
    expect(section.replace(/\s*\n\s*/g, ' ')).toContain('Save this as `client.ts` in an ESM project');
    expect(snippet.split('\n')[0]).toBe('// client.ts: save in an ESM project; run with `npx tsx client.ts`');
  });

  it('runs as written: creates a key through the API and reads service discovery at the root of the host', async () => {
    // The test run's temp folder is under the project (.tmp/), so `openapi-fetch` resolves from its node_modules.
    const dir = mkdtempSync(join(tmpdir(), 'client-'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    // What `npx openapi-typescript docs/openapi.json -o tfc-api.ts` writes (openapi.test.ts checks the committed copy is).
    writeFileSync(join(dir, 'tfc-api.ts'), readFileSync(join(PROJECT_ROOT, TYPES_FILE), 'utf8'));
    writeFileSync(join(dir, 'client.ts'), snippet);
    const result = await runToEnd([join(PROJECT_ROOT, 'node_modules/.bin/tsx'), join(dir, 'client.ts')], {
      API: `${api.baseUrl}/api/v2`,
      TOKEN: token,
    });
    expectWith(result.code, result.output).toBe(0);
    const [created, ...services] = result.output.trim().split('\n');
    expectWith(created, result.output).toMatch(/^rtk-[A-Za-z0-9]{16}$/);
    expect(services.join(' ').replace(/\s+/g, ' ')).toMatch(
      /\{ 'tfe\.v2': '\/api\/v2\/', 'tfe\.v2\.1': '\/api\/v2\/', 'tfe\.v2\.2': '\/api\/v2\/' \}/,
    );
  }, 60_000);
});
