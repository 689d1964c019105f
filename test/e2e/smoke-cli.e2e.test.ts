import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { tokenFor } from '../support/api';
import { useLocalStack } from '../support/local-stack';
import { freePort, run, runToEnd, TSX } from '../support/processes';
import { admin, jsonLine } from '../support/admin-cli';
import { written } from '../support/written';
import { ensureAssembly, PROJECT_ROOT } from '#infra/local/assembly';
import { startLocalStack, type LocalStack } from '#infra/local/local-stack';
import { randomAlphanumeric } from '#shared/ids';
import { createNotificationSecret } from '#shared/store/notification-secrets';
import { registerNewRun } from '#shared/store/runs';

/**
 * `npm run smoke` as a person or the pipeline runs it, against the synthesized stack served locally
 * (what `npm start` serves), and against the same stack with one function that answers wrongly.
 */
const { api } = useLocalStack();

const smoke = (...args: string[]) => runToEnd(['npm', 'run', '--silent', 'smoke', '--', ...args], {});
const stepLines = (output: string) => output.split('\n').filter((line) => /^(ok|FAIL|skip) /.test(line));

let token: string;
let secret: string;
beforeAll(async () => {
  token = await tokenFor({ 'smoke-org': 'owner', 'smoke-run-org': 'owner' });
  secret = written(await createNotificationSecret('smoke-org')).current.secret;
});

describe('npm run smoke against the local stack', () => {
  it('exercises every endpoint once, each answer right, and leaves no reserved tag key behind', async () => {
    const { code, output } = await smoke(
      '--target',
      api.baseUrl,
      '--token',
      token,
      '--org',
      'smoke-org',
      '--notification-secret',
      secret,
    );
    expect({ code, output }).toEqual({ code: 0, output: expect.stringContaining('14 ok, 0 failed, 0 skipped') });
    const steps = stepLines(output).map((line) => line.replace(/^(\w+)\s+(\d{3})\s+\d+ ms\s+(\w+).*$/, '$1 $2 $3'));
    expect(steps).toEqual([
      'ok 204 GET',
      'ok 200 GET',
      'ok 401 GET',
      'ok 201 POST',
      'ok 200 GET',
      'ok 200 PATCH',
      'ok 200 PATCH',
      'ok 204 DELETE',
      'ok 404 DELETE',
      'ok 401 POST',
      'ok 204 POST',
      'ok 201 POST',
      'ok 200 GET',
      'ok 200 GET',
    ]);
    // One line per step, each with its time.
    for (const line of stepLines(output))
      expect(line).toMatch(/^ok\s+\d{3}\s+\d+ ms {2}(GET|POST|PATCH|DELETE)\s+\/\S+ {2}\S/);
    for (const path of [
      '/api/v2/ping',
      '/.well-known/terraform.json',
      '/api/v2/reserved-tag-keys/rtk-',
      '/api/v2/reserved-tags/rtk-',
      '/api/v2/run-notifications/smoke-org',
      '/api/v2/comments/wsc-',
    ]) {
      expect(output).toContain(path);
    }
    const keys = await api.get('/organizations/smoke-org/reserved-tag-keys', { token });
    expect(keys.json.data).toEqual([]);
  }, 60_000);

  it('without a notification secret, comments go to the run given with --run; the token may come from TFE_TOKEN', async () => {
    const run = await registerNewRun('smoke-run-org');
    const { code, output } = await runToEnd(
      ['npm', 'run', '--silent', 'smoke', '--', '--target', api.baseUrl, '--org', 'smoke-run-org', '--run', run.runId],
      { TFE_TOKEN: token },
    );
    expect(code).toBe(0);
    expect(output).toContain('13 ok, 0 failed, 1 skipped');
    expect(output).toMatch(/^skip .*signed run notification: --run run-\w+ given instead$/m);
    expect(output).toMatch(new RegExp(`^ok\\s+201 .*POST\\s+/api/v2/runs/${run.runId}/comments`, 'm'));
  }, 60_000);

  it('with neither, says which steps it skips and why', async () => {
    const { code, output } = await smoke('--target', api.baseUrl, '--token', token, '--org', 'smoke-run-org');
    expect(code).toBe(0);
    expect(output).toContain('10 ok, 0 failed, 4 skipped');
    expect(output.match(/^skip .*no --notification-secret to register a run, nor --run to name one$/gm)).toHaveLength(
      3,
    );
  }, 60_000);

  it('fails on a wrong answer: a token of another organization cannot create keys in this one (404)', async () => {
    const { code, output } = await smoke('--target', api.baseUrl, '--token', token, '--org', 'someone-elses-org');
    expect(code).toBe(1);
    expect(output).toMatch(
      /^FAIL 404 .*POST\s+\/api\/v2\/organizations\/someone-elses-org\/reserved-tag-keys {2}create reserved tag key smoke-\w+: expected 201, got 404: not found$/m,
    );
    expect(output).toMatch(/^skip .*the create above failed$/m);
  }, 60_000);

  it('explains its usage: --help, and one line for what is missing (exit 2)', async () => {
    const help = await smoke('--help');
    expect(help.code).toBe(0);
    expect(help.output).toMatch(/^Usage: npm run smoke -- --target URL --token TOKEN --org ORG/);
    const missing = await runToEnd(['npm', 'run', '--silent', 'smoke', '--', '--target', api.baseUrl], {
      TFE_TOKEN: undefined,
      SMOKE_ORG: undefined,
    });
    expect(missing.code).toBe(2);
    expect(missing.output.trim()).toBe(
      'smoke: missing --token (or TFE_TOKEN), --org (or SMOKE_ORG). npm run smoke -- --help says more.',
    );
  }, 60_000);

  it('takes the address from a cdk deploy --outputs-file file', async () => {
    const file = join(process.env.TMPDIR!, `outputs-${randomAlphanumeric(6)}.json`);
    writeFileSync(file, JSON.stringify({ 'tfc-tags-comments-dev': { TfeAddress: api.baseUrl, TableName: 'x' } }));
    const { code, output } = await smoke(
      '--outputs',
      file,
      '--token',
      token,
      '--org',
      'smoke-org',
      '--notification-secret',
      secret,
    );
    expect(code).toBe(0);
    expect(output).toContain(`smoke: ${api.baseUrl} as organization smoke-org`);
  }, 60_000);
});

