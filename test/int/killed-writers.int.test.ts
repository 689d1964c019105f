import { afterEach, describe, expect, it } from '@jest/globals';
import type { Principal } from '#shared/auth/principal';
import { randomAlphanumeric } from '#shared/ids';
import { getItem } from '#shared/store/collection';
import { keys, type Key } from '#shared/store/keys';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '#shared/store/client';
import { Contended } from '#shared/store/contention';
import { lease } from '#shared/store/receipts';
import { see } from '#shared/store/run-cache';
import { registerNewRun } from '#shared/store/runs';
import type { Write } from '#shared/store/single-write';
import { isQueueWrite, TURN_LEASE_MS } from '#shared/store/turn-queue';
import { callRoute, type RouteAnswer } from '../support/call-route';
import { withWriteHooks } from '../support/write-hooks';

/**
 * A writer killed between any two of its writes, through the real handlers over DynamoDB Local.
 * Each case lets a request make its first `k` writes and stops it before the next (the hook
 * throws, as if its process had died there); then the invariants are checked through the API as
 * clients would: what answered nothing is either wholly there or not there at all, lists and
 * counts agree, GET by id agrees with the list, a retry of the same request gets the first result
 * (or makes it, once), and the next writer's work is exact.
 */
class WriterKilled extends Error {}

/** Runs `request` letting it make `k` writes; the (k+1)-th and any after it are never sent. */
async function killedAfter(k: number, request: () => Promise<RouteAnswer>): Promise<RouteAnswer> {
  let writes = 0;
  const beforeWrite = () => {
    if (++writes > k) throw new WriterKilled(`killed after write ${k}`);
  };
  return withWriteHooks({ beforeWrite }, request);
}

/** The item a write is to. */
const keyOf = (write: Write) =>
  ('Put' in write ? write.Put.Item : 'Update' in write ? write.Update.Key : write.Delete.Key) as {
    PK: string;
    SK: string;
  };
/** A commit point: a run's record, an organization's head. */
const COMMIT_POINTS = new Set([keys.run('x').SK, keys.reservedTagKeyCounter('x').SK]);
const RECEIPTS = keys.receipt('').PK;

/**
 * Runs a change stopped right after its commit, at its first derived write, whatever rounds it lost
 * before; `stop` is what that write throws (by default: its process died there).
 */
async function killedAfterCommit(
  request: () => Promise<RouteAnswer>,
  stop: () => Error = () => new WriterKilled('killed after its commit'),
): Promise<RouteAnswer> {
  let committed = false;
  return withWriteHooks(
    {
      afterWritten: (write) => {
        if (COMMIT_POINTS.has(keyOf(write).SK) && !isQueueWrite(write)) committed = true;
      },
      beforeWrite: (write) => {
        const { PK, SK } = keyOf(write);
        if (committed && !COMMIT_POINTS.has(SK) && !PK.startsWith(RECEIPTS)) throw stop();
      },
    },
    request,
  );
}

/**
 * Runs a change on a record that has a queue (another writer's ticket, given up), so the change
 * must take a ticket of its own; stops it right after that, before its next write.
 */
async function killedAfterTicket(record: Key, request: () => Promise<RouteAnswer>): Promise<RouteAnswer> {
  await documentClient.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: record,
      UpdateExpression: 'SET queueNext = :one, queueHead = :zero, queueGone = :gone',
      ExpressionAttributeValues: { ':one': 1, ':zero': 0, ':gone': new Set([0]) },
    }),
  );
  let placed = false;
  const answer = await withWriteHooks(
    {
      afterWritten: (write) => {
        placed ||= isQueueWrite(write);
      },
      beforeWrite: () => {
        if (placed) throw new WriterKilled('killed after taking its ticket');
      },
    },
    request,
  );
  expect(placed).toBe(true);
  return answer;
}

/**
 * What the killed request answered: before its commit, a failure (500: nothing was written that
 * anyone can see); after it, 503 saying its outcome is unknown, so the client retries.
 */
function expectKilled(answer: RouteAnswer, committed: boolean) {
  expect(answer.status).toBe(committed ? 503 : 500);
  if (committed) expect(answer.json.errors[0].detail).toMatch(/outcome is unknown/);
}

