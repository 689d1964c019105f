import { describe, expect, it } from '@jest/globals';
import { newId } from '#shared/ids';
import { registerNewRun } from '#shared/store/runs';
import { getItem } from '#shared/store/collection';
import { keys } from '#shared/store/keys';
import { retryingBusy, tokenFor, type ApiResponse } from '../support/api';
import { useLocalStack } from '../support/local-stack';
import { organizationState } from '../support/organization-state';

/**
 * The concurrency promises again, with the local table refusing writes as a global table in
 * multi-Region strong consistency does when another Region writes the same item at that moment:
 * a third of the functions' writes answer ReplicatedWriteConflictException (nothing written).
 * Every caller still gets its true answer, never a 5xx it did not earn: the store retries a
 * refused write within the request's deadline, like a lost round on a hot spot.
 */
const RATE = 0.3;
process.env.LOCAL_REPLICATED_WRITE_CONFLICT_RATE = String(RATE);
const { api, stack } = useLocalStack();

const statuses = (answers: ApiResponse[]) => answers.map((a) => a.status).sort();
const comment = (body: string) => ({ data: { type: 'comments', attributes: { body } } });
const tagKey = (key: string) => ({ data: { type: 'reserved-tag-keys', attributes: { key } } });

describe(`with ${RATE * 100}% of writes refused for a conflict with another Region`, () => {
  it('the local table really refuses them', async () => {
    const token = await tokenFor({ 'conflict-org': 'owner' });
    for (let i = 0; i < 5; i++)
      await api.post('/organizations/conflict-org/reserved-tag-keys', { token, body: tagKey(`probe-${i}`) });
    expect(
      stack().dynamoDbCalls.filter((call) => call.mrsc?.error === 'ReplicatedWriteConflictException').length,
    ).toBeGreaterThan(0);
  });

  it('12 concurrent comments on one run: all 201 (a busy 503, which wrote nothing, retried after its Retry-After), listed once each, numbered densely, counted exactly', async () => {
    const token = await tokenFor({ acme: 'member' });
    const { runId } = await registerNewRun('acme');
    const create = (body: string) =>
      retryingBusy(() => api.post(`/runs/${runId}/comments`, { token, body: comment(body) }));
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => create(`c${i}`)));
    expect(statuses(answers)).toEqual(Array(12).fill(201));
    const listed = await api.get(`/runs/${runId}/comments?page%5Bsize%5D=100`, { token });
    expect(listed.json.meta.pagination['total-count']).toBe(12);
    expect(listed.json.data.map((c: { id: string }) => c.id).sort()).toEqual(answers.map((a) => a.json.data.id).sort());
    for (const [n, c] of listed.json.data.entries())
      expect((await getItem(keys.runComment(runId, n + 1)))?.id).toBe(c.id);
  });

  it('10 concurrent creates of one name in 10 casings: one 201, nine 422, one key', async () => {
    const organization = `conflict-${newId('run').slice(4).toLowerCase()}`;
    const token = await tokenFor({ [organization]: 'owner' });
    const casings = ['team', 'Team', 'TEAM', 'tEam', 'teAm', 'teaM', 'TEam', 'tEAm', 'teAM', 'TeaM'];
    const answers = await Promise.all(
      casings.map((key) => api.post(`/organizations/${organization}/reserved-tag-keys`, { token, body: tagKey(key) })),
    );
    expect(statuses(answers)).toEqual([201, ...Array(9).fill(422)]);
    const state = await organizationState(organization);
    expect(state.problems).toEqual([]);
    expect(state.keys).toHaveLength(1);
  });

  it('retried creates with one Idempotency-Key: one comment, every answer the same', async () => {
    const token = await tokenFor({ acme: 'member' });
    const { runId } = await registerNewRun('acme');
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        api.post(`/runs/${runId}/comments`, { token, body: comment('once'), headers: { 'Idempotency-Key': 'one' } }),
      ),
    );
    expect(statuses(answers)).toEqual(Array(6).fill(201));
    expect(new Set(answers.map((a) => a.json.data.id)).size).toBe(1);
    expect((await api.get(`/runs/${runId}/comments`, { token })).json.meta.pagination['total-count']).toBe(1);
  });
});
