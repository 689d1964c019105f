import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { revokeToken } from '#shared/store/tokens';
import { findRun, listRuns, registerRun } from '#shared/store/runs';
import { written } from '../support/written';
import { newId } from '#shared/ids';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('runs store', () => {
  it('registers a run and finds it by id and under its organization', async () => {
    const runId = newId('run');
    const { run, created } = written(await registerRun({ runId, organization: 'acme', workspace: 'networking' }));
    expect(created).toBe(true);
    expect(run).toEqual({
      runId,
      organization: 'acme',
      workspace: 'networking',
      createdAt: expect.stringMatching(ISO),
    });
    expect(await findRun(runId)).toEqual(run);
    expect(await listRuns('acme')).toEqual([run]);
    expect(await listRuns('other-org')).toEqual([]);
  });

  it('registers a run without a workspace', async () => {
    const runId = newId('run');
    const { run } = written(await registerRun({ runId, organization: 'no-workspace-org' }));
    expect(run).toEqual({ runId, organization: 'no-workspace-org', createdAt: expect.stringMatching(ISO) });
  });

  it('is idempotent for the same organization: the run stays as first registered', async () => {
    const runId = newId('run');
    const first = written(await registerRun({ runId, organization: 'idem', workspace: 'app' }));
    const again = await registerRun({ runId, organization: 'idem', workspace: 'app' });
    expect(again).toEqual({ run: first.run, created: false });
    expect(await listRuns('idem')).toEqual([first.run]);
  });

  it('refuses the same run id for another organization and changes nothing', async () => {
    const runId = newId('run');
    const { run } = written(await registerRun({ runId, organization: 'owner-org' }));
    expect(await registerRun({ runId, organization: 'thief-org' })).toBe('registered-elsewhere');
    expect(await findRun(runId)).toEqual(run);
    expect(await listRuns('thief-org')).toEqual([]);
  });

  it('settles concurrent registrations of one run on a single organization', async () => {
    const runId = newId('run');
    const results = await Promise.all(
      ['race-a', 'race-b', 'race-a', 'race-b'].map((organization) => registerRun({ runId, organization })),
    );
    const winner = (await findRun(runId))!.organization;
    const registrations = results.filter((r) => r !== 'registered-elsewhere');
    for (const { run } of registrations) expect(run.organization).toBe(winner);
    expect(results.filter((r) => r === 'registered-elsewhere')).toHaveLength(4 - registrations.length);
    expect(registrations.filter((r) => r.created)).toHaveLength(1);
    expect([...(await listRuns('race-a')), ...(await listRuns('race-b'))]).toHaveLength(1);
  });

  it('does not find a run that was never registered', async () => {
    expect(await findRun(newId('run'))).toBeUndefined();
  });
});

describe('npm start’s seed', () => {
  it('creates its owner token and run whatever else the store holds, once', async () => {
    const { createToken } = await import('#shared/store/tokens');
    // What the operator CLI may have written before the first start: another token, another run.
    await createToken({ subject: 'user-alice', grants: { 'example-org': 'member' } });
    await registerRun({ runId: newId('run'), organization: 'example-org' });
    const { ensureSeed } = await import('#infra/local/seed');
    const dataDir = mkdtempSync(join(tmpdir(), 'tfc-seed-'));
    const seed = await ensureSeed(dataDir);
    expect(seed).toMatchObject({
      organization: 'example-org',
      tokenId: expect.stringMatching(/^at-/),
      token: expect.stringMatching(/^tfcapi_/),
      tokenCreated: true,
      runCreated: true,
    });
    expect(seed.replaced).toBeUndefined();
    expect(await findRun(seed.runId)).toEqual({
      runId: seed.runId,
      organization: 'example-org',
      workspace: 'example-workspace',
      createdAt: expect.stringMatching(ISO),
    });
    // A later start gives the same token back (kept in the data folder, owner only): nothing new is minted.
    expect(statSync(join(dataDir, 'seed-token')).mode & 0o777).toBe(0o600);
    const again = await ensureSeed(dataDir);
    expect(again).toEqual({
      organization: 'example-org',
      tokenId: seed.tokenId,
      token: seed.token,
      tokenCreated: false,
      runId: seed.runId,
      runCreated: false,
    });
    expect(await listRuns('example-org')).toHaveLength(2);
  });

  it('replaces a seed token that no longer works, or whose secret the folder does not keep, and says which', async () => {
    const { ensureSeed } = await import('#infra/local/seed');
    const dataDir = mkdtempSync(join(tmpdir(), 'tfc-seed-'));
    const first = await ensureSeed(dataDir);
    await revokeToken(first.tokenId);
    const afterRevoke = await ensureSeed(dataDir);
    expect(afterRevoke).toMatchObject({ tokenCreated: true, replaced: { tokenId: first.tokenId, why: 'revoked' } });
    expect(afterRevoke.tokenId).not.toBe(first.tokenId);
    // A data folder from before the secret was kept: one new token, then the same one every start.
    rmSync(join(dataDir, 'seed-token'));
    const notKept = await ensureSeed(dataDir);
    expect(notKept).toMatchObject({ tokenCreated: true, replaced: { tokenId: afterRevoke.tokenId, why: 'not kept' } });
    expect(await ensureSeed(dataDir)).toMatchObject({
      tokenId: notKept.tokenId,
      token: notKept.token,
      tokenCreated: false,
    });
  });
});
