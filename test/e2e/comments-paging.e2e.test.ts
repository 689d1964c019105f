import { beforeAll, describe, expect, it } from '@jest/globals';
import { retryingBusy, tokenFor } from '../support/api';
import { useLocalStack } from '../support/local-stack';
import { insertComment } from '#shared/store/comments';
import { registerNewRun } from '#shared/store/runs';
import type { Comment } from '#shared/comments/comment';

const { api } = useLocalStack();
const TOTAL = 1_000;
/** Concurrent writers: several comments on one run at once, as a busy run sees them. */
const WRITERS = 10;

let runId: string;
let token: string;
/** What the store wrote, in the order the contract promises: creation time, then id (DynamoDB's byte order). */
let expectedIds: string[];

beforeAll(async () => {
  token = await tokenFor({ acme: 'reader' });
  runId = (await registerNewRun('acme')).runId;
  const started = performance.now();
  const written: Comment[] = [];
  const next = { index: 0 };
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (next.index < TOTAL) {
        const i = next.index++;
        const comment = await insertComment({
          runId,
          organization: 'acme',
          body: `comment ${i}`,
          createdBy: 'user-load',
        });
        if (typeof comment === 'string') throw new Error(`comment refused: ${comment}`);
        written.push(comment);
      }
    }),
  );
  console.log(
    `seeded ${TOTAL} comments through insertComment (${WRITERS} writers) in ${Math.round(performance.now() - started)} ms`,
  );
  const sortKey = (c: Comment) => `${c.createdAt}#${c.id}`;
  expectedIds = written.sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : 1)).map((c) => c.id);
}, 120_000);

describe(`a run with ${TOTAL} comments`, () => {
  it.each([100, 20])('pages through every comment exactly once, oldest first, at page[size]=%i', async (size) => {
    const pages = TOTAL / size;
    const seen: string[] = [];
    const started = performance.now();
    let url: string | null = `${api.baseUrl}/api/v2/runs/${runId}/comments?page%5Bnumber%5D=1&page%5Bsize%5D=${size}`;
    for (let number = 1; url !== null; number++) {
      // Follow links.next as a client would.
      const response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
      const document: any = await response.json();
      expect(document.meta.pagination).toEqual({
        'current-page': number,
        'page-size': size,
        'prev-page': number > 1 ? number - 1 : null,
        'next-page': number < pages ? number + 1 : null,
        'total-pages': pages,
        'total-count': TOTAL,
      });
      expect(document.data).toHaveLength(size);
      seen.push(...document.data.map((c: { id: string }) => c.id));
      url = document.links.next;
    }
    const ms = performance.now() - started;
    console.log(
      `paged ${TOTAL} comments at page[size]=${size}: ${pages} requests in ${Math.round(ms)} ms (${(ms / pages).toFixed(1)} ms/page)`,
    );
    expect(seen).toEqual(expectedIds);
    expect(new Set(seen).size).toBe(TOTAL);
  });

  it('answers the first 100 to a client that sends no page parameter (go-tfe)', async () => {
    const response = await api.get(`/runs/${runId}/comments`, { token });
    expect(response.json.data.map((c: { id: string }) => c.id)).toEqual(expectedIds.slice(0, 100));
    expect(response.json.meta.pagination).toMatchObject({ 'total-count': TOTAL, 'total-pages': 10, 'next-page': 2 });
  });
});

describe('concurrent creates on one run', () => {
  it('all succeed (a busy 503 that wrote nothing retried after its Retry-After), each exactly once, in one stable order that creation time agrees with', async () => {
    const member = await tokenFor({ acme: 'member' });
    const busyRun = (await registerNewRun('acme')).runId;
    const CREATES = 20;
    const create = (runId: string, i: number) =>
      retryingBusy(() =>
        api.post(`/runs/${runId}/comments`, {
          token: member,
          body: { data: { type: 'comments', attributes: { body: `at once ${i}` } } },
        }),
      );
    const createAll = (runId: string) => Promise.all(Array.from({ length: CREATES }, (_, i) => create(runId, i)));
    // Warm instances first: 20 cold starts of the function and of the authorizer at once on this
    // small machine starve each other of CPU, which says nothing about the store.
    await createAll((await registerNewRun('acme')).runId);
    // Concurrent requests reach separate function instances: they race for the run's next number.
    const created = await createAll(busyRun);
    expect(created.map((r) => r.status)).toEqual(Array(CREATES).fill(201));
    const listed = await api.get(`/runs/${busyRun}/comments`, { token: member });
    const again = await api.get(`/runs/${busyRun}/comments?page%5Bnumber%5D=2&page%5Bsize%5D=10`, { token: member });
    expect(listed.json.meta.pagination['total-count']).toBe(CREATES);
    const ids = listed.json.data.map((c: { id: string }) => c.id);
    expect([...ids].sort()).toEqual(created.map((r) => r.json.data.id).sort());
    expect(again.json.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(10));
    const times = listed.json.data.map((c: { attributes: { 'created-at': string } }) => c.attributes['created-at']);
    expect(times).toEqual([...times].sort());
    expect(new Set(times).size).toBe(CREATES);
  }, 120_000);
});