const margin = lease.marginMs;
afterEach(() => {
  lease.marginMs = margin;
});
/** A killed writer's receipt claim lapses about 200 ms after its request (in process, its deadline is 28.5 s out). */
const shortLeases = () => {
  lease.marginMs = -28_300;
};
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const newOrganization = () => `killed-${randomAlphanumeric(8).toLowerCase()}`;
const owner = (organization: string): Principal => ({
  subject: 'user-owner',
  tokenId: `at-${organization}`,
  grants: { [organization]: 'owner' },
});
const keyed = (key: string) => ({ 'Idempotency-Key': key });

describe('a comment create killed after each of its writes (claim, copy, member, then the commit)', () => {
  const comment = (body: string) => ({ data: { type: 'comments', attributes: { body } } });
  /** The run's comments as listed, each as GET by id shows it too, and its n-th member naming the n-th. */
  const listedAndShown = async (runId: string, caller: Principal) => {
    const listed = await callRoute('comments/list', `/runs/${runId}/comments`, caller);
    expect(listed.json.meta.pagination['total-count']).toBe(listed.json.data.length);
    for (const c of listed.json.data)
      expect((await callRoute('comments/show', `/comments/${c.id}`, caller)).json.data).toEqual(c);
    return listed.json.data.map((c: any) => c.attributes.body);
  };
  /** A new organization's owner and a run of its own, with comments of these bodies already on it. */
  const runWithComments = async (...bodies: string[]) => {
    const organization = newOrganization();
    const caller = owner(organization);
    const { runId } = await registerNewRun(organization);
    const path = `/runs/${runId}/comments`;
    for (const body of bodies)
      expect((await callRoute('comments/create', path, caller, comment(body))).status).toBe(201);
    return { organization, caller, runId, path };
  };
  const membersOf = async (runId: string, count: number) =>
    Promise.all(Array.from({ length: count }, (_, n) => getItem(keys.runComment(runId, n + 1))));

  // Its three first writes go out side by side, before its commit: each kill leaves nothing seen.
  for (const k of [1, 2, 3]) {
    it(`after write ${k}: nothing visible; the retry answers once; the next comment is next`, async () => {
      shortLeases();
      const { caller, runId, path } = await runWithComments('before');
      expectKilled(
        await killedAfter(k, () => callRoute('comments/create', path, caller, comment('killed'), keyed(`k-${k}`))),
        false,
      );
      expect(await listedAndShown(runId, caller)).toEqual(['before']);

      // The client retries with its key: the comment it asked for, exactly once.
      await pause(300);
      const retried = await callRoute('comments/create', path, caller, comment('killed'), keyed(`k-${k}`));
      expect(retried.status).toBe(201);
      const again = await callRoute('comments/create', path, caller, comment('killed'), keyed(`k-${k}`));
      expect(again.json.data).toEqual(retried.json.data);
      expect((await callRoute('comments/create', path, caller, comment('after'))).status).toBe(201);
      expect(await listedAndShown(runId, caller)).toEqual(['before', 'killed', 'after']);
      // Numbered densely: the n-th member holds the n-th comment, as shown.
      const members = await membersOf(runId, 3);
      expect(members.map((member) => member?.body)).toEqual(['before', 'killed', 'after']);
      expect(members[1]?.createdAt).toBe(retried.json.data.attributes['created-at']);
    });
  }

  it('a create that met a stale count commits after its writes: killed there, the next writers (before any reader) take the next numbers, and the one that drops it writes it out', async () => {
    const { organization, caller, runId, path } = await runWithComments('before');
    // As a function that has not seen the run's last comment: its writes before the commit are for
    // number 1, its commit takes number 2, and it is killed before writing that comment's items.
    see(runId, { organization, commentCount: 0 });
    expectKilled(await killedAfterCommit(() => callRoute('comments/create', path, caller, comment('killed'))), true);
    for (const body of ['next', 'third'])
      expect((await callRoute('comments/create', path, caller, comment(body))).status).toBe(201);
    const members = await membersOf(runId, 4);
    expect(members.map((member) => member?.body)).toEqual(['before', 'killed', 'next', 'third']);
    const copy = await getItem(keys.comment(String(members[1]?.id)));
    expect({ ...copy, PK: undefined, SK: undefined, number: undefined }).toEqual({
      ...members[1],
      PK: undefined,
      SK: undefined,
    });
    expect(await listedAndShown(runId, caller)).toEqual(['before', 'killed', 'next', 'third']);
  });

  it('two writers killed after their commits, one after the other: both listed and shown, then written out by the next writers', async () => {
    const { organization, caller, runId, path } = await runWithComments('first');
    for (const body of ['killed 1', 'killed 2']) {
      see(runId, { organization, commentCount: 0 });
      expectKilled(await killedAfterCommit(() => callRoute('comments/create', path, caller, comment(body))), true);
    }
    // Both unwritten comments are the record's: a page shows them (writing them out), in order.
    expect(await listedAndShown(runId, caller)).toEqual(['first', 'killed 1', 'killed 2']);
    // On another run, without a reader: the writers that drop them from the record write them out.
    const other = await registerNewRun(organization);
    const otherPath = `/runs/${other.runId}/comments`;
    expect((await callRoute('comments/create', otherPath, caller, comment('first'))).status).toBe(201);
    for (const body of ['killed 1', 'killed 2']) {
      see(other.runId, { organization, commentCount: 0 });
      expectKilled(await killedAfterCommit(() => callRoute('comments/create', otherPath, caller, comment(body))), true);
    }
    for (const body of ['next', 'third'])
      expect((await callRoute('comments/create', otherPath, caller, comment(body))).status).toBe(201);
    const stored = await membersOf(other.runId, 5);
    expect(stored.map((member) => member?.body)).toEqual(['first', 'killed 1', 'killed 2', 'next', 'third']);
    for (const member of stored) expect((await getItem(keys.comment(String(member?.id))))?.body).toBe(member?.body);
  });

  it("a create that finds another's uncommitted member at its number: it commits, and is killed before writing its own member there; no reader ever sees the other", async () => {
    const { caller, runId, path } = await runWithComments('before');
    // Killed after its writes before the commit (claim, copy, member): its member holds number 2.
    expectKilled(await killedAfter(3, () => callRoute('comments/create', path, caller, comment('never'))), false);
    expect((await getItem(keys.runComment(runId, 2)))?.body).toBe('never');
    expect(await listedAndShown(runId, caller)).toEqual(['before']);
    expectKilled(await killedAfterCommit(() => callRoute('comments/create', path, caller, comment('second'))), true);
    expect((await getItem(keys.runComment(runId, 2)))?.body).toBe('never');
    expect(await listedAndShown(runId, caller)).toEqual(['before', 'second']);
    expect((await getItem(keys.runComment(runId, 2)))?.body).toBe('second');
    for (const body of ['third', 'fourth'])
      expect((await callRoute('comments/create', path, caller, comment(body))).status).toBe(201);
    expect((await membersOf(runId, 4)).map((member) => member?.body)).toEqual(['before', 'second', 'third', 'fourth']);
    expect(await listedAndShown(runId, caller)).toEqual(['before', 'second', 'third', 'fourth']);
  });

  it("a create killed right after taking its place in the run's queue: nothing seen; the writer behind waits out its lease, then passes it", async () => {
    const { runId, path, caller } = await runWithComments('before');
    expectKilled(
      await killedAfterTicket(keys.run(runId), () => callRoute('comments/create', path, caller, comment('killed'))),
      false,
    );
    expect(await listedAndShown(runId, caller)).toEqual(['before']);
    expect((await getItem(keys.run(runId)))?.queueNext).toBe(2);
    const started = Date.now();
    expect((await callRoute('comments/create', path, caller, comment('after'))).status).toBe(201);
    expect(Date.now() - started).toBeGreaterThanOrEqual(TURN_LEASE_MS);
    expect((await callRoute('comments/create', path, caller, comment('last'))).status).toBe(201);
    expect(await listedAndShown(runId, caller)).toEqual(['before', 'after', 'last']);
    expect((await membersOf(runId, 3)).map((member) => member?.body)).toEqual(['before', 'after', 'last']);
  });

  it('a create whose member write fails before its commit takes back its copy: nothing of it is left', async () => {
    const { caller, runId, path } = await runWithComments();
    let copyId: string | undefined;
    const beforeWrite = (write: Write) => {
      const { PK, SK } = keyOf(write);
      if ('Put' in write && PK.startsWith(keys.comment('').PK)) copyId = write.Put.Item?.id as string;
      if (SK === keys.runComment(runId, 1).SK) throw new WriterKilled('the member write failed');
    };
    const failed = await withWriteHooks({ beforeWrite }, () =>
      callRoute('comments/create', path, caller, comment('failed')),
    );
    expect(failed.status).toBe(500);
    expect(copyId).toBeDefined();
    expect(await getItem(keys.comment(copyId!))).toBeUndefined();
    expect(await listedAndShown(runId, caller)).toEqual([]);
    expect((await callRoute('comments/create', path, caller, comment('next'))).status).toBe(201);
    expect(await listedAndShown(runId, caller)).toEqual(['next']);
  });

  it('a create that gives up in its writes after its commit keeps its receipt: the retry answers with that comment, not a second', async () => {
    const { organization, caller, runId, path } = await runWithComments('before');
    // A stale count: the commit takes another number than the items written before it, so the
    // writes after it are needed, and they give up as on a run busy past the request's deadline.
    see(runId, { organization, commentCount: 0 });
    const gaveUp = () => new Contended('run', { runId }, 1, 0);
    expectKilled(
      await killedAfterCommit(
        () => callRoute('comments/create', path, caller, comment('once'), keyed('gave-up')),
        gaveUp,
      ),
      true,
    );
    const retried = await callRoute('comments/create', path, caller, comment('once'), keyed('gave-up'));
    expect(retried.status).toBe(201);
    expect(await listedAndShown(runId, caller)).toEqual(['before', 'once']);
  });

  it('a retry meeting a live claim waits for its writer rather than writing a second comment', async () => {
    const { caller, path } = await runWithComments();
    const [a, b] = await Promise.all(
      [1, 2].map(() => callRoute('comments/create', path, caller, comment('once'), keyed('same'))),
    );
    expect([a!.status, b!.status]).toEqual([201, 201]);
    expect(a!.json.data.id).toBe(b!.json.data.id);
    expect((await callRoute('comments/list', path, caller)).json.meta.pagination['total-count']).toBe(1);
  });
});

