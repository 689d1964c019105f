import { describe, expect, it } from '@jest/globals';
import { errorBody, expectContractHeaders, tokenFor } from '../../support/api';
import { useLocalStack } from '../../support/local-stack';
import { createToken, revokeToken } from '#shared/store/tokens';
import { expectWith } from '../../support/expect-with';

/**
 * API Gateway as the synthesized stage configures it (the local stage's assembly): the routes, the
 * REQUEST authorizer's 401s, 404 and 405 at the gateway, and the request checks behind it.
 */
const { api } = useLocalStack();
const ORG = 'gateway-org';
const KEYS = `/organizations/${ORG}/reserved-tag-keys`;
const createBody = { data: { type: 'reserved-tag-keys', attributes: { key: 'environment' } } };

describe('GET /ping', () => {
  it('answers 204 with the contract headers and no body, without a token', async () => {
    const response = await api.get('/ping');
    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    const { actual, expected } = expectContractHeaders(response, false);
    expect(actual).toEqual(expected);
  });

  it('ignores a token, even a bad one', async () => {
    expect((await api.get('/ping', { token: 'garbage' })).status).toBe(204);
  });
});

describe('401: only about the token, saying which of three things is wrong', () => {
  const missing = errorBody(401, 'unauthorized', 'no Authorization header: send Authorization: Bearer <token>');
  const notBearer = errorBody(401, 'unauthorized', 'not a Bearer token: send Authorization: Bearer <token>');
  // One text for unknown, revoked and expired alike: a caller learns nothing about a token it holds.
  const notAccepted = errorBody(401, 'unauthorized', 'token not accepted: it is unknown, revoked or expired');

  it('no Authorization header, or an empty one (API Gateway answers without calling the authorizer)', async () => {
    const response = await api.get(KEYS);
    expect(response.status).toBe(401);
    expect(response.json).toEqual(missing);
    const { actual, expected } = expectContractHeaders(response);
    expect(actual).toEqual(expected);
    const empty = await api.get(KEYS, { headers: { Authorization: '' } });
    expect({ status: empty.status, json: empty.json }).toEqual({ status: 401, json: missing });
  });

  it('another scheme, or Bearer without a token: not a Bearer token', async () => {
    const token = await tokenFor({ [ORG]: 'owner' });
    for (const authorization of [`Basic ${token}`, 'Bearer', token, `Bearer ${token} extra`]) {
      const response = await api.get(KEYS, { headers: { Authorization: authorization } });
      expectWith({ status: response.status, json: response.json }, authorization).toEqual({
        status: 401,
        json: notBearer,
      });
    }
  });

  it('a malformed or unknown Bearer token: not accepted', async () => {
    for (const authorization of ['Bearer not-a-token', `Bearer tfcapi_${'A'.repeat(56)}`]) {
      const response = await api.get(KEYS, { headers: { Authorization: authorization } });
      expectWith({ status: response.status, json: response.json }, authorization).toEqual({
        status: 401,
        json: notAccepted,
      });
      // Asked again, the cached Deny answers the same.
      const again = await api.get(KEYS, { headers: { Authorization: authorization } });
      expectWith({ status: again.status, json: again.json }, authorization).toEqual({ status: 401, json: notAccepted });
    }
  });

  it('a revoked token: not accepted', async () => {
    const { record, token } = await createToken({ subject: 'user-revoked', grants: { [ORG]: 'owner' } });
    await revokeToken(record.tokenId);
    const response = await api.get(KEYS, { token });
    expect(response.status).toBe(401);
    expect(response.json).toEqual(notAccepted);
  });

  it('an expired token: not accepted', async () => {
    const { token } = await createToken({
      subject: 'user-expired',
      grants: { [ORG]: 'owner' },
      expiresAt: '2020-01-01T00:00:00.000Z',
    });
    const response = await api.get(KEYS, { token });
    expect(response.status).toBe(401);
    expect(response.json).toEqual(notAccepted);
  });

  it('never echoes the token', async () => {
    const response = await api.get(KEYS, { headers: { Authorization: 'Bearer secret-value-123' } });
    expect(response.text).not.toContain('secret-value-123');
  });
});