describe('npm run smoke against a stack with one route broken', () => {
  let broken: LocalStack;
  let directory: string;
  beforeAll(async () => {
    // The same cloud assembly, but comments/show's bundle answers 200 with no comment in it.
    const assembly = await ensureAssembly();
    directory = join(PROJECT_ROOT, 'cdk.out', 'fixtures', `broken-${randomAlphanumeric(8)}`);
    cpSync(assembly.directory, directory, { recursive: true });
    const template = JSON.parse(readFileSync(join(directory, `${assembly.stackName}.template.json`), 'utf8'));
    const show = Object.values(template.Resources as Record<string, any>).find(
      (r) =>
        r.Type === 'AWS::Lambda::Function' && String(r.Properties.Description).endsWith('functions/comments/show.ts'),
    );
    const asset = join(directory, `asset.${String(show.Properties.Code.S3Key).replace(/\.zip$/, '')}`, 'index.mjs');
    writeFileSync(
      asset,
      `export const handler = async () => ({ statusCode: 200, headers: { 'Content-Type': 'application/vnd.api+json' }, body: '{"data":null}' });\n`,
    );
    broken = await startLocalStack({
      assembly: { directory, stackName: assembly.stackName, synthesized: false },
      dynamoDbEndpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB!,
      tableName: process.env.TABLE_NAME!,
      log: () => undefined,
    });
  }, 120_000);
  afterAll(async () => {
    await broken?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('names the step that answered wrongly, runs the others, cleans up and exits 1', async () => {
    const { code, output } = await smoke(
      '--target',
      broken.url,
      '--token',
      token,
      '--org',
      'smoke-org',
      '--notification-secret',
      secret,
    );
    expect(code).toBe(1);
    expect(output).toContain('13 ok, 1 failed, 0 skipped');
    expect(output).toMatch(
      /^FAIL 200 +\d+ ms {2}GET +\/api\/v2\/comments\/wsc-\w+ {2}show comment: shown as null, created as \{/m,
    );
    const keys = await api.get('/organizations/smoke-org/reserved-tag-keys', { token });
    expect(keys.json.data).toEqual([]);
  }, 60_000);
});

describe('npm run smoke against npm start', () => {
  it("passes with the seed's token and an organization notification secret from the admin CLI", async () => {
    const dataDir = mkdtempSync(join(process.env.TMPDIR!, 'smoke-start-'));
    const env = {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      DDB_PORT: String(await freePort()),
      ISSUER_PORT: String(await freePort()),
      TABLE_NAME: undefined,
      AWS_ENDPOINT_URL_DYNAMODB: undefined,
    };
    // start.ts itself, not through npm: npm does not pass SIGTERM on to the script, which outlived the test.
    const start = run([TSX, 'infra/local/start.ts'], env);
    try {
      const [, base] = await start.waitFor(/API ready in [\d.]+ s at (\S+)\/api\/v2/, 90_000);
      const [, token] = await start.waitFor(/TOKEN=(tfcapi_\w+)/);
      const notifications = await admin(['notifications', 'create', '--org', 'example-org', '--json'], env);
      const secret = jsonLine(notifications.output).token as string;
      const { code, output } = await runToEnd(
        ['npm', 'run', '--silent', 'smoke', '--', '--target', base!, '--org', 'example-org'],
        { TFE_TOKEN: token, SMOKE_NOTIFICATION_SECRET: secret },
      );
      expect({ code, summary: /^smoke: .*$/m.exec(output.split('\n').slice(1).join('\n'))?.[0] }).toEqual({
        code: 0,
        summary: expect.stringMatching(/^smoke: 14 ok, 0 failed, 0 skipped in [\d.]+ s$/),
      });
    } finally {
      start.child.kill('SIGTERM');
      await start.exited;
    }
  }, 150_000);
});
