import { beforeEach, describe, expect, it } from '@jest/globals';
import { errorBody, tokenFor, type ApiResponse } from '../support/api';
import { expectWith } from '../support/expect-with';
import { useLocalStack } from '../support/local-stack';
import { organizationState } from '../support/organization-state';
import { registerNewRun } from '#shared/store/runs';
import { getItem, queryPrefix } from '#shared/store/collection';
import { keys } from '#shared/store/keys';

/**
 * Hot spots over HTTP through the local stack: many writers on one run (its comment count) or one
 * organization (its reserved tag keys' counter and name guards) at the same moment. Each gets its
 * true answer (201, or HCP Terraform's 422 for a taken name) or a 503 with Retry-After that wrote
 * nothing; never a 504 or a 500; and the table afterwards equals some serial order of the requests.
 */
const { api: stack, logs } = useLocalStack();

/**
 * The API as go-tfe and python-tfe call it: a 429 from the gateway's throttle (a burst larger than
 * a method takes at once) is waited out for its Retry-After and sent again; every other answer is
 * the caller's.
 */
const asClient =
  <A extends unknown[]>(send: (...args: A) => Promise<ApiResponse>) =>
  async (...args: A) => {
    for (let tries = 1; ; tries++) {
      const answer = await send(...args);
      // The gateway's throttle says 1 s; a WAF rate limit (60 s) means the test itself sent too much.
      if (answer.status !== 429 || tries === 20 || Number(answer.headers.get('retry-after')) > 5) return answer;
      await new Promise((resolve) =>
        setTimeout(resolve, Number(answer.headers.get('retry-after') ?? 1) * 1000 * (0.5 + Math.random())),
      );
    }
  };
const api = {
  get: stack.get,
  post: asClient(stack.post),
  patch: asClient(stack.patch),
  delete: asClient(stack.delete),
};

const ORG = 'hot-org';
/** A token per test (and per writer where they write for long): the WAF allows one token 30 req/s over a minute. */
const newOwner = () => tokenFor({ [ORG]: 'owner' }, 'user-hot');
let owner: string;
beforeEach(async () => {
  owner = await newOwner();
  // One request first, as a client's first call would: the bursts below meet a warm authorizer
  // cache, not 20 cold authorizer instances at once on a loaded machine (whose store timeouts answer
  // 503 without a detail, AUTHORIZER_FAILURE, before the race these tests are about).
  expect((await stack.get(`/organizations/${ORG}/reserved-tag-keys?page[size]=1`, { token: owner })).status).toBe(200);
});

const newRun = async () => (await registerNewRun(ORG, 'hot-workspace')).runId;
const comment = (body: string) => ({ data: { type: 'comments', attributes: { body } } });
const keyDocument = (key: string) => ({ data: { type: 'reserved-tag-keys', attributes: { key } } });
const nameTaken = errorBody(422, 'invalid attribute', 'Key has already been taken', '/data/attributes/key');
const statuses = (answers: ApiResponse[]) =>
  answers.reduce<Record<number, number>>(
    (counts, { status }) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }),
    {},
  );

/** Every comment of the run through the API, page by page: what a client sees afterwards. */
async function listAll(runId: string) {
  const listed: Array<{ id: string; attributes: { body: string; 'created-at': string } }> = [];
  let total = 0;
  for (let page = 1; ; page++) {
    const answer = await api.get(`/runs/${runId}/comments?page[number]=${page}&page[size]=20`, { token: owner });
    expect(answer.status).toBe(200);
    listed.push(...answer.json.data);
    total = answer.json.meta.pagination['total-count'];
    if (answer.json.meta.pagination['next-page'] === null) break;
  }
  return { listed, total };
}

/**
 * The run's comments are exactly the ones answered 201, each once, numbered 1..n in creation
 * order; besides them, only comments whose write was answered "outcome unknown" (`mayHaveWritten`:
 * their bodies) may be there.
 */
