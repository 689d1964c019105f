import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import { tokenFor } from '../support/api';
import { useLocalStack } from '../support/local-stack';
import { newId } from '#shared/ids';

const { api } = useLocalStack();
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The operator CLI as `npm run admin -- …` runs it, against this test file's table (TABLE_NAME is set). */
async function admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'infra/admin/main.ts', ...args], { env: process.env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

const json = (output: { stdout: string }) => JSON.parse(output.stdout);

describe('npm run admin -- run …', () => {
  it('registers a run whose comments the API then serves', async () => {
    const runId = newId('run');
    const registered = await admin('run', 'register', runId, '--org', 'cli-org', '--workspace', 'networking', '--json');
    expect(registered.code).toBe(0);
    expect(json(registered)).toEqual({
      run: { runId, organization: 'cli-org', workspace: 'networking', createdAt: expect.stringMatching(ISO) },
      created: true,
    });

    const token = await tokenFor({ 'cli-org': 'member' });
    const created = await api.post(`/runs/${runId}/comments`, { token, body: { data: { type: 'comments', attributes: { body: 'hello' } } } });
    expect(created.status).toBe(201);
  });

  it('is idempotent for the same organization and refuses another one (exit 2)', async () => {
    const runId = newId('run');
    const first = json(await admin('run', 'register', runId, '--org', 'first-org', '--json'));
    const again = await admin('run', 'register', runId, '--org', 'first-org', '--json');
    expect(again.code).toBe(0);
    expect(json(again)).toEqual({ run: first.run, created: false });

    const elsewhere = await admin('run', 'register', runId, '--org', 'second-org', '--json');
    expect(elsewhere.code).toBe(2);
    expect(json(elsewhere)).toEqual({ error: `run ${runId} is already registered in organization first-org` });
    expect(elsewhere.stderr).toContain('Usage: npm run admin -- run register RUN_ID --org ORG [--workspace WS]');
    expect(json(await admin('run', 'list', '--org', 'second-org', '--json'))).toEqual({ runs: [] });
  });

  it('refuses malformed input with exit 2 and a clear message', async () => {
    const cases = await Promise.all([
      admin('run', 'register', 'run-short', '--org', 'acme', '--json'),
      admin('run', 'register', newId('run'), '--json'),
      admin('run', 'register', newId('run'), '--org', 'acme', '--workspace', 'bad name!', '--json'),
      admin('run', 'list', '--json'),
    ]);
    expect(cases.map((c) => [c.code, json(c)])).toEqual([
      [2, { error: 'RUN_ID must be run- followed by 16 letters or digits' }],
      [2, { error: '--org is required' }],
      [2, { error: '--workspace must be 1-90 letters, digits, - or _' }],
      [2, { error: '--org is required' }],
    ]);
  });

  it('lists the runs of an organization, as JSON and as text', async () => {
    const runIds = [newId('run'), newId('run')];
    await Promise.all(runIds.map((runId) => admin('run', 'register', runId, '--org', 'listed-org', '--workspace', 'app')));
    const listed = json(await admin('run', 'list', '--org', 'listed-org', '--json'));
    expect(listed.runs.map((r: { runId: string }) => r.runId)).toEqual([...runIds].sort());
    expect(listed.runs[0]).toEqual({ runId: expect.any(String), organization: 'listed-org', workspace: 'app', createdAt: expect.stringMatching(ISO) });

    const text = await admin('run', 'list', '--org', 'listed-org');
    expect(text.stdout.trim().split('\n').map((line) => line.split('\t').slice(0, 3))).toEqual(
      [...runIds].sort().map((runId) => [runId, 'listed-org', 'app']),
    );
    expect((await admin('run', 'list', '--org', 'empty-org')).stdout.trim()).toBe('No runs.');
  });
});
