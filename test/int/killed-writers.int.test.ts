import { afterEach, describe, expect, it } from '@jest/globals';
import type { Principal } from '#shared/auth/principal';
import { randomAlphanumeric } from '#shared/ids';
import { getItem } from '#shared/store/collection';
import { keys } from '#shared/store/keys';
import { lease } from '#shared/store/receipts';
import { registerNewRun } from '#shared/store/runs';
import { writeHooks, type Write } from '#shared/store/single-write';
import { callRoute, type RouteAnswer } from '../support/call-route';

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
  writeHooks.beforeWrite = () => {
    if (++writes > k) throw new WriterKilled(`killed after write ${k}`);
  };
  try {
    return await request();
  } finally {
    writeHooks.beforeWrite = undefined;
  }
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

/** Runs a change stopped right after its commit, before its first derived write, whatever rounds it lost before. */
async function killedAfterCommit(request: () => Promise<RouteAnswer>): Promise<RouteAnswer> {
  writeHooks.beforeWrite = (write) => {
    const { PK, SK } = keyOf(write);
    if (!COMMIT_POINTS.has(SK) && !PK.startsWith(RECEIPTS)) throw new WriterKilled('killed after its commit');
  };
  try {
    return await request();
  } finally {
    writeHooks.beforeWrite = undefined;
  }
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

describe('a comment create killed after each of its writes (claim, commit, copy, member)', () => {
  const comment = (body: string) => ({ data: { type: 'comments', attributes: { body } } });

  for (const k of [1, 2, 3]) {
    it(`after write ${k}: ${k === 1 ? 'nothing visible' : 'the comment is listed and shown'}; the retry answers once; the next comment is next`, async () => {
      shortLeases();
      const organization = newOrganization();
      const caller = owner(organization);
      const { runId } = await registerNewRun(organization);
      const path = `/runs/${runId}/comments`;
      expect((await callRoute('comments/create', path, caller, comment('before'))).status).toBe(201);
      expectKilled(
        await killedAfter(k, () => callRoute('comments/create', path, caller, comment('killed'), keyed(`k-${k}`))),
        k >= 2,
      );

      const listed = await callRoute('comments/list', path, caller);
      const bodies = listed.json.data.map((c: any) => c.attributes.body);
      expect(bodies).toEqual(k === 1 ? ['before'] : ['before', 'killed']);
      expect(listed.json.meta.pagination['total-count']).toBe(bodies.length);
      for (const c of listed.json.data)
        expect((await callRoute('comments/show', `/comments/${c.id}`, caller)).json.data).toEqual(c);

      // The client retries with its key: the comment it asked for, exactly once.
      await pause(300);
      const retried = await callRoute('comments/create', path, caller, comment('killed'), keyed(`k-${k}`));
      expect(retried.status).toBe(201);
      if (k > 1) expect(retried.json.data.id).toBe(listed.json.data[1].id);
      const next = await callRoute('comments/create', path, caller, comment('after'));
      expect(next.status).toBe(201);
      const after = await callRoute('comments/list', path, caller);
      expect(after.json.data.map((c: any) => c.attributes.body)).toEqual(['before', 'killed', 'after']);
      expect(after.json.meta.pagination['total-count']).toBe(3);
      // Numbered densely: the n-th member holds the n-th comment listed.
      for (const [n, c] of after.json.data.entries())
        expect((await getItem(keys.runComment(runId, n + 1)))?.id).toBe(c.id);
    });
  }

  it('after its commit, the next writers (before any reader) take the next numbers, and the one that drops it writes it out', async () => {
    const organization = newOrganization();
    const caller = owner(organization);
    const { runId } = await registerNewRun(organization);
    const path = `/runs/${runId}/comments`;
    expectKilled(await killedAfter(2, () => callRoute('comments/create', path, caller, comment('killed'))), true);
    // Nobody has read the run since: the next writer meets the unwritten comment in the run's record,
    // and keeps it there; the one after drops it from the record, so writes it out first.
    for (const body of ['next', 'third'])
      expect((await callRoute('comments/create', path, caller, comment(body))).status).toBe(201);
    const stored = await Promise.all([1, 2, 3].map((n) => getItem(keys.runComment(runId, n))));
    expect(stored.map((member) => member?.body)).toEqual(['killed', 'next', 'third']);
    expect((await callRoute('comments/show', `/comments/${String(stored[0]?.id)}`, caller)).status).toBe(200);
  });

  it('two writers killed after their commits, one after the other: both listed and shown, then written out by the next writers', async () => {
    const organization = newOrganization();
    const caller = owner(organization);
    const { runId } = await registerNewRun(organization);
    const path = `/runs/${runId}/comments`;
    expect((await callRoute('comments/create', path, caller, comment('first'))).status).toBe(201);
    for (const body of ['killed 1', 'killed 2']) {
      expectKilled(await killedAfterCommit(() => callRoute('comments/create', path, caller, comment(body))), true);
    }
    // Both unwritten comments are the record's: a page shows them (writing them out), in order.
    const listed = await callRoute('comments/list', path, caller);
    expect(listed.json.data.map((c: any) => c.attributes.body)).toEqual(['first', 'killed 1', 'killed 2']);
    expect(listed.json.meta.pagination['total-count']).toBe(3);
    for (const c of listed.json.data)
      expect((await callRoute('comments/show', `/comments/${c.id}`, caller)).json.data).toEqual(c);
    // On another run, without a reader: the writers that drop them from the record write them out.
    const other = await registerNewRun(organization);
    const otherPath = `/runs/${other.runId}/comments`;
    for (const body of ['killed 1', 'killed 2']) {
      expectKilled(await killedAfterCommit(() => callRoute('comments/create', otherPath, caller, comment(body))), true);
    }
    for (const body of ['next', 'third'])
      expect((await callRoute('comments/create', otherPath, caller, comment(body))).status).toBe(201);
    const stored = await Promise.all([1, 2, 3, 4].map((n) => getItem(keys.runComment(other.runId, n))));
    expect(stored.map((member) => member?.body)).toEqual(['killed 1', 'killed 2', 'next', 'third']);
    for (const member of stored) expect((await getItem(keys.comment(String(member?.id))))?.body).toBe(member?.body);
  });

  it('a retry meeting a live claim waits for its writer rather than writing a second comment', async () => {
    const organization = newOrganization();
    const caller = owner(organization);
    const { runId } = await registerNewRun(organization);
    const path = `/runs/${runId}/comments`;
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
    // Killed after its guard and copy (a delete finds a key by its copy), before its member.
    expectKilled(await killedAfter(4, () => create(other, 'doomed')), true);
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
