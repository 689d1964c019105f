import { describe, expect, it } from '@jest/globals';
import { tokenFor, type ApiResponse, type TestApi } from '../support/api';
import { expectWith } from '../support/expect-with';
import { useLocalRegions } from '../support/local-regions';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { controlRegion } from '#infra/local/control';
import { writeStackRecord } from '#infra/local/stack-record';
import { admin } from '../support/admin-cli';
import { DEFAULT_HEALTH_CHECK, detectionMs, type HealthCheckSettings } from '#infra/local/front-router';
import { registerNewRun } from '#shared/store/runs';
import { getItem, queryPrefix } from '#shared/store/collection';
import { keys } from '#shared/store/keys';
import { commentDocument, keyDocument } from '../support/documents';

/**
 * Two local Regions over one DynamoDB Local (the MRSC table) behind the health-checked front, as
 * `REGIONS=us-east-1,us-east-2 npm start` runs them: writers on one run's comments and one
 * organization's reserved tag keys through both Regions at once, with Idempotency-Keys and
 * without; the primary Region failed mid-load through the control endpoint the admin CLI calls;
 * the front leaves it within the health check's stated time; the creates whose answers were lost
 * are retried through the front; the Region is recovered; then every acknowledged write is read
 * back through each Region: each once, the comments densely numbered in order, one key per name.
 */
const [A, B] = ['us-east-1', 'us-east-2'] as const;
const HEALTH: HealthCheckSettings = { ...DEFAULT_HEALTH_CHECK, intervalMs: 500, failureThreshold: 3, timeoutMs: 1_000 };
const { multi, front, region, healthLines } = useLocalRegions([A, B], HEALTH);

const ORG = 'regions-org';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The test's own set-up writes (tokens, runs), straight to the store: tried again when DynamoDB Local is slow to answer on a loaded machine. */
async function setUp<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (attempt === 5 || (error as Error).name !== 'TimeoutError') throw error;
      await sleep(500);
    }
  }
}

/** One create a writer sent: where, with which token, body and key, and what it was answered (none: lost). */
interface Create {
  kind: 'comment' | 'key';
  name: string;
  token: string;
  idempotencyKey?: string;
  via: string;
  answer?: ApiResponse;
}

const send = (api: TestApi, runId: string, c: Omit<Create, 'via' | 'answer'>) =>
  api.post(c.kind === 'comment' ? `/runs/${runId}/comments` : `/organizations/${ORG}/reserved-tag-keys`, {
    token: c.token,
    body: c.kind === 'comment' ? commentDocument(c.name) : keyDocument(c.name),
    ...(c.idempotencyKey ? { headers: { 'Idempotency-Key': c.idempotencyKey } } : {}),
  });

/** Acknowledged: a 201, or for a key another writer took, its 422 (the name has its one owner). */
const settled = (c: Create) =>
  c.answer !== undefined && (c.answer.status === 201 || (c.kind === 'key' && c.answer.status === 422));

async function listAll(api: TestApi, token: string, path: string) {
  const all: Array<{ id: string; attributes: Record<string, string> }> = [];
  for (let page = 1; ; page++) {
    const answer = await api.get(`${path}?page[number]=${page}&page[size]=100`, { token });
    expectWith(answer.status, answer.text).toBe(200);
    all.push(...answer.json.data);
    if (answer.json.meta.pagination['next-page'] === null) return all;
  }
}

