import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { tokenFor, type RequestOptions } from '../support/api';
import { useLocalStack } from '../support/local-stack';
import { document, problemsWith } from '../support/openapi';
import { written } from '../support/written';
import { API_BASE_PATH } from '#shared/config';
import { createNotificationSecret } from '#shared/store/notification-secrets';
import { registerNewRun } from '#shared/store/runs';
import { commentDocument, keyDocument, requestDocument } from '../support/documents';

/**
 * A run against the local stack as a client author would check the document: every operation's
 * success, and each kind of error (401, 403, 404, 409, 415, 422, malformed JSON, an unsigned
 * notification), each answer valid against what docs/openapi.json declares for its operation and
 * status. (Every other e2e test's answers are checked too, by test/support/validate-answers.ts.)
 */
const { api } = useLocalStack();
const ORG = 'openapi-org';
const seen: string[] = [];

/** The answer, after checking it against the document by hand (and noting which operation and status it was). */
async function call(method: string, path: string, options: RequestOptions = {}) {
  const response = await api.request(method, path, options);
  const url = `${api.baseUrl}${API_BASE_PATH}${path}`;
  expect({
    request: `${method} ${path}`,
    problems: problemsWith({ method, url, status: response.status, headers: response.headers, text: response.text }),
  }).toEqual({ request: `${method} ${path}`, problems: [] });
  const template = Object.keys(document.paths).find((t) =>
    new RegExp(`^${t.replace(/\{\w+\}/g, '[^/?]+')}(\\?|$)`).test(path),
  );
  seen.push(`${document.paths[template!]?.[method.toLowerCase()]?.operationId} ${response.status}`);
  return response;
}

let owner: string;
let member: string;
let run: string;
let secret: string;
beforeAll(async () => {
  owner = await tokenFor({ [ORG]: 'owner' });
  member = await tokenFor({ [ORG]: 'member' });
  run = (await registerNewRun(ORG)).runId;
  secret = written(await createNotificationSecret(ORG)).current.secret;
});