describe('reserved tag key changes killed after each of their writes', () => {
  const keyDocument = (attributes: Record<string, unknown>) => ({ data: { type: 'reserved-tag-keys', attributes } });
  const list = async (organization: string) => {
    const answer = await callRoute(
      'reserved-tag-keys/list',
      `/organizations/${organization}/reserved-tag-keys?page%5Bsize%5D=100`,
      owner(organization),
    );
    expect(answer.json.meta.pagination['total-count']).toBe(answer.json.data.length);
    return answer.json.data.map((k: any) => ({ id: k.id, key: k.attributes.key }));
  };
  const create = (organization: string, key: string, headers: Record<string, string> = {}) =>
    callRoute(
      'reserved-tag-keys/create',
      `/organizations/${organization}/reserved-tag-keys`,
      owner(organization),
      keyDocument({ key }),
      headers,
    );
  const rename = (organization: string, id: string, key: string) =>
    callRoute('reserved-tag-keys/update', `/reserved-tag-keys/${id}`, owner(organization), keyDocument({ key }));
  const remove = (organization: string, id: string) =>
    callRoute('reserved-tag-keys/delete', `/reserved-tag-keys/${id}`, owner(organization));

  it("a create killed right after taking its place in the organization's queue: nothing seen, its name free; the next writer waits out its lease, then passes it", async () => {
    shortLeases();
    const organization = newOrganization();
    expect((await create(organization, 'before')).status).toBe(201);
    expectKilled(
      await killedAfterTicket(keys.reservedTagKeyCounter(organization), () => create(organization, 'env')),
      false,
    );
    expect((await list(organization)).map((x: any) => x.key)).toEqual(['before']);
    const started = Date.now();
    expect((await create(organization, 'other')).status).toBe(201);
    expect(Date.now() - started).toBeGreaterThanOrEqual(TURN_LEASE_MS);
    await pause(300);
    expect((await create(organization, 'ENV')).status).toBe(201);
    expect((await list(organization)).map((x: any) => x.key)).toEqual(['before', 'other', 'ENV']);
  });

  // Writes: the receipt's claim, the head's commit, the guard and the copy (sent together), the member.
  for (const k of [1, 2, 3, 4]) {
    it(`a create, after write ${k}: ${k === 1 ? 'nothing visible' : 'listed, its name taken'}; the retry answers once`, async () => {
      shortLeases();
      const organization = newOrganization();
      expect((await create(organization, 'before')).status).toBe(201);
      expectKilled(await killedAfter(k, () => create(organization, 'env', keyed(`c-${k}`))), k >= 2);
      const listed = await list(organization);
      expect(listed.map((x: any) => x.key)).toEqual(k === 1 ? ['before'] : ['before', 'env']);
      expect((await create(organization, 'ENV')).status).toBe(k === 1 ? 201 : 422);
      await pause(300);
      const retried = await create(organization, 'env', keyed(`c-${k}`));
      if (k === 1) {
        // ENV took the name meanwhile: the retry that takes the claim over is refused like any create.
        expect(retried.status).toBe(422);
      } else {
        expect(retried.status).toBe(201);
        expect(retried.json.data.id).toBe(listed[1].id);
        // Found by id, as a PATCH or DELETE finds it.
        expect((await rename(organization, listed[1].id, 'env-2')).status).toBe(200);
      }
      expect((await list(organization)).length).toBe(2);
    });
  }

  // Without an Idempotency-Key, no claim: the head's commit, the guard and the copy (together), the
  // member. The identical retry meets the key by its name, which keeps the request's receipt.
  for (const k of [0, 1, 2, 3]) {
    it(`a create without a key, after write ${k}: ${k === 0 ? 'nothing visible' : 'listed, its name taken'}; the identical retry answers with it, found by id at once`, async () => {
      const organization = newOrganization();
      expect((await create(organization, 'before')).status).toBe(201);
      expectKilled(await killedAfter(k, () => create(organization, 'env')), k >= 1);
      const head = await getItem(keys.reservedTagKeyCounter(organization));
      const killed = (head!.latest as { record: { id: string } }).record;
      // Before any reader: the retry answers with the key the killed attempt committed, and a PATCH finds it.
      const retried = await create(organization, 'env');
      expect(retried.status).toBe(201);
      if (k >= 1) expect(retried.json.data.id).toBe(killed.id);
      expect((await rename(organization, retried.json.data.id, 'env-2')).status).toBe(200);
      expect((await list(organization)).map((x: any) => x.key)).toEqual(['before', 'env-2']);
      // The name was taken once, and is free again.
      expect((await create(organization, 'ENV')).status).toBe(201);
    });
  }

  // Writes: the head's commit, the new guard and the copy (together), the member and the old guard's release (together).
  for (const k of [1, 2, 3, 4]) {
    it(`a rename, after write ${k}: the key has its new name everywhere, the old name is free, the new one taken`, async () => {
      const organization = newOrganization();
      const { json } = await create(organization, 'old');
      expectKilled(await killedAfter(k, () => rename(organization, json.data.id, 'new')), true);
      expect(await list(organization)).toEqual([{ id: json.data.id, key: 'new' }]);
      expect((await create(organization, 'NEW')).status).toBe(422);
      expect((await create(organization, 'OLD')).status).toBe(201);
      expect((await rename(organization, json.data.id, 'newer')).status).toBe(200);
      expect((await list(organization)).map((x: any) => x.key)).toEqual(['newer', 'OLD']);
    });
  }

  it('a create killed before its member, then its delete killed after its commit: never listed, gone by id, its name free; the next writers leave it so', async () => {
    const other = newOrganization();
    // Killed after its commit, guard and copy (a delete finds a key by its copy), before its member.
    expectKilled(await killedAfter(3, () => create(other, 'doomed')), true);
    // Its id, as the head holds it (a list or a retry would write it out).
    const head = await getItem(keys.reservedTagKeyCounter(other));
    const id = (head!.latest as { record: { id: string } }).record.id;
    expectKilled(await killedAfterCommit(() => remove(other, id)), true);
    expect(await list(other)).toEqual([]);
    expect((await rename(other, id, 'again')).status).toBe(404);
    // Two more changes drop both from the head, before any reader: the key stays gone, its name free.
    for (const key of ['one', 'two']) expect((await create(other, key)).status).toBe(201);
    expect((await list(other)).map((x: any) => x.key)).toEqual(['one', 'two']);
    expect((await getItem(keys.reservedTagKeyById(id)))?.deleted).toBe(true);
    expect((await remove(other, id)).status).toBe(404);
    expect((await create(other, 'DOOMED')).status).toBe(201);
  });

  it('two renames of one key, both killed after their commits: the last name everywhere once the next writers drop them', async () => {
    const organization = newOrganization();
    const { json } = await create(organization, 'first');
    for (const key of ['second', 'third'])
      expectKilled(await killedAfterCommit(() => rename(organization, json.data.id, key)), true);
    for (const key of ['x', 'y']) expect((await create(organization, key)).status).toBe(201);
    expect(await list(organization)).toEqual([
      { id: json.data.id, key: 'third' },
      { id: expect.any(String), key: 'x' },
      { id: expect.any(String), key: 'y' },
    ]);
    expect((await getItem(keys.reservedTagKeyById(json.data.id)))?.key).toBe('third');
    for (const [key, status] of [
      ['FIRST', 201],
      ['SECOND', 201],
      ['THIRD', 422],
    ] as const)
      expect((await create(organization, key)).status).toBe(status);
  });

  // Writes: the head's commit, the guard's release and the copy's tombstone (together), the member's tombstone.
  for (const k of [1, 2, 3]) {
    it(`a delete, after write ${k}: gone from lists and by id, its name free`, async () => {
      const organization = newOrganization();
      const [a, b] = [await create(organization, 'a'), await create(organization, 'b')];
      expectKilled(await killedAfter(k, () => remove(organization, a.json.data.id)), true);
      expect(await list(organization)).toEqual([{ id: b.json.data.id, key: 'b' }]);
      expect((await rename(organization, a.json.data.id, 'again')).status).toBe(404);
      expect((await remove(organization, a.json.data.id)).status).toBe(404);
      expect((await create(organization, 'A')).status).toBe(201);
      expect((await list(organization)).map((x: any) => x.key)).toEqual(['b', 'A']);
    });
  }
});