describe('two local Regions over one table', () => {
  it('a write through one Region is read at once through the other', async () => {
    const token = await setUp(() => tokenFor({ [ORG]: 'owner' }, 'user-consistency'));
    const { runId } = await setUp(() => registerNewRun(ORG, 'regions-ws'));
    for (const [writer, reader] of [
      [A, B],
      [B, A],
    ] as const) {
      const created = await region(writer).post(`/runs/${runId}/comments`, {
        token,
        body: commentDocument(`through ${writer}`),
      });
      expectWith(created.status, created.text).toBe(201);
      const read = await region(reader).get(`/comments/${created.json.data.id}`, { token });
      expectWith(read.status, read.text).toBe(200);
      expect(read.json.data.attributes.body).toBe(`through ${writer}`);
      const key = await region(writer).post(`/organizations/${ORG}/reserved-tag-keys`, {
        token,
        body: keyDocument(`seen-${writer}`),
      });
      expectWith(key.status, key.text).toBe(201);
      const listed = await listAll(region(reader), token, `/organizations/${ORG}/reserved-tag-keys`);
      expect(listed.map((k) => k.id)).toContain(key.json.data.id);
    }
    const listed = await listAll(region(B), token, `/runs/${runId}/comments`);
    expect(listed.map((c) => c.attributes.body)).toEqual([`through ${A}`, `through ${B}`]);
    // Each Region answers with the front's address in its links, as Regions behind one domain do.
    for (const name of [A, B]) {
      const page = await region(name).get(`/runs/${runId}/comments`, { token });
      expect(page.json.links.self).toMatch(new RegExp(`^${multi().url}/api/v2/`));
    }
  }, 60_000);

  it('a Region failed mid-load: the front leaves it in time, and every acknowledged create is there once, through each Region', async () => {
    const { runId } = await setUp(() => registerNewRun(ORG, 'regions-load'));
    const reader = await setUp(() => tokenFor({ [ORG]: 'owner' }, 'user-reader'));
    // Two writers per Region on its own address, one on the front; each its own token (the WAF's limit is per token).
    const writers = [A, A, B, B, 'front'];
    const tokens = await Promise.all(
      writers.map((_, i) => setUp(() => tokenFor({ [ORG]: 'owner' }, `user-writer-${i}`))),
    );
    // Warm each writer's authorizer answer in its Region, as a client's first call would.
    await Promise.all(
      writers.map((via, i) =>
        (via === 'front' ? front : region(via)).get(`/organizations/${ORG}/reserved-tag-keys?page[size]=1`, {
          token: tokens[i]!,
        }),
      ),
    );

    // Both Regions healthy before the load (a cold ping on a loaded machine may have failed a check).
    while (
      multi()
        .front.health()
        .some((h) => !h.healthy)
    )
      await sleep(50);
    const phase = (() => {
      let last = Date.now();
      return (what: string) => {
        console.log(`${what}: ${Date.now() - last} ms`);
        last = Date.now();
      };
    })();

    const creates: Create[] = [];
    const LOAD_MS = 5_000;
    const FAIL_AFTER_MS = 2_500;
    const started = Date.now();
    const load = writers.map(async (via, w) => {
      let target = via;
      for (let n = 0; Date.now() - started < LOAD_MS; n++) {
        // Comments and keys in turn; every other one with an Idempotency-Key; every fourth key a name the other Region's writers want too.
        const kind = n % 2 === 0 ? 'comment' : 'key';
        const name = kind === 'comment' ? `w${w} #${n}` : n % 4 === 1 ? `shared-${Math.floor(n / 4)}` : `w${w}-${n}`;
        const create: Create = {
          kind,
          name,
          token: tokens[w]!,
          via: target,
          ...(n % 4 < 2 ? { idempotencyKey: `w${w}-${n}` } : {}),
        };
        creates.push(create);
        try {
          create.answer = await send(target === 'front' ? front : region(target), runId, create);
        } catch {
          // The answer was lost (the connection refused or cut): a client re-resolves the name, and goes through the front.
          target = 'front';
          await sleep(250);
        }
      }
    });
    await sleep(FAIL_AFTER_MS);
    const failedAt = Date.now();
    const failed = await controlRegion(multi().controlUrl, 'fail', A);
    expect(failed.result).toBe('failed');
    expect(failed.regions.find((r) => r.name === A)!.down).toBe(true);

    // The front leaves the failed Region within the stated time (its health check's decision, timed by the front).
    const stated = detectionMs(HEALTH);
    while (multi().front.current() !== B) {
      expect(Date.now() - failedAt).toBeLessThan(stated + 5_000);
      await sleep(20);
    }
    const change = multi().front.changes.find((c) => c.region === A && !c.healthy && c.at >= failedAt)!;
    expect(healthLines).toContain(`HEALTH ${A} unhealthy: the front routes to ${B}`);
    const detected = change.at - failedAt;
    console.log(`Region ${A} failed: the front routes to ${B} after ${detected} ms (stated: within ${stated} ms)`);
    // A little more than stated only for timers late on a loaded machine (2 cores, 5 writers, 2 Regions).
    expect(detected).toBeLessThanOrEqual(stated + 500);
    await Promise.all(load);
    phase('load, with the failure');
    // The failed Region answers nothing.
    await expect(region(A).get('/ping')).rejects.toThrow();

    // Retry, through the front, every create whose answer was lost or said to try again.
    const lost = creates.filter((c) => !settled(c));
    const answeredLost = lost.filter((c) => c.answer === undefined).length;
    // Each writer retries its own, in order, as a client would (not all at once: 20 cold instances on two cores).
    await Promise.all(
      tokens
        .map((token) => lost.filter((c) => c.token === token))
        .map(async (mine) => {
          for (const create of mine)
            for (let attempt = 1; !settled(create); attempt++) {
              expect(attempt).toBeLessThan(20);
              try {
                create.answer = await send(front, runId, create);
                create.via = 'front';
              } catch {
                /* lost again */
              }
              if (!settled(create)) await sleep(100 * attempt);
            }
        }),
    );
    phase('lost creates retried through the front');
    const statusOf = (list: Create[]) =>
      list.reduce<Record<string, number>>(
        (n, c) => ({
          ...n,
          [`${c.via} ${c.answer?.status ?? 'lost'}`]: (n[`${c.via} ${c.answer?.status ?? 'lost'}`] ?? 0) + 1,
        }),
        {},
      );
    console.log(
      `${creates.length} creates: ${answeredLost} answers lost, ${lost.length} retried through the front;`,
      statusOf(creates),
    );
    expect(answeredLost).toBeGreaterThan(0);
    for (const c of creates)
      expectWith(settled(c), `${c.kind} ${c.name}: ${c.answer?.status} ${c.answer?.text}`).toBe(true);
    const conflicts = multi()
      .regions.regions.flatMap((r) => r.stack.dynamoDbCalls)
      .filter((call) => call.mrsc?.error === 'ReplicatedWriteConflictException');
    console.log(`ReplicatedWriteConflictException from another Region's write in flight: ${conflicts.length}`);

    // Recovered, with no other action: the front's check sees it healthy again.
    // Through the operator CLI, as typed: it finds the control endpoint in the stack record in DATA_DIR, as npm start writes it.
    const dataDir = mkdtempSync(join(tmpdir(), 'regions-'));
    writeStackRecord(dataDir, {
      pid: process.pid,
      port: multi().front.port,
      ddbPort: 0,
      tableName: process.env.TABLE_NAME!,
      apiUrl: `${multi().url}/api/v2`,
      controlUrl: multi().controlUrl,
      regions: multi().regions.regions.map((r) => ({ name: r.name, apiUrl: `${r.url}/api/v2` })),
    });
    const recovered = await admin(['region', 'recover', A], { DATA_DIR: dataDir, TABLE_NAME: undefined });
    expectWith(recovered.code, recovered.output).toBe(0);
    expect(recovered.output).toContain(`${A} is back on its address`);
    expect(multi().regions.region(A)!.down).toBe(false);
    const recoveredAt = Date.now();
    while (multi().front.current() !== A) {
      expect(Date.now() - recoveredAt).toBeLessThan(stated + 5_000);
      await sleep(50);
    }
    expect((await region(A).get('/ping')).status).toBe(204);
    phase(`${A} recovered and healthy`);

    // Every acknowledged write, through each Region: each once, in order, densely numbered; one key per name.
    const comments = creates.filter((c) => c.kind === 'comment');
    const keysCreated = creates.filter((c) => c.kind === 'key');
    const perRegion = [];
    for (const name of [A, B]) {
      const listed = await listAll(region(name), reader, `/runs/${runId}/comments`);
      const bodies = listed.map((c) => c.attributes.body);
      expect(new Set(bodies).size).toBe(bodies.length);
      expect([...bodies].sort()).toEqual(comments.map((c) => c.name).sort());
      const ids = listed.map((c) => c.id);
      expect(new Set(ids).size).toBe(ids.length);
      // Every 201 and its replays name the comment that is listed with its body.
      for (const c of comments)
        expect(listed.find((l) => l.attributes.body === c.name)!.id).toBe(c.answer!.json.data.id);
      const times = listed.map((c) => c.attributes['created-at']!);
      expect(times).toEqual([...times].sort());

      const listedKeys = await listAll(region(name), reader, `/organizations/${ORG}/reserved-tag-keys`);
      const names = listedKeys.map((k) => k.attributes.key!);
      expect(new Set(names).size).toBe(names.length);
      for (const c of keysCreated.filter((k) => k.answer!.status === 201)) {
        expect(listedKeys.find((k) => k.attributes.key === c.name)?.id).toBe(c.answer!.json.data.id);
      }
      for (const c of keysCreated) expect(names).toContain(c.name);
      perRegion.push({ comments: ids, keys: listedKeys.map((k) => k.id).sort() });
    }
    expect(perRegion[0]).toEqual(perRegion[1]);
    // Densely numbered: member n of the run holds its n-th comment, and the run counts them all.
    const members = await setUp(() => queryPrefix(keys.runComments(runId)));
    expect(members.slice(1).map((m) => m.id)).toEqual(perRegion[0]!.comments);
    expect((await setUp(() => getItem(keys.run(runId))))?.commentCount).toBe(comments.length);
    phase('read back through each Region');
  }, 90_000);
});