async function expectExactlyCreated(runId: string, created: ApiResponse[], mayHaveWritten: string[] = []) {
  const { listed, total } = await listAll(runId);
  const createdIds = created.map((c) => c.json.data.id as string);
  expect(
    listed
      .filter((c) => createdIds.includes(c.id))
      .map((c) => c.id)
      .sort(),
  ).toEqual([...createdIds].sort());
  expect(
    listed
      .filter((c) => !createdIds.includes(c.id))
      .map((c) => c.attributes.body)
      .filter((body) => !mayHaveWritten.includes(body)),
  ).toEqual([]);
  expect(total).toBe(listed.length);
  const times = listed.map((c) => c.attributes['created-at']);
  expect(times).toEqual([...times].sort());
  expect(new Set(times).size).toBe(times.length);
  // Numbered densely: member n holds the n-th comment listed.
  const members = await queryPrefix(keys.runComments(runId));
  expect(members.slice(1).map((m) => m.id)).toEqual(listed.map((c) => c.id));
  expect((await getItem(keys.run(runId)))?.commentCount ?? 0).toBe(listed.length);
}

/** A create as a client makes it: retried after a 503's Retry-After (nothing was written), at most 5 times. */
async function createRetrying(path: string, body: unknown): Promise<ApiResponse> {
  for (let attempt = 0; ; attempt++) {
    const answer = await api.post(path, { token: owner, body });
    if (answer.status !== 503 || attempt === 10) return answer;
    await new Promise((resolve) => setTimeout(resolve, 1000 * Number(answer.headers.get('retry-after') ?? 1)));
  }
}

/**
 * The contract's 503 for a request that wrote nothing: its function waited its turn as long as it
 * could, or never ran (the gateway's 503 has no detail: an authorizer that could not read the token
 * in time on a loaded machine).
 */
function expectWroteNothing(answer: ApiResponse) {
  expectRetryLater(answer);
  const detail = answer.json.errors[0].detail as string | undefined;
  if (detail !== undefined) expect(detail).toMatch(/wrote nothing/);
}

/** A 503 that says to come back: Retry-After and the contract's body. */
function expectRetryLater(answer: ApiResponse) {
  expectWith(answer.status, answer.text).toBe(503);
  expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(answer.json.errors[0].status).toBe('503');
}

