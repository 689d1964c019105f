import { createHmac } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { tokenFor } from '../support/api';
import { adminStreams } from '../support/admin-cli';
import { useLocalStack } from '../support/local-stack';
import { newId } from '#shared/ids';
import { commentDocument } from '../support/documents';

const { api } = useLocalStack();
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The operator CLI against this test file's table (TABLE_NAME is set). */
const admin = (...args: string[]) => adminStreams(args);

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
    const created = await api.post(`/runs/${runId}/comments`, { token, body: commentDocument('hello') });
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
    await Promise.all(
      runIds.map((runId) => admin('run', 'register', runId, '--org', 'listed-org', '--workspace', 'app')),
    );
    const listed = json(await admin('run', 'list', '--org', 'listed-org', '--json'));
    expect(listed.runs.map((r: { runId: string }) => r.runId)).toEqual([...runIds].sort());
    expect(listed.runs[0]).toEqual({
      runId: expect.any(String),
      organization: 'listed-org',
      workspace: 'app',
      createdAt: expect.stringMatching(ISO),
    });

    const text = await admin('run', 'list', '--org', 'listed-org');
    expect(
      text.stdout
        .trim()
        .split('\n')
        .map((line) => line.split(/\s{2,}/)),
    ).toEqual([
      ['RUN ID', 'ORGANIZATION', 'WORKSPACE', 'CREATED (UTC)'],
      ...[...runIds]
        .sort()
        .map((runId) => [runId, 'listed-org', 'app', expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d$/)]),
    ]);
    expect((await admin('run', 'list', '--org', 'empty-org')).stdout.trim()).toBe('No runs.');
  });
});

describe('npm run admin -- notifications …', () => {
  const url = 'https://tfe.example.com';
  /** A verification notification signed with `secret`, as HCP Terraform sends it when a configuration is enabled. */
  const verify = async (organization: string, secret: string) => {
    const body = JSON.stringify({
      payload_version: 1,
      notification_configuration_id: 'nc-AeUQ2zfKZzW9TiGZ',
      run_id: null,
      organization_name: null,
      notifications: [{ trigger: 'verification' }],
    });
    const signature = createHmac('sha512', secret).update(body).digest('hex');
    const response = await fetch(`${api.baseUrl}/api/v2/run-notifications/${organization}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-TFE-Notification-Signature': signature },
      body,
    });
    return response.status;
  };

  it('prints the secret once, with the settings to enter in HCP Terraform; show never prints it', async () => {
    const created = await admin('notifications', 'create', '--org', 'notify-org', '--url', url, '--json');
    expect(created.code).toBe(0);
    const settings = json(created);
    expect(settings).toMatchObject({
      organization: 'notify-org',
      url: `${url}/api/v2/run-notifications/notify-org`,
      triggers: expect.arrayContaining(['run:created']),
      token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(await verify('notify-org', settings.token)).toBe(204);

    const text = await admin('notifications', 'show', '--org', 'notify-org', '--url', url);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`Webhook URL:  ${url}/api/v2/run-notifications/notify-org`);
    expect(`${text.stdout}${text.stderr}`).not.toContain(settings.token);
    expect(
      JSON.stringify(json(await admin('notifications', 'show', '--org', 'notify-org', '--url', url, '--json'))),
    ).not.toContain(settings.token);

    const again = await admin('notifications', 'create', '--org', 'notify-org', '--url', url, '--json');
    expect([again.code, json(again)]).toEqual([
      2,
      { error: 'organization notify-org already has a notification secret; rotate it instead' },
    ]);
  });

  it('rotates: a new secret at once, the old one until the grace period ends', async () => {
    const old = json(await admin('notifications', 'create', '--org', 'rotate-org', '--url', url, '--json')).token;
    const rotated = json(
      await admin('notifications', 'rotate', '--org', 'rotate-org', '--url', url, '--grace-hours', '2', '--json'),
    );
    expect(rotated.token).not.toBe(old);
    expect(Date.parse(rotated.previousSecretValidUntil) - Date.now()).toBeGreaterThan(2 * 3_600_000 - 60_000);
    expect([await verify('rotate-org', rotated.token), await verify('rotate-org', old)]).toEqual([204, 204]);
    const leaked = json(
      await admin('notifications', 'rotate', '--org', 'rotate-org', '--url', url, '--grace-hours', '0', '--json'),
    );
    expect([await verify('rotate-org', leaked.token), await verify('rotate-org', rotated.token)]).toEqual([204, 401]);
    // Said as it is: no grace period, and no "accepted until" for a secret refused already.
    const said = (await admin('notifications', 'show', '--org', 'rotate-org', '--url', url)).stdout;
    expect(said).not.toContain('accepted until');
    const again = (await admin('notifications', 'rotate', '--org', 'rotate-org', '--url', url, '--grace-hours', '0'))
      .stdout;
    expect(again).toContain('the old one is refused from now on');
    expect(again).not.toMatch(/accepted until|grace period/);
  });

  it('refuses without a secret to rotate or an address for a named table (exit 2)', async () => {
    const cases = await Promise.all([
      admin('notifications', 'rotate', '--org', 'no-secret-org', '--url', url, '--json'),
      admin('notifications', 'create', '--org', 'no-url-org', '--json'),
    ]);
    expect(cases.map((c) => [c.code, json(c)])).toEqual([
      [2, { error: 'organization no-secret-org has no notification secret; create one first' }],
      [2, { error: "--url is required with TABLE_NAME: the stage's TfeAddress output" }],
    ]);
  });
});
