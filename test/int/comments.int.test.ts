import { describe, expect, it } from '@jest/globals';
import { findComment, insertComment, listStoredComments } from '#shared/store/comments';
import { registerNewRun } from '#shared/store/runs';
import { newId } from '#shared/ids';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '#shared/store/client';
import { keys } from '#shared/store/keys';

async function registeredRun(organization = 'acme') {
  return (await registerNewRun(organization)).runId;
}

const page = (number: number, size: number) => ({ offset: (number - 1) * size, limit: size });

describe('comments store', () => {
  it('writes a comment that lists under its run and shows by id, with the run counted', async () => {
    const runId = await registeredRun();
    const comment = await insertComment({ runId, organization: 'acme', body: 'Ship it', createdBy: 'user-alice' });
    expect(comment).toEqual({
      id: expect.stringMatching(/^wsc-[A-Za-z0-9]{16}$/),
      runId,
      organization: 'acme',
      body: 'Ship it',
      createdBy: 'user-alice',
      createdAt: expect.any(String),
    });
    expect(await findComment((comment as { id: string }).id)).toEqual(comment);
    expect(await listStoredComments(runId, page(1, 20))).toEqual({
      organization: 'acme',
      page: { items: [comment], totalCount: 1 },
    });
  });

  it('lists an empty run with its organization and a zero count', async () => {
    const runId = await registeredRun('empty-org');
    expect(await listStoredComments(runId, page(1, 20))).toEqual({
      organization: 'empty-org',
      page: { items: [], totalCount: 0 },
    });
  });

  it('knows nothing of an unregistered run', async () => {
    expect(await listStoredComments(newId('run'), page(1, 20))).toBeUndefined();
    expect(await findComment(newId('wsc'))).toBeUndefined();
  });

  it('refuses a comment for an unregistered run or the wrong organization, writing nothing', async () => {
    const runId = await registeredRun('right-org');
    const base = { body: 'x', createdBy: 'user-mallory' };
    expect(await insertComment({ ...base, runId: newId('run'), organization: 'right-org' })).toBe('run-not-found');
    expect(await insertComment({ ...base, runId, organization: 'wrong-org' })).toBe('run-not-found');
    expect(await listStoredComments(runId, page(1, 20))).toEqual({
      organization: 'right-org',
      page: { items: [], totalCount: 0 },
    });
  });

  it('counts every one of many concurrent comments on one run, oldest first', async () => {
    const runId = await registeredRun();
    const written = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        insertComment({ runId, organization: 'acme', body: `comment ${i}`, createdBy: 'user-bob' }),
      ),
    );
    const listed = await listStoredComments(runId, page(1, 100));
    expect(listed?.page.totalCount).toBe(25);
    // DynamoDB orders sort keys by their bytes: creation time, then id.
    const sortKey = (c: any) => `${c.createdAt}#${c.id}`;
    expect(listed?.page.items).toEqual([...written].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : 1)));
  });

  it('pages through a run in creation order', async () => {
    const runId = await registeredRun();
    const written = [];
    for (let i = 0; i < 5; i++)
      written.push(await insertComment({ runId, organization: 'acme', body: `#${i}`, createdBy: 'user-bob' }));
    expect((await listStoredComments(runId, page(1, 2)))?.page.items).toEqual(written.slice(0, 2));
    expect((await listStoredComments(runId, page(3, 2)))?.page).toEqual({ items: written.slice(4), totalCount: 5 });
    expect((await listStoredComments(runId, page(4, 2)))?.page).toEqual({ items: [], totalCount: 5 });
  });
});

describe('fair turns on a busy run', () => {
  /** What an older writer's claim leaves on the run's record: its start, and when the claim lapses. */
  const claimTurn = (runId: string, since: number, until: number) =>
    documentClient.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.run(runId),
        UpdateExpression: 'SET turnSince = :since, turnUntil = :until',
        ExpressionAttributeValues: { ':since': since, ':until': until },
      }),
    );

  it('holds a younger writer back while an older one holds the turn, until the claim lapses', async () => {
    const runId = await registeredRun();
    const started = Date.now();
    await claimTurn(runId, started - 5_000, started + 700);
    const comment = await insertComment({
      runId,
      organization: 'acme',
      body: 'after my elder',
      createdBy: 'user-young',
    });
    expect(comment).toMatchObject({ body: 'after my elder' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    expect((await listStoredComments(runId, page(1, 20)))?.page.totalCount).toBe(1);
  });

  it('writes at once past a lapsed claim or a younger one', async () => {
    for (const [since, until] of [
      [Date.now() - 5_000, Date.now() - 1],
      [Date.now() + 60_000, Date.now() + 60_000],
    ] as const) {
      const runId = await registeredRun();
      await claimTurn(runId, since, until);
      const started = Date.now();
      expect(
        await insertComment({ runId, organization: 'acme', body: 'no one older waits', createdBy: 'user-old' }),
      ).toMatchObject({ body: 'no one older waits' });
      expect(Date.now() - started).toBeLessThan(500);
    }
  });
});