describe('many writers on one run', () => {
  it('60 simultaneous creates: 201, or 503 with Retry-After that wrote nothing; never a 504; the run lists exactly the 201s', async () => {
    const runId = await newRun();
    const logged = logs.length;
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        api.post(`/runs/${runId}/comments`, { token: owner, body: comment(`simultaneous ${i}`) }),
      ),
    );
    const counts = statuses(answers);
    console.log('60 simultaneous comment creates on one run:', counts, [
      ...new Set(answers.filter((a) => a.status !== 201).map((a) => a.json.errors[0].detail)),
    ]);
    for (const answer of answers.filter((a) => a.status !== 201)) expectRetryLater(answer);
    // A "busy" 503 wrote nothing. The other 503s (none on an idle machine) are a store too slow to
    // answer (DynamoDB Local starved by 60 Lambda instances on two cores): the generic one, which
    // wrote nothing either, or "outcome unknown" for a write that was sent, which may have landed.
    const unknown = answers
      .map((a, i) => ({ a, body: `simultaneous ${i}` }))
      .filter(({ a }) => a.status === 503 && /outcome is unknown/.test(a.json.errors[0].detail ?? ''))
      .map(({ body }) => body);
    await expectExactlyCreated(
      runId,
      answers.filter((a) => a.status === 201),
      unknown,
    );
    // Every give-up is visible: a log line naming the run, and the HotSpot metrics by hotSpot.
    const busy = answers.filter(
      (a) => a.status === 503 && /busy with other writes/.test(a.json.errors[0].detail ?? ''),
    ).length;
    for (const answer of answers.filter((a) => a.status === 503)) {
      expect(answer.json.errors[0].detail ?? 'generic').toMatch(/busy with other writes|outcome is unknown|generic/);
    }
    const lines = logs
      .slice(logged)
      .map((line) => line.replace(/^\[[^\]]+\] /, ''))
      .filter((line) => line.startsWith('{'));
    const gaveUp = lines
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.message === 'gave up waiting on a busy hot spot');
    expect(gaveUp).toHaveLength(busy);
    for (const entry of gaveUp)
      expect(entry).toMatchObject({ level: 'WARN', hotSpot: 'run', runId, attempts: expect.any(Number) });
    const waits = lines.map((line) => JSON.parse(line)).filter((entry) => entry.HotSpotWaits !== undefined);
    expect(waits.filter((entry) => entry.HotSpotGaveUp === 1)).toHaveLength(busy);
    for (const entry of waits)
      expect(entry).toMatchObject({
        hotSpot: 'run',
        HotSpotAttempts: expect.any(Number),
        HotSpotWaitTime: expect.any(Number),
      });
  }, 120_000);

  it.each([
    [1, 3],
    [4, 4],
    [16, Number(process.env.HOT_SPOT_SECONDS ?? 10)],
  ])(
    '%i writers creating continuously for %i s: 201s (or 503s that wrote nothing), every comment listed once in creation order',
    async (writers, seconds) => {
      const runId = await newRun();
      const tokens = await Promise.all(Array.from({ length: writers }, newOwner));
      const until = Date.now() + seconds * 1000;
      const answers: ApiResponse[] = [];
      await Promise.all(
        tokens.map(async (token, writer) => {
          for (let n = 0; Date.now() < until; n++) {
            answers.push(await api.post(`/runs/${runId}/comments`, { token, body: comment(`writer ${writer} #${n}`) }));
          }
        }),
      );
      console.log(
        `${writers} continuous writers on one run for ${seconds} s:`,
        statuses(answers),
        answers.filter((a) => a.status !== 201).map((a) => `${a.status} ${a.json?.errors?.[0]?.detail}`),
      );
      // 201, or (the run busier than a request can wait for, on this 2-core machine under the rest
      // of the test run) the contract's 503 with Retry-After that wrote nothing.
      expect(answers.filter((a) => a.status === 201).length).toBeGreaterThan(0);
      for (const answer of answers.filter((a) => a.status !== 201)) expectWroteNothing(answer);
      await expectExactlyCreated(
        runId,
        answers.filter((a) => a.status === 201),
      );
    },
    120_000,
  );
});

