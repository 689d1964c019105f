import { request as httpRequest } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startLocalStack, type LocalStack } from '#infra/local/local-stack';
import { tokenFor } from '../support/api';

/**
 * The edge over HTTP, through the local stack serving the synthesized template (WAF, the
 * CloudFront front, API Gateway's mocks and gateway responses, the functions): what go-tfe,
 * python-tfe, Terraform and curl see at the root of the host. The client requests replayed are
 * those of go-tfe v1.110.0 and python-tfe 1.5.0 (docs/api.md's client compatibility).
 */
let local: LocalStack | undefined;
const stack = () => local!;
/** Every line the functions wrote, as `[FunctionLogicalId] line`. */
const logs: string[] = [];
const organization = 'edge-org';
let token: string;
beforeAll(async () => {
  local = await startLocalStack({
    dynamoDbEndpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB!,
    tableName: process.env.TABLE_NAME!,
    log: (name, line) => {
      logs.push(`[${name}] ${line}`);
    },
  });
  token = await tokenFor({ [organization]: 'owner' });
}, 120_000);
afterAll(async () => {
  await local?.close();
});

const url = (path: string) => `${stack().url}${path}`;
const requestId = (response: Response) => response.headers.get('x-request-id');
/** CloudFront's id of a request, as its answers carry it: opaque URL-safe base64. */
const CLOUDFRONT_ID = /^[A-Za-z0-9_-]{54}==$/;

