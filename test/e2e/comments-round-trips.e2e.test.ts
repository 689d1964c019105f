import { beforeAll, describe, expect, it } from '@jest/globals';
import { tokenFor, type ApiResponse } from '../support/api';
import { useLocalStack } from '../support/local-stack';
import { registerNewRun } from '#shared/store/runs';
import { newId } from '#shared/ids';
import { commentDocument } from '../support/documents';

/** The round-trip budget of docs/design.md, measured: the local gateway runs the handlers in this process. */
async function commandsOf(request: () => Promise<ApiResponse>): Promise<{ status: number; commands: string[] }> {
  const { result, commands } = await roundTrips(request);
  return { status: result.status, commands };
}

const { api, roundTrips } = useLocalStack();
let token: string;
let reader: string;

beforeAll(async () => {
  [token, reader] = await Promise.all([tokenFor({ acme: 'member' }), tokenFor({ acme: 'reader' })]);
  // Warm the authorizer cache, so what is counted below is the handler's work alone.
  for (const t of [token, reader])
    expect((await api.get(`/runs/${newId('run')}/comments`, { token: t })).status).toBe(404);
});

describe('DynamoDB round trips per request (authorizer cache warm)', () => {
  it('create: the claim of its receipt, its copy and its member side by side, then one commit on the run’s record; one read more while the run is unknown to the function', async () => {
    const runId = (await registerNewRun('acme')).runId;
    const path = `/runs/${runId}/comments`;
    expect(await commandsOf(() => api.post(path, { token, body: commentDocument('cold') }))).toEqual({
      status: 201,
      commands: ['GetItemCommand', 'PutItemCommand', 'PutItemCommand', 'PutItemCommand', 'UpdateItemCommand'],
    });
    expect(await commandsOf(() => api.post(path, { token, body: commentDocument('warm') }))).toEqual({
      status: 201,
      commands: ['PutItemCommand', 'PutItemCommand', 'PutItemCommand', 'UpdateItemCommand'],
    });
  });

  it('list: 1 Query for page 1 with total count and the run’s organization; a later page, the run’s record and that page', async () => {
    const runId = (await registerNewRun('acme')).runId;
    for (let i = 0; i < 3; i++) await api.post(`/runs/${runId}/comments`, { token, body: commentDocument(`#${i}`) });
    expect(await commandsOf(() => api.get(`/runs/${runId}/comments`, { token }))).toEqual({
      status: 200,
      commands: ['QueryCommand'],
    });
    // Issued together: either may reach DynamoDB first.
    const later = await commandsOf(() => api.get(`/runs/${runId}/comments?page[number]=2&page[size]=2`, { token }));
    expect({ ...later, commands: later.commands.sort() }).toEqual({
      status: 200,
      commands: ['GetItemCommand', 'QueryCommand'],
    });
  });

  it('show: 1 GetItem', async () => {
    const runId = (await registerNewRun('acme')).runId;
    const { json } = await api.post(`/runs/${runId}/comments`, { token, body: commentDocument('show me') });
    expect(await commandsOf(() => api.get(`/comments/${json.data.id}`, { token }))).toEqual({
      status: 200,
      commands: ['GetItemCommand'],
    });
  });

  it('a reader’s refused create reads the run once and writes nothing', async () => {
    const runId = (await registerNewRun('acme')).runId;
    expect(
      await commandsOf(() => api.post(`/runs/${runId}/comments`, { token: reader, body: commentDocument('no') })),
    ).toEqual({ status: 403, commands: ['GetItemCommand'] });
  });

  it('ids of the wrong shape: 404 without asking the store', async () => {
    for (const request of [
      () => api.get('/runs/nonexistent/comments', { token }),
      () => api.post('/runs/nonexistent/comments', { token, body: commentDocument('x') }),
      () => api.get('/comments/nonexistent', { token }),
    ]) {
      expect(await commandsOf(request)).toEqual({ status: 404, commands: [] });
    }
  });
});
