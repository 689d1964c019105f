import { createServer } from 'node:http';
import { connect } from 'node:net';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { answerParserRefusals } from '#infra/local/parser-refusals';
import { API_BASE_PATH } from '#shared/config';
import { newId } from '#shared/ids';
import { routes } from '#shared/routes';
import { registerNewRun } from '#shared/store/runs';
import { expectContractHeaders, tokenFor } from '../support/api';
import { useLocalStack } from '../support/local-stack';
import { keyDocument } from '../support/documents';

/**
 * Hostile input at the edge, over HTTP through the local stack: names that are built-in members
 * of JavaScript objects, bodies that are not UTF-8, `include`, and requests Node's HTTP parser
 * refuses. Each gets a JSON:API answer with the contract's headers, and none changes anything.
 */
const { api, stack } = useLocalStack();
const ORG = 'edge-input-org';
let token: string;
let runId: string;
beforeAll(async () => {
  token = await tokenFor({ [ORG]: 'owner' });
  runId = (await registerNewRun(ORG)).runId;
});

const BUILT_IN_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];

/** Every route of the table with its parameters filled in. */
const concretePath = (path: string) =>
  path
    .replace('{organization_name}', ORG)
    .replace('{reserved_tag_key_id}', newId('rtk'))
    .replace('{run_id}', () => runId)
    .replace('{comment_id}', newId('wsc'));

async function status(method: string, path: string, query = '', headers: Record<string, string> = {}) {
  const response = await fetch(`${stack().url}${API_BASE_PATH}${path}${query}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/vnd.api+json', ...headers },
    // An empty document: refused (400) before anything is written, so both requests get the same answer.
    ...(method === 'POST' || method === 'PATCH' ? { body: '{}' } : {}),
  });
  await response.arrayBuffer();
  return response.status;
}

describe('names of any spelling', () => {
  it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))(
    'answers %s as it would without query parameters or headers named like built-in object members',
    async (_, route) => {
      const path = concretePath(route.path);
      const plain = await status(route.method, path);
      expect(plain).toBeLessThan(500);
      const query = `?${BUILT_IN_NAMES.map((name) => `${name}=1`).join('&')}`;
      const headers = Object.fromEntries(BUILT_IN_NAMES.map((name) => [name, '1']));
      expect(await status(route.method, path, query, headers)).toBe(plain);
    },
  );
});

// Valid UTF-8 beyond ASCII comes back byte for byte: comments.e2e.test.ts ("comment body").
describe('bodies that are not UTF-8', () => {
  const invalid = (json: string) =>
    Buffer.concat([
      Buffer.from(json.split('\u0000')[0]!),
      Buffer.from([0xc3, 0x28, 0xff]),
      Buffer.from(json.split('\u0000')[1]!),
    ]);
  const post = (path: string, body: Buffer) =>
    fetch(`${stack().url}${API_BASE_PATH}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/vnd.api+json' },
      body,
    });

  it('refuses a comment whose body is not UTF-8 with 400 bad request, and stores nothing', async () => {
    const response = await post(
      `/runs/${runId}/comments`,
      invalid('{"data":{"type":"comments","attributes":{"body":"caf\u0000"}}}'),
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      errors: [{ status: '400', title: 'bad request', detail: 'request body is not valid UTF-8' }],
    });
    expect((await api.get(`/runs/${runId}/comments`, { token })).json.data).toEqual([]);
  });

  it('refuses a reserved tag key whose body is not UTF-8 with 400 bad request, and stores nothing', async () => {
    const response = await post(
      `/organizations/${ORG}/reserved-tag-keys`,
      invalid('{"data":{"type":"reserved-tag-keys","attributes":{"key":"env\u0000"}}}'),
    );
    expect(response.status).toBe(400);
    expect(((await response.json()) as { errors: Array<{ title: string }> }).errors[0]!.title).toBe('bad request');
    expect((await api.get(`/organizations/${ORG}/reserved-tag-keys`, { token })).json.data).toEqual([]);
  });
});

// Each route's refusal of an include (400 naming the path, the contract headers) is its function's:
// test/unit/handler-chain.test.ts. Over HTTP, what a refused create leaves in the store.
describe('include', () => {
  it('answers a create that asks to include 400 naming the path, and creates nothing', async () => {
    const response = await api.post(`/organizations/${ORG}/reserved-tag-keys?include=organization`, {
      token,
      body: keyDocument('included'),
    });
    expect(response.status).toBe(400);
    expect(response.json).toEqual({
      errors: [
        {
          status: '400',
          title: 'bad request',
          detail:
            'Invalid include parameter: organization cannot be included, this endpoint includes no related resources',
        },
      ],
    });
    const { actual, expected } = expectContractHeaders(response);
    expect(actual).toEqual(expected);
    expect((await api.get(`/organizations/${ORG}/reserved-tag-keys`, { token })).json.data).toEqual([]);
  });
});

/** One raw HTTP exchange: what the client sent as bytes, the answer as status, headers and body. */
async function raw(
  port: number,
  request: string,
  pauseMs = 0,
): Promise<{ status: number; headers: Record<string, string>; body: any }> {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk) => chunks.push(chunk));
  socket.on('error', () => undefined);
  socket.write(request);
  if (pauseMs) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  await new Promise((resolve) => socket.on('close', resolve));
  const text = Buffer.concat(chunks).toString('utf8');
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine!.split(' ')[1]), headers, body: body ? JSON.parse(body) : undefined };
}

/** The contract's headers and error body on a refusal Node's parser made. */
function expectContractRefusal(answer: Awaited<ReturnType<typeof raw>>, status: number) {
  expect(answer.status).toBe(status);
  expect(answer.headers).toMatchObject({
    'content-type': 'application/vnd.api+json',
    'tfp-api-version': '2.6',
    'x-ratelimit-limit': '30',
    'tfp-appname': 'tfc-tags-comments',
    'cache-control': 'no-store',
    'x-request-id': expect.stringMatching(/^[0-9a-f-]{36}$/),
  });
  expect(answer.body).toEqual({ errors: [expect.objectContaining({ status: String(status) })] });
}

describe('requests the HTTP parser refuses', () => {
  it('answers oversized headers 431 with a JSON:API body and the contract headers', async () => {
    const answer = await raw(
      stack().port,
      `GET /api/v2/ping HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expectContractRefusal(answer, 431);
    // Deployed, CloudFront refuses it, with its request id: so does the local front.
    expect(answer.headers['x-amz-cf-id']).toMatch(/^[A-Za-z0-9_-]{54}==$/);
  });

  it('answers a malformed request line 400 with a JSON:API body and the contract headers', async () => {
    const answer = await raw(stack().port, 'NOT HTTP AT ALL\r\n\r\n');
    expectContractRefusal(answer, 400);
    expect(answer.headers['x-amz-cf-id']).toMatch(/^[A-Za-z0-9_-]{54}==$/);
  });

  it('answers a request too slow to arrive 408 with a JSON:API body and the contract headers', async () => {
    // The local stack waits 10 s for headers; the same answer from a server that waits 0.3 s.
    const server = createServer({ headersTimeout: 300, requestTimeout: 300, connectionsCheckingInterval: 50 });
    answerParserRefusals(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      expectContractRefusal(
        await raw((server.address() as { port: number }).port, 'GET /api/v2/ping HTTP/1.1\r\nHost: x\r\n', 100),
        408,
      );
    } finally {
      server.close();
    }
  });
});