describe('the host root', () => {
  it('answers Terraform service discovery without a token, as HCP Terraform does for the tfe services', async () => {
    const response = await fetch(url('/.well-known/terraform.json'), {
      headers: { Accept: 'application/json', 'User-Agent': 'Terraform/1.9.0' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json'); // Terraform refuses anything else
    expect(await response.json()).toEqual({ 'tfe.v2': '/api/v2/', 'tfe.v2.1': '/api/v2/', 'tfe.v2.2': '/api/v2/' });
    expect(requestId(response)).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('serves go-tfe’s NewClient ping at /api/v2/ping, the path go-tfe builds from any address', async () => {
    // go-tfe replaces the address's path with its BasePath: this is the request it makes.
    const response = await fetch(url('/api/v2/ping'), {
      headers: { Accept: 'application/vnd.api+json', 'User-Agent': 'go-tfe', Authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('x-ratelimit-limit')).toBe('30');
    expect(response.headers.get('tfp-api-version')).toBe('2.6');
    expect(requestId(response)).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('serves python-tfe’s list request (Content-Type on a GET) at the root', async () => {
    const response = await fetch(url(`/api/v2/organizations/${organization}/reserved-tag-keys`), {
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/vnd.api+json',
        Accept: 'application/vnd.api+json',
        'User-Agent': 'python-tfe',
      },
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: unknown[] }).data).toEqual([]);
  });
});

describe('gateway responses over HTTP', () => {
  const errorOf = async (response: Response) =>
    ((await response.json()) as { errors: Array<Record<string, string>> }).errors[0]!;

  it('answers an unknown path 404, no token 401 and a refused token 401, each a JSON:API error with X-Request-Id', async () => {
    const cases: Array<[string, RequestInit, number, string, string]> = [
      ['/api/v2/no-such-thing', {}, 404, 'not found', 'unknown path: no endpoint of this API is at this path'],
      ['/no-such-root', {}, 404, 'not found', 'unknown path: no endpoint of this API is at this path'],
      [
        `/api/v2/organizations/${organization}/reserved-tag-keys`,
        {},
        401,
        'unauthorized',
        'no Authorization header: send Authorization: Bearer <token>',
      ],
      [
        `/api/v2/organizations/${organization}/reserved-tag-keys`,
        { headers: { Authorization: 'Bearer not-a-token' } },
        401,
        'unauthorized',
        'token not accepted: it is unknown, revoked or expired',
      ],
    ];
    for (const [path, init, status, title, detail] of cases) {
      const response = await fetch(url(path), init);
      expect([path, response.status]).toEqual([path, status]);
      expect(response.headers.get('content-type')).toBe('application/vnd.api+json');
      expect(await errorOf(response)).toEqual({ status: String(status), title, detail });
      expect(requestId(response)).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('answers 405 with Allow naming the path’s methods', async () => {
    const cases: Array<[string, string, string]> = [
      ['POST', '/api/v2/ping', 'GET'],
      ['DELETE', '/api/v2/runs/run-x/comments', 'GET, POST'],
      ['GET', '/api/v2/reserved-tag-keys/rtk-x', 'DELETE, PATCH'],
      ['POST', '/.well-known/terraform.json', 'GET'],
    ];
    for (const [method, path, allow] of cases) {
      const response = await fetch(url(path), { method });
      expect([method, path, response.status, response.headers.get('allow')]).toEqual([method, path, 405, allow]);
      expect(await errorOf(response)).toEqual({ status: '405', title: 'method not allowed' });
      expect(requestId(response)).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('judges the method before the media type: a mock passes a body of any other type through, so no 415 from API Gateway', async () => {
    const put = await fetch(url('/api/v2/ping'), {
      method: 'PUT',
      headers: { 'Content-Type': 'text/csv' },
      body: 'a,b',
    });
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'GET']);
    expect(await errorOf(put)).toEqual({ status: '405', title: 'method not allowed' });
    // GET never fails for its Content-Type, the discovery mock's included.
    const discovery = await fetch(url('/.well-known/terraform.json'), { headers: { 'Content-Type': 'text/csv' } });
    expect(discovery.status).toBe(200);
    expect(await discovery.json()).toEqual({ 'tfe.v2': '/api/v2/', 'tfe.v2.1': '/api/v2/', 'tfe.v2.2': '/api/v2/' });
  });

  it('answers a body over 64 KiB 413 with the contract headers', async () => {
    const response = await fetch(url(`/api/v2/organizations/${organization}/reserved-tag-keys`), {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/vnd.api+json' },
      body: 'x'.repeat(65 * 1024),
    });
    expect(response.status).toBe(413);
    expect(response.headers.get('x-ratelimit-limit')).toBe('30');
    expect(await errorOf(response)).toMatchObject({ status: '413', title: 'payload too large' });
    // WAF's answer is static (no X-Request-Id): the ids a user can quote are the front's and API Gateway's.
    expect(requestId(response)).toBeNull();
    expect(response.headers.get('x-amz-cf-id')).toMatch(CLOUDFRONT_ID);
    expect(response.headers.get('x-amzn-requestid')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers every request through the front with an id of its own, X-Amz-Cf-Id, as CloudFront does', async () => {
    const answers = await Promise.all([
      fetch(url('/api/v2/ping')),
      fetch(url('/api/v2/no-such-thing')),
      fetch(url('/.well-known/terraform.json')),
      fetch(url(`/api/v2/organizations/${organization}/reserved-tag-keys`), {
        headers: { Authorization: `Bearer ${token}` },
      }),
    ]);
    const ids = answers.map((response) => response.headers.get('x-amz-cf-id'));
    for (const id of ids) expect(id).toMatch(CLOUDFRONT_ID);
    expect(new Set(ids).size).toBe(ids.length);
    // The contract's own id is there too, wherever API Gateway or a function answered.
    for (const response of answers) expect(requestId(response)).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('gives a response the request id its log lines carry', async () => {
    // A token the authorizer has not seen yet: its answer is not cached, so it runs (and logs) for this request.
    const fresh = await tokenFor({ [organization]: 'reader' });
    const response = await fetch(url(`/api/v2/organizations/${organization}/reserved-tag-keys`), {
      headers: { Authorization: `Bearer ${fresh}` },
    });
    expect(response.status).toBe(200);
    const id = requestId(response)!;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers.get('x-amzn-requestid')).toBe(id);
    // Function output reaches the log asynchronously: wait for it a little.
    const logged = () => logs.some((line) => line.includes(`"request_id":"${id}"`));
    for (let i = 0; i < 50 && !logged(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(logged()).toBe(true);
  });
});

describe('links', () => {
  /** fetch() does not let a caller set Host; a client (or an attacker) can. */
  function getWithHost(path: string, host: string): Promise<{ status: number; body: any }> {
    const { port } = stack();
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, path, headers: { Host: host, Authorization: `Bearer ${token}` } },
        (res) => {
          let text = '';
          res.on('data', (chunk) => {
            text += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  it('are built from the public address, never from the Host header', async () => {
    const path = `/api/v2/organizations/${organization}/reserved-tag-keys`;
    const { status, body } = await getWithHost(path, 'evil.example');
    expect(status).toBe(200);
    const self = `${stack().url}${path}?page%5Bnumber%5D=1&page%5Bsize%5D=20`;
    expect(body.links).toEqual({ self, first: self, prev: null, next: null, last: self });
  });
});

describe('rate limits', () => {
  it('counts every spelling of one token’s Authorization header in one bucket of 1,800 per minute', async () => {
    const own = await tokenFor({ [organization]: 'reader' }); // a bucket no other test has counted in
    const spellings = [`Bearer ${own}`, `bearer ${own}`, `BEARER  ${own}`, `Bearer\t${own}`, `bEaReR \t ${own}`];
    // An unknown path: WAF counts the request before API Gateway answers 404, no function runs.
    const send = (authorization: string) =>
      fetch(url('/api/v2/no-such-thing'), { headers: { Authorization: authorization } });
    // Paced under the stage's per-method throttle (250 req/s), which would answer 429 on its own.
    for (let sent = 0; sent < 1800; sent += 25) {
      const pause = new Promise((resolve) => setTimeout(resolve, 150));
      const batch = await Promise.all(
        Array.from({ length: 25 }, (_, i) => send(spellings[(sent + i) % spellings.length]!)),
      );
      expect([...new Set(batch.map((r) => r.status))]).toEqual([404]);
      await pause;
    }
    for (const spelling of spellings) {
      const limited = await send(spelling);
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('60');
      expect(limited.headers.get('x-ratelimit-reset')).toBe('60.000');
      expect(Number(limited.headers.get('x-ratelimit-reset'))).toBeGreaterThan(0);
      // Which limit, and what to do: the rule's own body in the template.
      expect(await limited.json()).toEqual({
        errors: [
          {
            status: '429',
            title: 'too many requests',
            detail:
              "over this token's limit of 1,800 requests per 60 s (30 req/s; refused requests count too): wait Retry-After (60 s) before the next request",
          },
        ],
      });
      expect(limited.headers.get('x-amz-cf-id')).toMatch(CLOUDFRONT_ID);
    }
    // Another token is its own bucket.
    expect((await send(`Bearer ${await tokenFor({ [organization]: 'reader' })}`)).status).toBe(404);
  }, 120_000);
});

describe('rate limits per client address', () => {
  // Last on this stack: it leaves 127.0.0.1 over its limit for a minute.
  it('bounds one address at 6,000 per minute with or without a token, whatever X-Tfe-Client-Ip it sends', async () => {
    const spoofed = (i: number) => ({
      'X-Tfe-Client-Ip': `198.51.100.${i % 250}`,
      'X-Forwarded-For': `203.0.113.${i % 250}`,
    });
    const send = (i: number) => fetch(url('/api/v2/no-such-thing'), { headers: spoofed(i) });
    let limited: Response | undefined;
    // Paced under the per-method throttle; earlier tests of this file already counted some requests.
    for (let sent = 0; sent <= 6000 && !limited; sent += 25) {
      const pause = new Promise((resolve) => setTimeout(resolve, 125));
      const batch = await Promise.all(Array.from({ length: 25 }, (_, i) => send(sent + i)));
      limited = batch.find((r) => r.status !== 404);
      await pause;
    }
    expect(limited?.status).toBe(429);
    expect(limited!.headers.get('retry-after')).toBe('60');
    expect(limited!.headers.get('x-ratelimit-reset')).toBe('60.000');
    expect(((await limited!.json()) as { errors: Array<{ detail: string }> }).errors[0]!.detail).toBe(
      "over this client address's limit of 6,000 requests per 60 s (100 req/s; refused requests count too): wait Retry-After (60 s) before the next request",
    );
    // A token does not get past it either.
    expect(
      (await fetch(url('/api/v2/ping'), { headers: { Authorization: `Bearer ${token}`, ...spoofed(1) } })).status,
    ).toBe(429);
  }, 120_000);
});

describe('the authorizer when the token store fails', () => {
  const stacks: LocalStack[] = [];
  let stalled: Server;
  const hanging = new Set<Socket>();
  beforeAll(async () => {
    // Accepts connections and never answers: a store that hangs.
    stalled = createServer((socket) => {
      hanging.add(socket);
    });
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const s of stacks) await s.close();
    for (const socket of hanging) socket.destroy();
    stalled.close();
  });

  const withStore = async (endpoint: string) => {
    const s = await startLocalStack({
      dynamoDbEndpoint: endpoint,
      tableName: process.env.TABLE_NAME!,
      log: () => undefined,
    });
    stacks.push(s);
    return s;
  };

  const stores: Array<[string, () => string]> = [
    ['unreachable', () => 'http://127.0.0.1:9'],
    ['stalled', () => `http://127.0.0.1:${(stalled.address() as { port: number }).port}`],
  ];
  it.each(stores)(
    'answers 503 with Retry-After, in bounded time, when the store is %s',
    async (_: string, endpoint: () => string) => {
      const s = await withStore(endpoint());
      const started = performance.now();
      const response = await fetch(`${s.url}/api/v2/organizations/${organization}/reserved-tag-keys`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await response.json()).toEqual({ errors: [{ status: '503', title: 'service unavailable' }] });
      expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      // Bounded by the store client's timeouts, well before the authorizer's 15 s Lambda timeout.
      expect(performance.now() - started).toBeLessThan(8_000);
    },
    60_000,
  );
});