describe('routing', () => {
  it('unknown path: 404 saying the path is unknown, with or without a token', async () => {
    const token = await tokenFor({ [ORG]: 'owner' });
    const unknown = errorBody(404, 'not found', 'unknown path: no endpoint of this API is at this path');
    for (const path of ['/nope', '/organizations', '/organizations/x/reserved-tag-keys/extra']) {
      const response = await api.get(path, { token });
      expectWith(response.status, path).toBe(404);
      expect(response.json).toEqual(unknown);
    }
    expect((await api.get('/nope')).json).toEqual(unknown);
    // A path that exists, for something the token cannot see: the plain 404, which says nothing.
    expect((await api.get('/organizations/someone-else/reserved-tag-keys', { token })).json).toEqual(
      errorBody(404, 'not found'),
    );
  });

  it('known path, wrong method: 405', async () => {
    const token = await tokenFor({ [ORG]: 'owner' });
    for (const [method, path] of [
      ['POST', '/ping'],
      ['PUT', KEYS],
      ['DELETE', KEYS],
      ['GET', '/reserved-tags/rtk-AAAAAAAAAAAAAAAA'],
    ]) {
      const response = await api.request(method!, path!, { token });
      expectWith(response.status, `${method} ${path}`).toBe(405);
      expect(response.json).toEqual(errorBody(405, 'method not allowed'));
      const { actual, expected } = expectContractHeaders(response);
      expect(actual).toEqual(expected);
    }
  });

  it('known path, wrong method: 405 with Allow whatever the body’s media type (the method is judged first)', async () => {
    const token = await tokenFor({ [ORG]: 'owner' });
    const bodies: Array<[string, string]> = [
      ['text/csv', 'a,b'],
      ['application/xml', '<a/>'],
      ['text/xml', '<a/>'],
      ['application/x-www-form-urlencoded', 'a=b'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n--x--'],
      ['application/octet-stream', '\u0000\u0001'],
      ['text/plain', 'hello'],
      ['application/vnd.api+json', '{}'],
      ['image/png', 'x'],
    ];
    const answers: string[] = [];
    const expected: string[] = [];
    for (const [method, path, allow] of [
      ['PUT', '/reserved-tags/rtk-AAAAAAAAAAAAAAAA', 'DELETE, PATCH'],
      ['PUT', '/ping', 'GET'],
      ['POST', '/comments/wsc-AAAAAAAAAAAAAAAA', 'GET'],
    ]) {
      for (const [type, body] of bodies) {
        const response = await api.request(method!, path!, { token, body, headers: { 'Content-Type': type } });
        answers.push(
          `${method} ${path} ${type}: ${response.status} ${response.headers.get('allow')} ${response.json?.errors?.[0]?.title}`,
        );
        expected.push(`${method} ${path} ${type}: 405 ${allow} method not allowed`);
      }
    }
    expect(answers).toEqual(expected);
  });
});

describe('request checks', () => {
  it('413 for a body over 64 KiB', async () => {
    const token = await tokenFor({ [ORG]: 'owner' });
    const big = { data: { type: 'reserved-tag-keys', attributes: { key: 'k', padding: 'x'.repeat(70_000) } } };
    const response = await api.post(KEYS, { token, body: big });
    expect(response.status).toBe(413);
    expect(response.json).toEqual(errorBody(413, 'payload too large', 'request body must not exceed 65536 bytes'));
  });

  it('415 for a body that is not JSON:API or JSON', async () => {
    const token = await tokenFor({ [ORG]: 'owner' });
    const plain = await api.post(KEYS, { token, body: createBody, headers: { 'Content-Type': 'text/plain' } });
    expect(plain.status).toBe(415);
    expect(plain.json).toEqual(
      errorBody(
        415,
        'unsupported media type',
        'Content-Type must be application/vnd.api+json (application/json is accepted too), not text/plain',
      ),
    );
    const withParameter = await api.post(KEYS, {
      token,
      body: createBody,
      headers: { 'Content-Type': 'application/vnd.api+json; charset=utf-8' },
    });
    expect(withParameter.status).toBe(415);
    expect(withParameter.json).toEqual(
      errorBody(
        415,
        'unsupported media type',
        'media type parameter charset is not supported: application/vnd.api+json takes only ext and profile',
      ),
    );
  });

  it('406 when every JSON:API media type in Accept has parameters', async () => {
    const token = await tokenFor({ [ORG]: 'owner' });
    const response = await api.get(KEYS, { token, headers: { Accept: 'application/vnd.api+json; version=2' } });
    expect(response.status).toBe(406);
    expect(response.json).toEqual(
      errorBody(406, 'not acceptable', 'application/vnd.api+json with media type parameters cannot be served'),
    );
  });

  it('400 for a body that is not JSON or has no object data', async () => {
    const token = await tokenFor({ [ORG]: 'owner' });
    const notJson = await api.post(KEYS, { token, body: '{"data":' });
    expect(notJson.status).toBe(400);
    expect(notJson.json).toEqual(errorBody(400, 'bad request', 'request body is not valid JSON'));
    const noData = await api.post(KEYS, { token, body: { type: 'reserved-tag-keys' } });
    expect(noData.json).toEqual(errorBody(400, 'bad request', 'request body must have an object "data" member'));
  });

  it('409 for the wrong data.type', async () => {
    const token = await tokenFor({ [ORG]: 'owner' });
    const response = await api.post(KEYS, { token, body: { data: { type: 'workspaces', attributes: { key: 'k' } } } });
    expect(response.status).toBe(409);
    expect(response.json).toEqual(errorBody(409, 'conflict', 'data.type must be "reserved-tag-keys"'));
  });

  it('none of the refused requests wrote anything', async () => {
    const token = await tokenFor({ [ORG]: 'owner' });
    const list = await api.get(KEYS, { token });
    expect(list.json.meta.pagination['total-count']).toBe(0);
  });
});

describe('authorizer result cache', () => {
  it('reuses a decision for the same token within the TTL, like API Gateway', async () => {
    const { record, token } = await createToken({ subject: 'user-cached', grants: { [ORG]: 'reader' } });
    expect((await api.get(KEYS, { token })).status).toBe(200);
    await revokeToken(record.tokenId);
    // Within the cache TTL the revoked token still passes, exactly as the deployed gateway behaves.
    expect((await api.get(KEYS, { token })).status).toBe(200);
  });
});
