import { describe, expect, it } from '@jest/globals';
import { findComment, insertComment, listStoredComments } from '#shared/store/comments';
import { registerNewRun } from '#shared/store/runs';
import { newId } from '#shared/ids';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '#shared/store/client';
import { keys } from '#shared/store/keys';
import { getItem } from '#shared/store/collection';
import { ATTEMPT_ROOM_MS, Contended, withStoreDeadline } from '#shared/store/contention';
import { isQueueWrite, TURN_LEASE_MS } from '#shared/store/turn-queue';
import { afterCommit } from '#shared/store/write-outcome';
import type { Write } from '#shared/store/writes';
import { withWriteHooks } from '../support/write-hooks';
import type { Receipt } from '#shared/store/receipts';

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

describe('the queue of turns on a busy run', () => {
  /** Sets the run's queue as writers elsewhere left it (their tickets, who gave up, when the head last moved). */
  const queue = (runId: string, at: { next: number; head: number; movedAt: number; gone?: number[] }) =>
    documentClient.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.run(runId),
        UpdateExpression: `SET queueNext = :next, queueHead = :head, queueAt = :at${at.gone ? ', queueGone = :gone' : ''}`,
        ExpressionAttributeValues: {
          ':next': at.next,
          ':head': at.head,
          ':at': at.movedAt,
          ...(at.gone ? { ':gone': new Set(at.gone) } : {}),
        },
      }),
    );
  const queueOf = async (runId: string) => {
    const { queueNext, queueHead, queueGone } = (await getItem(keys.run(runId)))!;
    return { queueNext, queueHead, queueGone };
  };
  const create = (runId: string, body: string) =>
    insertComment({ runId, organization: 'acme', body, createdBy: 'user-queued' });

  it('a writer behind a ticket whose holder died waits its lease, then passes it; the next writer goes at once', async () => {
    const runId = await registeredRun();
    await queue(runId, { next: 1, head: 0, movedAt: Date.now() });
    const started = Date.now();
    expect(await create(runId, 'after the dead one')).toMatchObject({ body: 'after the dead one' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(TURN_LEASE_MS);
    expect(await queueOf(runId)).toEqual({ queueNext: 2, queueHead: 2, queueGone: undefined });
    const next = Date.now();
    expect(await create(runId, 'no one waits')).toMatchObject({ body: 'no one waits' });
    expect(Date.now() - next).toBeLessThan(TURN_LEASE_MS / 2);
    const listed = await listStoredComments(runId, page(1, 20));
    expect(listed?.page.items.map((c) => c.body)).toEqual(['after the dead one', 'no one waits']);
  });

  it('a writer that gives up leaves its place: the writer behind it need not wait out its lease', async () => {
    const runId = await registeredRun();
    // Ticket 0 is a live writer's turn; this one takes ticket 1 and gives up before that turn ends.
    await queue(runId, { next: 1, head: 0, movedAt: Date.now() });
    const givingUp = withStoreDeadline(Date.now() + ATTEMPT_ROOM_MS + 300, () => create(runId, 'gave up'));
    await expect(givingUp).rejects.toBeInstanceOf(Contended);
    expect(await queueOf(runId)).toEqual({ queueNext: 2, queueHead: 0, queueGone: new Set([1]) });
    // Ticket 0's writer commits (as the head moving on); the next writer's only ticket ahead gave up.
    await queue(runId, { next: 2, head: 1, movedAt: Date.now(), gone: [1] });
    const started = Date.now();
    expect(await create(runId, 'next')).toMatchObject({ body: 'next' });
    expect(Date.now() - started).toBeLessThan(TURN_LEASE_MS / 2);
    expect(await queueOf(runId)).toEqual({ queueNext: 3, queueHead: 3, queueGone: undefined });
    expect((await listStoredComments(runId, page(1, 20)))?.page.items.map((c) => c.body)).toEqual(['next']);
  });
});

/**
 * A loaded store answers some writes too late: the SDK gives up on the answer, and the write may or
 * may not have landed. Before its commit a create has written nothing anyone can see, so such a
 * write does not make the create's outcome unknown: it goes on, and its answer is the truth.
 */