describe('a retry that meets the receipt its killed first attempt claimed, while that claim’s lease runs', () => {
  // The first attempt died after its claim (write 1): until the claim's lease ends, the retry cannot
  // know whether that attempt will still commit. One with little time left answers 503, wrote nothing,
  // and says when to come back: when the lease ends. (It used to say the run or organization was busy.)
  const cases = [
    {
      what: 'a comment create',
      route: 'comments/create',
      setUp: async (organization: string) => `/runs/${(await registerNewRun(organization)).runId}/comments`,
      body: { data: { type: 'comments', attributes: { body: 'once' } } },
      list: 'comments/list',
    },
    {
      what: 'a reserved tag key create',
      route: 'reserved-tag-keys/create',
      setUp: async (organization: string) => `/organizations/${organization}/reserved-tag-keys`,
      body: { data: { type: 'reserved-tag-keys', attributes: { key: 'once' } } },
      list: 'reserved-tag-keys/list',
    },
  ];
  for (const { what, route, setUp, body, list } of cases) {
    it(`${what}: 503 with Retry-After until the lease ends, and nothing written`, async () => {
      const organization = newOrganization();
      const caller = owner(organization);
      const path = await setUp(organization);
      expectKilled(await killedAfter(1, () => callRoute(route, path, caller, body, keyed('lease'))), false);

      const retried = await callRoute(route, path, caller, body, keyed('lease'), 5_000);
      expect(retried.status).toBe(503);
      expect(retried.json.errors[0].detail).toMatch(/earlier attempt of this create .* wrote nothing/);
      // The lease: the first attempt's deadline (29 s out, in process) and the margin.
      const retryAfter = Number(retried.headers['Retry-After']);
      expect(retryAfter).toBeGreaterThan(29 + margin / 1000 - 10);
      expect(retryAfter).toBeLessThanOrEqual(29 + margin / 1000);
      expect((await callRoute(list, path, caller)).json.data).toEqual([]);
    }, 15_000);
  }
});
