import { expect } from '@jest/globals';
import { newId } from '#shared/ids';
import { registerNewRun } from '#shared/store/runs';
import { getItem } from '#shared/store/collection';
import { keys } from '#shared/store/keys';
import { seededRandom } from '#infra/local/aws/mrsc';
import { tokenFor, type ApiResponse, type TestApi } from './api';
import { organizationState } from './organization-state';

/**
 * A seeded random history through a local stack (test/e2e/random-histories*.e2e.test.ts): 8
 * clients at once create comments on two runs, and create, rename and delete reserved tag keys
 * whose names collide in any casing, some with an Idempotency-Key sent twice; `during` runs beside
 * them (a fault). Afterwards every list, page, count, show and replay is compared with what was
 * acknowledged: a 201 is there once, a 503 that wrote nothing is not, one whose outcome is unknown
 * may be; names stay unique; the stored items agree (a serial order of the requests).
 */

const NAMES = ['env', 'team', 'cost-center', 'owner', 'tier'];
const UNKNOWN = /outcome is unknown/;
const comment = (body: string) => ({ data: { type: 'comments', attributes: { body } } });
const tagKey = (key: string) => ({ data: { type: 'reserved-tag-keys', attributes: { key } } });

type Outcome = 'done' | 'not written' | 'unknown';
/** What an answer tells its client: written (2xx), nothing written (4xx, a 503 that says nothing of an unknown outcome), or it may have been. */
function outcomeOf(answer: ApiResponse): Outcome {
  if (answer.status < 300) return 'done';
  expect([400, 404, 409, 422, 429, 503]).toContain(answer.status);
  if (answer.status === 503) expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
  return answer.status === 503 && UNKNOWN.test(answer.json?.errors?.[0]?.detail ?? '') ? 'unknown' : 'not written';
}