describe('a write before the commit whose answer was lost', () => {
  /** The error a timed-out write ends in: marked as possibly applied, as the store client marks it. */
  const lostAnswer = () => afterCommit(() => Promise.reject(new Error('socket timed out'))).catch((error) => error);
  /** Loses the answer of the first write `which` picks, after it landed (`landed`) or before. */
  async function losing<T>(which: (write: Write) => boolean, landed: boolean, work: () => Promise<T>): Promise<T> {
    const error = await lostAnswer();
    let lost = false;
    const hook = (write: Write) => {
      if (lost || !which(write)) return;
      lost = true;
      throw error;
    };
    try {
      return await withWriteHooks(landed ? { afterWritten: hook } : { beforeWrite: hook }, work);
    } finally {
      expect(lost).toBe(true);
    }
  }
  const isPutOf = (prefix: string) => (write: Write) =>
    'Put' in write && String(write.Put.Item?.PK).startsWith(prefix) && write.Put.ConditionExpression !== undefined;
  const once = (): Receipt => ({
    id: `receipt-${newId('wsc')}`,
    fingerprint: 'same request',
    expiresAt: Math.floor(Date.now() / 1000) + 60,
    keyed: true,
  });

  it.each([
    ['its copy, landed', 'COMMENT#', true],
    ['its copy, not landed', 'COMMENT#', false],
    ['its member, landed', 'RUN#', true],
    ['its member, not landed', 'RUN#', false],
  ])(
    'a comment create whose prewrite of %s answers 201, exactly once, with its items right',
    async (_, prefix, landed) => {
      const runId = await registeredRun();
      const before = await insertComment({ runId, organization: 'acme', body: 'first', createdBy: 'user-a' });
      const created = await losing(isPutOf(prefix), landed, () =>
        insertComment({ runId, organization: 'acme', body: 'second', createdBy: 'user-a' }),
      );
      expect(created).toMatchObject({ body: 'second' });
      const { id } = created as { id: string };
      expect(await findComment(id)).toEqual(created);
      expect((await listStoredComments(runId, page(1, 20)))?.page).toEqual({ items: [before, created], totalCount: 2 });
      expect((await getItem(keys.runComment(runId, 2)))?.id).toBe(id);
    },
  );

  it('a copy whose prewrite was lost is put again before the commit: a writer that dies after its commit leaves it shown by id', async () => {
    const runId = await registeredRun();
    const lost = await lostAnswer();
    let copyLost = false;
    const hooks = {
      beforeWrite: (write: Write) => {
        if (!copyLost && isPutOf('COMMENT#')(write)) {
          copyLost = true;
          throw lost;
        }
      },
      // The commit lands, and its writer dies right after it: nothing after the commit is written.
      afterWritten: (write: Write) => {
        if ('Update' in write && /^SET commentCount/.test(write.Update.UpdateExpression ?? ''))
          throw new Error('killed after its commit');
      },
    };
    await expect(
      withWriteHooks(hooks, () => insertComment({ runId, organization: 'acme', body: 'orphan?', createdBy: 'user-a' })),
    ).rejects.toThrow('killed after its commit');
    expect(copyLost).toBe(true);
    const [listed] = (await listStoredComments(runId, page(1, 20)))!.page.items;
    expect(listed).toMatchObject({ body: 'orphan?' });
    expect(await findComment(listed!.id)).toEqual(listed);
  });

  it('a claim of a receipt that landed is found to be its own: the create commits once, and its retry replays it', async () => {
    const runId = await registeredRun();
    const receipt = once();
    const input = { runId, organization: 'acme', body: 'claimed', createdBy: 'user-a' };
    const created = await losing(isPutOf('RECEIPT#'), true, () => insertComment(input, receipt));
    expect(created).toMatchObject({ body: 'claimed' });
    expect(await insertComment(input, receipt)).toEqual({ replayOf: { fingerprint: 'same request', record: created } });
    expect((await listStoredComments(runId, page(1, 20)))?.page).toEqual({ items: [created], totalCount: 1 });
  });

  it('a ticket taken whose answer was lost: the writer takes another and commits, passing the lost one after its lease', async () => {
    const runId = await registeredRun();
    // A writer elsewhere holds ticket 0 and died: this one must queue.
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.run(runId),
        UpdateExpression: 'SET queueNext = :next, queueHead = :head, queueAt = :at',
        ExpressionAttributeValues: { ':next': 1, ':head': 0, ':at': Date.now() },
      }),
    );
    const created = await losing(isQueueWrite, true, () =>
      insertComment({ runId, organization: 'acme', body: 'queued', createdBy: 'user-a' }),
    );
    expect(created).toMatchObject({ body: 'queued' });
    const run = (await getItem(keys.run(runId)))!;
    // Tickets 0 (dead) and 1 (lost) were passed; 2 committed.
    expect({ next: run.queueNext, head: run.queueHead, count: run.commentCount }).toEqual({
      next: 3,
      head: 3,
      count: 1,
    });
    expect((await listStoredComments(runId, page(1, 20)))?.page).toEqual({ items: [created], totalCount: 1 });
  });
});