describe('many writers on one organization', () => {
  /** `n` distinct casings of `name`: the i-th upper-cases the letters where i has a bit set. */
  const casings = (name: string, n: number) =>
    Array.from({ length: n }, (_, i) => [...name].map((ch, j) => ((i >> j) & 1 ? ch.toUpperCase() : ch)).join(''));

  it('20 simultaneous creates of one name in 20 casings: one 201, nineteen 422 "Key has already been taken"', async () => {
    const answers = await Promise.all(
      casings('costcenter', 20).map((key) =>
        api.post(`/organizations/${ORG}/reserved-tag-keys`, { token: owner, body: keyDocument(key) }),
      ),
    );
    console.log(
      '20 casings of one name:',
      statuses(answers),
      answers.filter((a) => a.status === 503).map((a) => a.json.errors[0].detail),
    );
    // Nineteen lose the race: 422, never a 503. The winner is 201, or, when the store did not
    // confirm its write in time (DynamoDB Local beside other test files on a loaded machine), the
    // 503 that says its outcome is unknown: its key then exists all the same (checked below).
    const winner = answers.filter((a) => a.status !== 422);
    expect(winner).toHaveLength(1);
    if (winner[0]!.status !== 201) {
      expectRetryLater(winner[0]!);
      expect(winner[0]!.json.errors[0].detail).toMatch(/outcome is unknown/);
    }
    for (const answer of answers.filter((a) => a.status === 422)) expect(answer.json).toEqual(nameTaken);
    const state = await organizationState(ORG);
    expect(state.problems).toEqual([]);
    expect(state.keys.filter((k) => k.key.toLowerCase() === 'costcenter')).toHaveLength(1);
  }, 60_000);

  it('20 simultaneous creates of one name with 20 distinct Idempotency-Keys: one 201, nineteen 422', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.post(`/organizations/${ORG}/reserved-tag-keys`, {
          token: owner,
          body: keyDocument('owner-team'),
          headers: { 'Idempotency-Key': `race-${i}-${Date.now()}` },
        }),
      ),
    );
    console.log('20 Idempotency-Keys, one name:', statuses(answers));
    expect(statuses(answers)).toEqual({ 201: 1, 422: 19 });
    for (const answer of answers.filter((a) => a.status === 422)) expect(answer.json).toEqual(nameTaken);
    expect((await organizationState(ORG)).problems).toEqual([]);
  }, 60_000);

  it('20 simultaneous renames to one name in 20 casings: one 200, nineteen 422', async () => {
    // Set-up, not under test: 20 keys, each created as a client would, retrying after a 503's Retry-After.
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        createRetrying(`/organizations/${ORG}/reserved-tag-keys`, keyDocument(`rename-me-${i}`)),
      ),
    );
    expect(statuses(created)).toEqual({ 201: 20 });
    const answers = await Promise.all(
      casings('application', 20).map((key, i) =>
        api.patch(`/reserved-tag-keys/${created[i]!.json.data.id}`, { token: owner, body: keyDocument(key) }),
      ),
    );
    console.log('20 renames to one name:', statuses(answers));
    // One 200 and the rest 422; a rename that could not get a turn in time answers 503, having written nothing.
    for (const answer of answers.filter((a) => a.status !== 200 && a.status !== 422)) expectWroteNothing(answer);
    const renamed = answers.filter((a) => a.status === 200).length;
    expect(renamed).toBe(answers.some((a) => a.status === 503) ? Math.min(renamed, 1) : 1);
    for (const answer of answers.filter((a) => a.status === 422)) expect(answer.json).toEqual(nameTaken);
    const state = await organizationState(ORG);
    expect(state.problems).toEqual([]);
    expect(state.keys.filter((k) => k.key.toLowerCase() === 'application')).toHaveLength(renamed);
  }, 60_000);

  it('a burst of creates, updates and deletes: true answers (a 503 only with Retry-After, having written nothing), and the organization equals a serial order of the acknowledged ones', async () => {
    const seeded = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        createRetrying(`/organizations/${ORG}/reserved-tag-keys`, keyDocument(`burst-seed-${i}`)),
      ),
    );
    expect(statuses(seeded)).toEqual({ 201: 8 });
    const ids = seeded.map((s) => s.json.data.id as string);
    const before = await organizationState(ORG);
    const answers = await Promise.all([
      // The last 4 repeat a name with other attributes: not a replay of an identical create.
      ...Array.from({ length: 16 }, (_, i) =>
        api.post(`/organizations/${ORG}/reserved-tag-keys`, {
          token: owner,
          body: {
            data: {
              type: 'reserved-tag-keys',
              attributes: { key: `burst-new-${i % 12}`, 'disable-overrides': i >= 12 },
            },
          },
        }),
      ),
      ...ids
        .slice(0, 4)
        .map((id, i) =>
          api.patch(`/reserved-tag-keys/${id}`, { token: owner, body: keyDocument(`burst-renamed-${i}`) }),
        ),
      ...ids.slice(0, 4).map((id) =>
        api.patch(`/organizations/${ORG}/reserved-tag-keys/${id}`, {
          token: owner,
          body: { data: { type: 'reserved-tag-keys', attributes: { 'disable-overrides': true } } },
        }),
      ),
      ...ids.slice(2, 8).map((id) => api.delete(`/reserved-tag-keys/${id}`, { token: owner })),
    ]);
    const counts = statuses(answers);
    console.log('mixed burst in one organization:', counts);
    // Every answer is a true one: a 5xx only as the contract's 503 with Retry-After for a request
    // that waited its turn as long as it could and wrote nothing (30 changes of one organization at
    // once on this machine: every change commits on the organization's head, one at a time).
    // A 503 either wrote nothing, or says its outcome is unknown (its change committed, or not).
    const unknown = answers
      .map((a, i) => ({ a, i }))
      .filter(({ a }) => a.status >= 500 && /outcome is unknown/.test(a.json?.errors?.[0]?.detail));
    for (const answer of answers.filter((a) => a.status >= 500)) {
      if (/outcome is unknown/.test(answer.json?.errors?.[0]?.detail)) expectRetryLater(answer);
      else expectWroteNothing(answer);
    }
    // Creates: 12 distinct names, 4 repeats answered 422 (or, waiting too long, 503). Deletes of the
    // 6 seeded keys: 204 each, or 503 (updates racing them answer 200 or 404). Renames to fresh names never collide.
    const creates = statuses(answers.slice(0, 16));
    expect((creates[201] ?? 0) + (creates[503] ?? 0)).toBeGreaterThanOrEqual(12);
    expect(creates[201] ?? 0).toBeLessThanOrEqual(12);
    for (const status of answers.slice(24).map((a) => a.status)) expect([204, 503]).toContain(status);
    const after = await organizationState(ORG);
    expect(after.problems).toEqual([]);
    const deleted = answers.slice(24).filter((a) => a.status === 204).length;
    const unknownCreates = unknown.filter(({ i }) => i < 16).length;
    const unknownDeletes = unknown.filter(({ i }) => i >= 24).length;
    expect(after.keys.length).toBeGreaterThanOrEqual(
      before.keys.length + (creates[201] ?? 0) - deleted - unknownDeletes,
    );
    expect(after.keys.length).toBeLessThanOrEqual(before.keys.length + (creates[201] ?? 0) + unknownCreates - deleted);
    // The names answered 201 exist, once each; a create answered 503 made nothing.
    const names = new Set(after.keys.map((k) => k.key));
    for (const answer of answers.slice(0, 16).filter((a) => a.status === 201))
      expect(names.has(answer.json.data.attributes.key)).toBe(true);
    expect(logs.filter((line) => /unhandled error/.test(line))).toEqual([]);
  }, 60_000);
});