export async function history(api: TestApi, seed: number, during?: () => Promise<void>) {
  const organization = `hist-${newId('run').slice(4, 12).toLowerCase()}`;
  const runs = [(await registerNewRun(organization)).runId, (await registerNewRun(organization)).runId];

  const comments: Array<{ runId: string; body: string; outcome: Outcome; id?: string }> = [];
  const keyIds = new Set<string>();
  const keyOps: Array<{ id?: string; op: 'create' | 'rename' | 'delete'; name?: string; outcome: Outcome }> = [];

  // Each client its own generator: its choices are the seed's; which key it meets, the timing's.
  const client = async (c: number) => {
    const next = seededRandom(seed * 1_000 + c);
    const pick = <T>(items: T[]) => items[Math.floor(next() * items.length)]!;
    const casing = (name: string) => [...name].map((ch) => (next() < 0.5 ? ch.toUpperCase() : ch)).join('');
    const token = await tokenFor({ [organization]: 'owner' }, `user-${c}`);
    for (let step = 0; step < 10; step++) {
      const roll = next();
      const keyed = next() < 0.4 ? { 'Idempotency-Key': `k-${seed}-${c}-${step}` } : undefined;
      if (roll < 0.45) {
        const runId = pick(runs);
        const body = `seed ${seed}: client ${c} step ${step}`;
        const send = () => api.post(`/runs/${runId}/comments`, { token, body: comment(body), headers: keyed });
        const first = await send();
        const record = { runId, body, outcome: outcomeOf(first), id: first.json?.data?.id as string | undefined };
        comments.push(record);
        if (keyed && first.status === 201) {
          // The same request again: the first comment, not a second (or a 503: try later).
          const again = await send();
          if (again.status !== 503) expect([again.status, again.json.data.id]).toEqual([201, record.id]);
        }
      } else if (roll < 0.7 || keyIds.size === 0) {
        const name = casing(pick(NAMES));
        const answer = await api.post(`/organizations/${organization}/reserved-tag-keys`, {
          token,
          body: tagKey(name),
          headers: keyed,
        });
        const id = answer.json?.data?.id as string | undefined;
        if (answer.status === 201) keyIds.add(id!);
        keyOps.push({ id, op: 'create', name, outcome: outcomeOf(answer) });
      } else if (roll < 0.85) {
        const id = pick([...keyIds]);
        const name = casing(pick(NAMES));
        const answer = await api.patch(`/reserved-tags/${id}`, { token, body: tagKey(name) });
        keyOps.push({ id, op: 'rename', name, outcome: outcomeOf(answer) });
      } else {
        const id = pick([...keyIds]);
        const answer = await api.delete(`/reserved-tags/${id}`, { token });
        // A 404: another client deleted it first.
        keyOps.push({ id, op: 'delete', outcome: answer.status === 404 ? 'not written' : outcomeOf(answer) });
      }
    }
  };
  await Promise.all([...Array.from({ length: 8 }, (_, c) => client(c)), during?.()]);
  const reader = await tokenFor({ [organization]: 'owner' }, 'user-reader');

  // Comments: each run lists every 201 once, numbered densely in time order, and beside them only
  // comments whose create's outcome was unknown; each shows by id as listed.
  for (const runId of runs) {
    const listed: Array<{ id: string; attributes: { body: string; 'created-at': string } }> = [];
    for (let page = 1; ; page++) {
      const answer = await api.get(`/runs/${runId}/comments?page[size]=3&page[number]=${page}`, { token: reader });
      expect(answer.status).toBe(200);
      listed.push(...answer.json.data);
      if (answer.json.meta.pagination['next-page'] === null) {
        expect(answer.json.meta.pagination['total-count']).toBe(listed.length);
        break;
      }
    }
    const mine = comments.filter((c) => c.runId === runId);
    const created = mine.filter((c) => c.outcome === 'done').map((c) => c.id!);
    const listedIds = listed.map((c) => c.id);
    expect([...listedIds].sort()).toEqual([...new Set(listedIds)].sort());
    expect(created.filter((id) => !listedIds.includes(id))).toEqual([]);
    const maybe = new Set(mine.filter((c) => c.outcome === 'unknown').map((c) => c.body));
    expect(listed.filter((c) => !created.includes(c.id) && !maybe.has(c.attributes.body))).toEqual([]);
    const times = listed.map((c) => c.attributes['created-at']);
    expect(times).toEqual([...times].sort());
    for (const [n, c] of listed.entries()) {
      expect((await getItem(keys.runComment(runId, n + 1)))?.id).toBe(c.id);
      const shown = await api.get(`/comments/${c.id}`, { token: reader });
      expect([shown.status, shown.json.data.attributes]).toEqual([200, expect.objectContaining(c.attributes)]);
    }
  }

  // Reserved tag keys: the stored items agree with each other, names are unique in any casing, a
  // key deleted (204) is gone, and every listed key was answered 201 (or its create's outcome was
  // unknown) and bears a name one of its acknowledged or unknown creates or renames gave it.
  const state = await organizationState(organization);
  expect(state.problems).toEqual([]);
  const listed: Array<{ id: string; attributes: { key: string } }> = [];
  for (let page = 1; ; page++) {
    const answer = await api.get(`/organizations/${organization}/reserved-tag-keys?page[size]=2&page[number]=${page}`, {
      token: reader,
    });
    expect(answer.status).toBe(200);
    listed.push(...answer.json.data);
    if (answer.json.meta.pagination['next-page'] === null) {
      expect(answer.json.meta.pagination['total-count']).toBe(listed.length);
      break;
    }
  }
  expect(listed.map((k) => k.id).sort()).toEqual(state.keys.map((k) => k.id).sort());
  const names = listed.map((k) => k.attributes.key.toLowerCase());
  expect(names).toEqual([...new Set(names)]);
  for (const key of listed) {
    const ops = keyOps.filter((op) => op.id === key.id && op.outcome !== 'not written');
    const unknownCreate = keyOps.some(
      (op) => op.op === 'create' && op.outcome === 'unknown' && op.name === key.attributes.key,
    );
    expect(ops.some((op) => op.op === 'create') || unknownCreate).toBe(true);
    expect(ops.some((op) => op.op === 'delete' && op.outcome === 'done')).toBe(false);
    const given = [
      ...ops.filter((op) => op.op !== 'delete').map((op) => op.name),
      ...(unknownCreate ? [key.attributes.key] : []),
    ];
    expect(given).toContain(key.attributes.key);
  }
  const deleted = keyOps.filter((op) => op.op === 'delete' && op.outcome === 'done').map((op) => op.id);
  expect(listed.filter((k) => deleted.includes(k.id))).toEqual([]);
  const tally = (items: Array<{ outcome: Outcome }>) =>
    items.reduce<Record<string, number>>((t, { outcome }) => ({ ...t, [outcome]: (t[outcome] ?? 0) + 1 }), {});
  process.stderr.write(
    `seed ${seed}: comments ${JSON.stringify(tally(comments))}; key creates ${JSON.stringify(tally(keyOps.filter((o) => o.op === 'create')))}, renames ${JSON.stringify(tally(keyOps.filter((o) => o.op === 'rename')))}, deletes ${JSON.stringify(tally(keyOps.filter((o) => o.op === 'delete')))}; ${listed.length} keys left\n`,
  );
  return { comments: comments.length, keyOps: keyOps.length };
}