describe('every answer of a run through the local stack is what docs/openapi.json declares', () => {
  it('reserved tag keys: create, list with paging, rename on both paths, delete on both paths, and their errors', async () => {
    const keys = `/organizations/${ORG}/reserved-tag-keys`;
    expect((await call('GET', '/ping')).status).toBe(204);
    expect((await call('GET', '/health')).status).toBe(200); // the local stage has the deep health route
    const first = await call('POST', keys, {
      token: owner,
      body: keyDocument('environment'),
      headers: { 'Idempotency-Key': 'openapi-1' },
    });
    expect(first.status).toBe(201);
    expect(
      (
        await call('POST', keys, {
          token: owner,
          body: keyDocument('environment'),
          headers: { 'Idempotency-Key': 'openapi-1' },
        })
      ).status,
    ).toBe(201);
    const second = await call('POST', keys, {
      token: owner,
      body: keyDocument('cost-center', { 'disable-overrides': true }),
    });
    expect(second.status).toBe(201);
    expect(
      (await call('GET', `${keys}?page%5Bsize%5D=1&page%5Bnumber%5D=2`, { token: member })).json.meta.pagination[
        'total-pages'
      ],
    ).toBe(2);
    expect((await call('GET', `${keys}?page[size]=0`, { token: member })).status).toBe(422);
    expect(
      (await call('PATCH', `/reserved-tag-keys/${first.json.data.id}`, { token: owner, body: keyDocument('env') }))
        .status,
    ).toBe(200);
    expect(
      (
        await call('PATCH', `/reserved-tags/${first.json.data.id}`, {
          token: owner,
          body: { data: { type: 'reserved-tag-keys', id: first.json.data.id, attributes: { key: 'Environment' } } },
        })
      ).status,
    ).toBe(200);
    expect(
      (await call('PATCH', `/reserved-tags/${first.json.data.id}`, { token: owner, body: keyDocument('cost-center') }))
        .status,
    ).toBe(422);
    expect(
      (
        await call('PATCH', `/reserved-tag-keys/${first.json.data.id}`, {
          token: owner,
          body: requestDocument('tags', { key: 'x' }),
        })
      ).status,
    ).toBe(409);
    expect((await call('POST', keys, { token: owner, body: keyDocument(' padded') })).status).toBe(422);
    expect((await call('POST', keys, { token: owner, body: '{"data": ' })).status).toBe(400);
    expect(
      (await call('POST', keys, { token: owner, body: keyDocument('k'), headers: { 'Content-Type': 'text/plain' } }))
        .status,
    ).toBe(415);
    expect((await call('GET', `${keys}?include=organization`, { token: owner })).status).toBe(400);
    expect((await call('POST', keys, { token: member, body: keyDocument('team') })).status).toBe(403);
    expect((await call('GET', keys)).status).toBe(401);
    expect((await call('GET', keys, { token: 'tfcapi_not-a-token' })).status).toBe(401);
    expect((await call('GET', '/organizations/someone-else/reserved-tag-keys', { token: owner })).status).toBe(404);
    expect((await call('DELETE', `/reserved-tag-keys/${first.json.data.id}`, { token: owner })).status).toBe(204);
    expect((await call('DELETE', `/reserved-tags/${second.json.data.id}`, { token: owner })).status).toBe(204);
    expect((await call('DELETE', `/reserved-tags/${second.json.data.id}`, { token: owner })).status).toBe(404);
    expect((await call('DELETE', '/reserved-tag-keys/nonexistent', { token: owner })).status).toBe(404);
  }, 60_000);

  it('comments: create, list with and without paging, show, and their errors', async () => {
    const comments = `/runs/${run}/comments`;
    const created = await call('POST', comments, { token: member, body: commentDocument('Approved after review.\n') });
    expect(created.status).toBe(201);
    expect((await call('POST', comments, { token: member, body: commentDocument('x'.repeat(16_385)) })).status).toBe(
      422,
    );
    expect(
      (
        await call('POST', comments, {
          token: member,
          body: commentDocument('a'),
          headers: { Accept: 'application/vnd.api+json; charset=utf-8' },
        })
      ).status,
    ).toBe(406);
    expect((await call('GET', comments, { token: member })).json.data).toHaveLength(1);
    expect((await call('GET', `${comments}?page[number]=3&page[size]=1`, { token: member })).json.data).toEqual([]);
    expect((await call('GET', `/comments/${created.json.data.id}`, { token: member })).status).toBe(200);
    expect((await call('GET', '/comments/wsc-0000000000000000', { token: member })).status).toBe(404);
    expect((await call('GET', '/runs/run-0000000000000000/comments', { token: member })).status).toBe(404);
  }, 60_000);

  it('run notifications: a signed one, an unsigned one, a signed one the service refuses', async () => {
    const path = `/run-notifications/${ORG}`;
    const payload = JSON.stringify({
      payload_version: 1,
      run_id: 'run-0penap1RunNot1fy',
      organization_name: ORG,
      workspace_name: 'networking',
      notifications: [{ trigger: 'run:created', run_status: 'pending' }],
    });
    const signed = (body: string) => ({
      'Content-Type': 'application/json',
      'X-TFE-Notification-Signature': createHmac('sha512', secret).update(body).digest('hex'),
    });
    expect((await call('POST', path, { body: payload, headers: { 'Content-Type': 'application/json' } })).status).toBe(
      401,
    );
    expect((await call('POST', path, { body: payload, headers: signed(payload) })).status).toBe(204);
    const wrong = payload.replace('"payload_version":1', '"payload_version":2');
    expect((await call('POST', path, { body: wrong, headers: signed(wrong) })).status).toBe(422);
  });

  it('exercised every operation of the document, ping and service discovery aside', () => {
    const operations = Object.values<Record<string, any>>(document.paths)
      .flatMap((item) => Object.values(item).map((o) => o?.operationId))
      .filter(Boolean);
    const succeeded = new Set(seen.filter((s) => /^\w+ 2\d\d$/.test(s)).map((s) => s.split(' ')[0]));
    expect(operations.filter((id) => !succeeded.has(id) && id !== 'discoverServices')).toEqual([]);
    expect(new Set(seen.map((s) => s.split(' ')[1]))).toEqual(
      new Set(['200', '201', '204', '400', '401', '403', '404', '406', '409', '415', '422']),
    );
  });
});