describe('documents nested deep', () => {
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  it.each([
    [
      'in attributes',
      (depth: number) => `{"data":{"type":"comments","attributes":{"body":"hi","deep":${nested(depth)}}}}`,
    ],
    [
      'beside data',
      (depth: number) => `{"data":{"type":"comments","attributes":{"body":"hi"}},"meta":${nested(depth)}}`,
    ],
  ])('a comment create nested 10,000 levels %s is a 400 that says so, and writes nothing', async (_where, body) => {
    const runId = await newRun();
    const answer = await api.post(`/runs/${runId}/comments`, { token: owner, body: body(10_000) });
    expect(answer.status).toBe(400);
    expect(answer.json.errors[0].detail).toMatch(/nested more than \d+ levels deep/);
    expect((await listAll(runId)).total).toBe(0);
  });

  it('a reserved tag key create nested 10,000 levels is a 400, and writes nothing', async () => {
    const before = await organizationState(ORG);
    const body = `{"data":{"type":"reserved-tag-keys","attributes":{"key":"deep","x":${nested(10_000)}}}}`;
    const answer = await api.post(`/organizations/${ORG}/reserved-tag-keys`, { token: owner, body });
    expect(answer.status).toBe(400);
    expect(answer.json.errors[0].detail).toMatch(/nested more than \d+ levels deep/);
    expect((await organizationState(ORG)).keys.length).toBe(before.keys.length);
  });
});
