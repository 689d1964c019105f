import { afterAll, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer } from 'node:net';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { jwtVerify } from 'jose';
import { handler as authorizer } from '#functions/authorizer';
import { failureOf } from '#shared/observability/failures';
import { logger } from '#shared/observability/logger';
import { metrics } from '#shared/observability/metrics';
import { decodePrincipal, type Principal } from '#shared/auth/principal';
import { createTrust, deleteTrust } from '#shared/store/trusts';
import {
  forgetIssuerKeys,
  KEY_REFETCH_COOLDOWN_MS,
  KEYS_MAX_AGE_MS,
  keysOf,
  LOOPBACK_ISSUERS_ENV,
  MAX_DOCUMENT_BYTES,
} from '#shared/workload-identity/issuer-keys';
import { IssuerUnavailable } from '#shared/workload-identity/issuer-unavailable';
import { CLOCK_LEEWAY_SECONDS } from '#shared/workload-identity/verify';
import { startOidcIssuer } from '#infra/local/oidc-issuer';
import {
  claims,
  hmacWithPublicKey,
  newIssuerKey,
  signRaw,
  startTestIssuer,
  unsignedToken,
  withPayload,
  type TestIssuer,
} from '../support/oidc';

/**
 * Workload identity through the real authorizer handler, over DynamoDB Local, against issuers of
 * the test's own on 127.0.0.1 (discovery and JWKS over HTTP): good tokens, and the hostile ones a
 * JWT verifier must refuse (RFC 8725).
 */
process.env[LOOPBACK_ISSUERS_ENV] = 'allowed';
const RUN = 'run-AAAAAAAAAAAAAAAA';
const METHOD_ARN = 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/GET/api/v2/runs/run-x/comments';
const event = (authorization: string) =>
  ({
    type: 'REQUEST',
    methodArn: METHOD_ARN,
    headers: { Authorization: authorization },
    requestContext: { requestId: 'r' },
  }) as unknown as APIGatewayRequestAuthorizerEvent;
const authorize = (jwt: string) => authorizer(event(`Bearer ${jwt}`));
const effectOf = (result: APIGatewayAuthorizerResult) => result.policyDocument.Statement[0]!.Effect;
const principalOf = (result: APIGatewayAuthorizerResult): Principal =>
  decodePrincipal(result.context as Record<string, unknown>);

let issuer: TestIssuer;
let stranger: TestIssuer;
const org = `wi-${Date.now().toString(36)}`;

beforeAll(async () => {
  [issuer, stranger] = await Promise.all([startTestIssuer(), startTestIssuer()]);
  await createTrust({
    organization: org,
    issuer: issuer.url,
    audience: 'tfc-tags-comments',
    role: 'member',
    claims: { repository_owner: 'acme' },
  });
});
afterAll(async () => {
  await Promise.all([issuer.close(), stranger.close()]);
});
beforeEach(() => forgetIssuerKeys());

const good = (changes: Record<string, unknown> = {}) => claims(issuer.url, { repository_owner: 'acme', ...changes });

describe("a trusted issuer's token", () => {
  it.each(['RS256', 'ES256'])(
    "signed with %s is allowed, with the trust's role in its organization only, and its sub as subject",
    async (alg) => {
      const key = issuer.keys.find((k) => k.alg === alg)!;
      const result = await authorize(await issuer.mint({ key, claims: { repository_owner: 'acme' } }));
      expect(effectOf(result)).toBe('Allow');
      const principal = principalOf(result);
      expect(principal).toMatchObject({ subject: 'repo:acme/infra:ref:refs/heads/main', grants: { [org]: 'member' } });
      expect(Object.keys(principal.grants)).toEqual([org]);
      expect(principal.tokenId).toMatch(/^trust-[A-Za-z0-9]{16}$/);
    },
  );

  it("carries the token's exp (plus the leeway) so a cached Allow is refused once the token has expired", async () => {
    const exp = Math.floor(Date.now() / 1000) + 120;
    const result = await authorize(
      await signRaw({ alg: 'RS256', kid: issuer.keys[0]!.kid }, good({ exp }), issuer.keys[0]!),
    );
    const expiresAt = Date.parse(principalOf(result).expiresAt!);
    expect(expiresAt).toBe((exp + CLOCK_LEEWAY_SECONDS) * 1000);
    expect(() => decodePrincipal(result.context as Record<string, unknown>, new Date(expiresAt))).toThrow(
      'token not accepted',
    );
    expect(() => decodePrincipal(result.context as Record<string, unknown>, new Date(expiresAt - 1000))).not.toThrow();
  });
});

describe('hostile tokens are refused (a Deny: 401), never allowed, never a failure', () => {
  const cases: Array<[string, () => Promise<string>]> = [
    ['alg none', async () => unsignedToken({ kid: issuer.keys[0]!.kid, typ: 'JWT' }, good())],
    [
      "HS256 signed with the issuer's public key",
      async () => hmacWithPublicKey(issuer.keys[0]!.publicJwk, good(), issuer.keys[0]!.kid),
    ],
    [
      'expired past the leeway',
      async () => issuer.mint({ claims: { repository_owner: 'acme' }, expiresInSeconds: -(CLOCK_LEEWAY_SECONDS + 5) }),
    ],
    [
      'nbf in the future',
      async () =>
        signRaw(
          { alg: 'RS256', kid: issuer.keys[0]!.kid },
          good({ nbf: Math.floor(Date.now() / 1000) + 300 }),
          issuer.keys[0]!,
        ),
    ],
    [
      'iat in the future',
      async () =>
        signRaw(
          { alg: 'RS256', kid: issuer.keys[0]!.kid },
          good({ iat: Math.floor(Date.now() / 1000) + 300 }),
          issuer.keys[0]!,
        ),
    ],
    [
      'no exp',
      async () => signRaw({ alg: 'RS256', kid: issuer.keys[0]!.kid }, good({ exp: undefined }), issuer.keys[0]!),
    ],
    [
      'no iat',
      async () => signRaw({ alg: 'RS256', kid: issuer.keys[0]!.kid }, good({ iat: undefined }), issuer.keys[0]!),
    ],
    [
      'no sub',
      async () => signRaw({ alg: 'RS256', kid: issuer.keys[0]!.kid }, good({ sub: undefined }), issuer.keys[0]!),
    ],
    [
      'a sub with a NUL',
      async () =>
        signRaw({ alg: 'RS256', kid: issuer.keys[0]!.kid }, good({ sub: 'repo:acme/app\u0000' }), issuer.keys[0]!),
    ],
    [
      'a sub with a new line',
      async () =>
        signRaw({ alg: 'RS256', kid: issuer.keys[0]!.kid }, good({ sub: 'repo:acme/app\nadmin' }), issuer.keys[0]!),
    ],
    [
      'a sub with a right-to-left override',
      async () =>
        signRaw({ alg: 'RS256', kid: issuer.keys[0]!.kid }, good({ sub: 'repo:acme/\u202eppa' }), issuer.keys[0]!),
    ],
    [
      'a sub with a zero-width space',
      async () =>
        signRaw({ alg: 'RS256', kid: issuer.keys[0]!.kid }, good({ sub: 'repo:acme/\u200bapp' }), issuer.keys[0]!),
    ],
    [
      'a lifetime over 24 hours',
      async () =>
        signRaw(
          { alg: 'RS256', kid: issuer.keys[0]!.kid },
          good({ exp: Math.floor(Date.now() / 1000) + 25 * 3600 }),
          issuer.keys[0]!,
        ),
    ],
    ['another audience', async () => issuer.mint({ audience: 'someone-else', claims: { repository_owner: 'acme' } })],
    ['a pinned claim that does not match', async () => issuer.mint({ claims: { repository_owner: 'evil' } })],
    ['a pinned claim that is missing', async () => issuer.mint({})],
    [
      'a pinned claim with the right value inside an array',
      async () => issuer.mint({ claims: { repository_owner: ['acme'] } }),
    ],
    [
      'a key the issuer never published, with its kid',
      async () => signRaw({ alg: 'RS256', kid: issuer.keys[0]!.kid }, good(), await newIssuerKey('RS256')),
    ],
    [
      'a key the issuer never published, with another kid',
      async () => signRaw({ alg: 'RS256', kid: 'attacker' }, good(), await newIssuerKey('RS256', 'attacker')),
    ],
    [
      "a jwk header carrying the attacker's key",
      async () => {
        const attacker = await newIssuerKey('RS256', 'attacker');
        return signRaw({ alg: 'RS256', kid: attacker.kid, jwk: attacker.publicJwk }, good(), attacker);
      },
    ],
    [
      "a jku header pointing at the attacker's JWKS",
      async () =>
        signRaw(
          { alg: 'RS256', kid: stranger.keys[0]!.kid, jku: `${stranger.url}/.well-known/jwks` },
          good(),
          stranger.keys[0]!,
        ),
    ],
    [
      'an x5u header pointing at the attacker',
      async () =>
        signRaw(
          { alg: 'RS256', kid: stranger.keys[0]!.kid, x5u: `${stranger.url}/cert.pem` },
          good(),
          stranger.keys[0]!,
        ),
    ],
    [
      'an unknown crit header',
      async () =>
        signRaw(
          { alg: 'RS256', kid: issuer.keys[0]!.kid, crit: ['urn:x-unknown'], 'urn:x-unknown': true },
          good(),
          issuer.keys[0]!,
        ),
    ],
    [
      'a payload changed after signing',
      async () => withPayload(await issuer.mint({ claims: { repository_owner: 'evil' } }), good()),
    ],
    [
      "RS256 in the header over an ES256 key's signature",
      async () => {
        const token = await issuer.mint({ key: issuer.keys[1]!, claims: { repository_owner: 'acme' } });
        const [, payload, signature] = token.split('.');
        return `${Buffer.from(JSON.stringify({ alg: 'RS256', kid: issuer.keys[0]!.kid })).toString('base64url')}.${payload}.${signature}`;
      },
    ],
    [
      'the trusted issuer with a trailing slash',
      async () => signRaw({ alg: 'RS256', kid: issuer.keys[0]!.kid }, good({ iss: `${issuer.url}/` }), issuer.keys[0]!),
    ],
    ['an issuer nobody trusts', async () => stranger.mint({ claims: { repository_owner: 'acme' } })],
    [
      'an issuer of 5,000 characters (longer than a sort key may be)',
      async () =>
        signRaw(
          { alg: 'RS256', kid: issuer.keys[0]!.kid },
          good({ iss: `${issuer.url}/${'a'.repeat(5000)}` }),
          issuer.keys[0]!,
        ),
    ],
    [
      'an issuer with a lone surrogate',
      async () =>
        signRaw({ alg: 'RS256', kid: issuer.keys[0]!.kid }, good({ iss: `${issuer.url}/\ud800` }), issuer.keys[0]!),
    ],
    [
      'an issuer that is not a string',
      async () =>
        signRaw({ alg: 'RS256', kid: issuer.keys[0]!.kid }, good({ iss: { url: issuer.url } }), issuer.keys[0]!),
    ],
    ['garbage in three parts', async () => 'eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.c2lnbmF0dXJl'],
    ['three empty-ish parts', async () => 'a.b.c'],
    [
      'a token of 10 KB',
      async () => issuer.mint({ claims: { repository_owner: 'acme', padding: 'x'.repeat(10_000) } }),
    ],
  ];

  it.each(cases)('%s', async (_name, token) => {
    const strangerBefore = { ...stranger.requests };
    const result = await authorize(await token());
    expect(effectOf(result)).toBe('Deny');
    expect(result.context).toMatchObject({ detail: 'token not accepted: it is unknown, revoked or expired' });
    // Nothing is fetched from an issuer no trust names, whatever the token's header says.
    expect(stranger.requests).toEqual(strangerBefore);
  });

  it('fetches nothing for an untrusted or misspelled issuer', async () => {
    const before = { ...issuer.requests };
    await authorize(
      await signRaw({ alg: 'RS256', kid: issuer.keys[0]!.kid }, good({ iss: `${issuer.url}/` }), issuer.keys[0]!),
    );
    expect(issuer.requests).toEqual(before);
  });
});

describe('keys, fetched rarely and safely', () => {
  it('20 distinct tokens at once on a cold instance cost one discovery and one JWKS fetch', async () => {
    const before = { discovery: issuer.requests['/.well-known/openid-configuration'] ?? 0, jwks: issuer.jwksFetches() };
    const tokens = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        issuer.mint({ key: issuer.keys[i % 2]!, claims: { repository_owner: 'acme', n: i } }),
      ),
    );
    const results = await Promise.all(tokens.map(authorize));
    expect(results.map(effectOf)).toEqual(Array(20).fill('Allow'));
    expect((issuer.requests['/.well-known/openid-configuration'] ?? 0) - before.discovery).toBe(1);
    expect(issuer.jwksFetches() - before.jwks).toBe(1);
  });

  it('20 tokens with unknown kids at once refetch the JWKS at most once per cooldown', async () => {
    await authorize(await issuer.mint({ claims: { repository_owner: 'acme' } })); // keys now held
    const before = issuer.jwksFetches();
    const forged = await Promise.all(
      Array.from({ length: 20 }, async (_, i) =>
        signRaw({ alg: 'RS256', kid: `unknown-${i}` }, good(), await newIssuerKey('RS256', `unknown-${i}`)),
      ),
    );
    const results = await Promise.all(forged.map(authorize));
    expect(results.map(effectOf)).toEqual(Array(20).fill('Deny'));
    expect(issuer.jwksFetches() - before).toBeLessThanOrEqual(1);
  });

  it(
    'accepts a rotated key once the issuer publishes it (after the refetch cooldown)',
    async () => {
      await authorize(await issuer.mint({ claims: { repository_owner: 'acme' } }));
      const rotated = await newIssuerKey('ES256');
      issuer.keys.push(rotated);
      try {
        const token = await issuer.mint({ key: rotated, claims: { repository_owner: 'acme' } });
        await new Promise((resolve) => setTimeout(resolve, KEY_REFETCH_COOLDOWN_MS + 200));
        expect(effectOf(await authorize(token))).toBe('Allow');
      } finally {
        issuer.keys.pop();
      }
    },
    KEY_REFETCH_COOLDOWN_MS + 15_000,
  );

  it('fetches the keys again once they are older than KEYS_MAX_AGE_MS, and only then', async () => {
    // The key set alone, the tokens minted first: the authorizer would judge their times by the shifted clock too.
    const tokens = await Promise.all(
      Array.from({ length: 4 }, () => issuer.mint({ claims: { repository_owner: 'acme' } })),
    );
    const verify = async () => (await jwtVerify(tokens.pop()!, await keysOf(issuer.url))).payload.sub;
    expect(await verify()).toBeDefined();
    const before = issuer.jwksFetches();
    const realNow = Date.now.bind(Date);
    const clock = jest.spyOn(Date, 'now');
    try {
      clock.mockImplementation(() => realNow() + KEYS_MAX_AGE_MS - 1_000);
      expect(await verify()).toBeDefined();
      expect(issuer.jwksFetches() - before).toBe(0);
      clock.mockImplementation(() => realNow() + KEYS_MAX_AGE_MS + 1_000);
      expect(await verify()).toBeDefined();
      expect(await verify()).toBeDefined();
      expect(issuer.jwksFetches() - before).toBe(1);
    } finally {
      clock.mockRestore();
    }
  });

  it('opens a connection of its own for each document: an issuer that resets a reused one is still read', async () => {
    // A connection kept alive across a Lambda freeze is dead on thaw, with nothing to tell the
    // client before it writes on it; this issuer resets every second request on a connection.
    const requestsOn = new WeakMap<object, number>();
    const answer = authorizeWithIssuer((request, response, url) => {
      const count = (requestsOn.get(request.socket) ?? 0) + 1;
      requestsOn.set(request.socket, count);
      if (count > 1) return void request.socket.destroy();
      serveDiscoveryOr(request, response, url, () =>
        response.end(JSON.stringify({ keys: [issuer.keys[0]!.publicJwk] })),
      );
    });
    expect(effectOf(await answer)).toBe('Allow');
  });

  it.each([
    [
      'redirects its JWKS elsewhere',
      (r: ServerResponse) => {
        r.writeHead(302, { location: 'https://attacker.example/jwks' }).end();
      },
    ],
    [
      'answers 404 for its JWKS',
      (r: ServerResponse) => {
        r.writeHead(404).end('{}');
      },
    ],
    [
      'sends a JWKS that is not JSON',
      (r: ServerResponse) => {
        r.writeHead(200).end('<html>');
      },
    ],
    [
      'sends JSON that is not a key set',
      (r: ServerResponse) => {
        r.writeHead(200).end('{"keys":"none"}');
      },
    ],
    [
      'declares a JWKS larger than the bound',
      (r: ServerResponse) => {
        r.writeHead(200, { 'content-length': String(MAX_DOCUMENT_BYTES + 1) }).write('{"keys":[');
      },
    ],
  ])('an issuer that %s is never an allow: the authorizer fails (503 to the client)', async (_, jwks) => {
    await expect(
      authorizeWithIssuer((request, response, url) => serveDiscoveryOr(request, response, url, () => jwks(response))),
    ).rejects.toBeInstanceOf(IssuerUnavailable);
  });

  it('an issuer that cannot be reached, hangs or sends a huge JWKS is never an allow: the authorizer fails (503 to the client)', async () => {
    const token = await issuer.mint({ claims: { repository_owner: 'acme' } });
    const [, payload] = token.split('.');
    // An issuer URL on a port nobody listens on.
    const closed = await freePort();
    const hanging = createServer(() => {}).listen(0, '127.0.0.1');
    await new Promise((resolve) => hanging.once('listening', resolve));
    const huge = await startOidcIssuer({ published: () => Array.from({ length: 400 }, () => issuer.keys[0]!) });
    try {
      for (const url of [
        `http://127.0.0.1:${closed}`,
        `http://127.0.0.1:${(hanging.address() as { port: number }).port}`,
        huge.url,
      ]) {
        const trust = await createTrust({
          organization: org,
          issuer: url,
          audience: 'tfc-tags-comments',
          role: 'owner',
          claims: {},
        });
        const body = JSON.parse(Buffer.from(payload!, 'base64url').toString());
        const forIssuer = await signRaw(
          { alg: 'RS256', kid: issuer.keys[0]!.kid },
          { ...body, iss: url },
          issuer.keys[0]!,
        );
        await expect(authorize(forIssuer)).rejects.toBeInstanceOf(IssuerUnavailable);
        await deleteTrust(trust.trustId);
      }
    } finally {
      hanging.close();
      await huge.close();
    }
  });
});

describe("an issuer that cannot be reached is the issuer's failure, never the store's", () => {
  // The network errors (ECONNREFUSED, a timeout, ENOTFOUND) are ones the AWS SDK's classifier also
  // calls transient: checked before the store's, the issuer's failure is logged and counted as its own.
  it.each([
    ['refuses connections', async () => ({ url: `http://127.0.0.1:${await freePort()}`, close: () => undefined })],
    [
      'accepts connections and never answers',
      async () => {
        const hanging = createServer(() => {}).listen(0, '127.0.0.1');
        await new Promise((resolve) => hanging.once('listening', resolve));
        return {
          url: `http://127.0.0.1:${(hanging.address() as { port: number }).port}`,
          close: () => {
            hanging.close();
          },
        };
      },
    ],
  ])('an issuer that %s: logged "issuer unavailable", counted as IssuerUnavailable', async (_, start) => {
    const unreachable = await start();
    const trust = await createTrust({
      organization: org,
      issuer: unreachable.url,
      audience: 'tfc-tags-comments',
      role: 'owner',
      claims: {},
    });
    const warned = jest.spyOn(logger, 'warn');
    const counted = jest.spyOn(metrics, 'addMetric');
    try {
      const token = await signRaw({ alg: 'RS256', kid: issuer.keys[0]!.kid }, claims(unreachable.url), issuer.keys[0]!);
      await expect(authorize(token)).rejects.toBeInstanceOf(IssuerUnavailable);
      expect(warned.mock.calls.map(([message]) => message)).toEqual(['issuer unavailable']);
      expect(warned.mock.calls[0]![1]).toMatchObject({
        issuer: unreachable.url,
        detail: expect.stringContaining(unreachable.url),
      });
      const names = counted.mock.calls.map(([name]) => name);
      expect(names).toContain('IssuerUnavailable');
      expect(names).not.toContain('StoreUnavailable');
    } finally {
      warned.mockRestore();
      counted.mockRestore();
      unreachable.close();
      await deleteTrust(trust.trustId);
    }
  });

  it("a name DNS cannot resolve (ENOTFOUND) is the issuer's failure too", () => {
    const dns = Object.assign(new Error('getaddrinfo ENOTFOUND token.actions.githubusercontent.com'), {
      code: 'ENOTFOUND',
    });
    expect(
      failureOf(
        new IssuerUnavailable('https://token.actions.githubusercontent.com', 'could not be read (ENOTFOUND)', {
          cause: dns,
        }),
      ),
    ).toBe('issuer-unavailable');
    expect(failureOf(dns)).toBe('store-unavailable'); // the same error from the store's client
    expect(failureOf(new TypeError('a bug'))).toBe('failed');
  });
});

describe('trusts', () => {
  it('a deleted trust accepts nothing more (the authorizer reads the trusts on every cache miss)', async () => {
    const other = `${org}-gone`;
    const trust = await createTrust({
      organization: other,
      issuer: issuer.url,
      audience: 'deleted-trust',
      role: 'reader',
      claims: {},
    });
    const token = await issuer.mint({ audience: 'deleted-trust' });
    expect(effectOf(await authorize(token))).toBe('Allow');
    await deleteTrust(trust.trustId);
    expect(effectOf(await authorize(token))).toBe('Deny');
  });

  it("a refused token's log line names its iss, aud and sub and, per trust of its issuer, the checks that failed (names, never values)", async () => {
    const why = await createTrust({
      organization: `${org}-why`,
      issuer: issuer.url,
      audience: 'why-aud',
      role: 'member',
      claims: { repository: 'acme/platform', environment: 'production' },
    });
    const logged = jest.spyOn(logger, 'info');
    try {
      const token = await issuer.mint({
        audience: 'why-aud',
        subject: 'repo:acme/platform:ref:refs/heads/main',
        claims: { repository: 'acme/platform', environment: 'staging' },
      });
      expect(effectOf(await authorize(token))).toBe('Deny');
      const [, line] = logged.mock.calls.find(([message]) => message === 'token rejected')! as [
        string,
        Record<string, unknown>,
      ];
      expect(line).toMatchObject({
        reason: 'unknown',
        why: 'no-trust-matches',
        iss: issuer.url,
        aud: 'why-aud',
        sub: 'repo:acme/platform:ref:refs/heads/main',
      });
      // The closest trust first; the organization's other trust of this issuer wants another audience and repository_owner.
      expect((line.trusts as unknown[])[0]).toEqual({ trust: why.trustId, failed: ['environment'] });
      expect(line.trusts).toEqual(
        expect.arrayContaining([{ trust: expect.any(String), failed: ['aud', 'repository_owner'] }]),
      );
      const text = JSON.stringify(line);
      expect(text).not.toContain('staging'); // a claim's value, never
      expect(text).not.toContain(token.split('.')[2]!);

      logged.mockClear();
      const long = await signRaw(
        { alg: 'RS256', kid: issuer.keys[0]!.kid },
        good({ exp: Math.floor(Date.now() / 1000) + 25 * 3600 }),
        issuer.keys[0]!,
      );
      expect(effectOf(await authorize(long))).toBe('Deny');
      expect(logged.mock.calls.find(([message]) => message === 'token rejected')![1]).toMatchObject({
        why: 'invalid',
        iss: issuer.url,
        failed: ['lifetime'],
      });
    } finally {
      logged.mockRestore();
      await deleteTrust(why.trustId);
    }
  });

  it('a run-scoped trust binds the token to the run its claim names', async () => {
    const scoped = `${org}-run`;
    await createTrust({
      organization: scoped,
      issuer: issuer.url,
      audience: 'run-scoped',
      role: 'member',
      claims: {},
      runClaim: 'terraform_run_id',
    });
    const allowed = await authorize(await issuer.mint({ audience: 'run-scoped', claims: { terraform_run_id: RUN } }));
    expect(principalOf(allowed)).toMatchObject({ grants: { [scoped]: 'member' }, runs: { [scoped]: RUN } });
    // No run claim, or one that is not a run id: the trust does not match.
    expect(effectOf(await authorize(await issuer.mint({ audience: 'run-scoped' })))).toBe('Deny');
    expect(
      effectOf(
        await authorize(await issuer.mint({ audience: 'run-scoped', claims: { terraform_run_id: 'run-../../x' } })),
      ),
    ).toBe('Deny');
  });
});

/**
 * The authorizer's answer to a good token of an issuer that `serve` answers for (on 127.0.0.1,
 * trusted by an owner trust for the time of the call): its discovery, then its keys.
 */
async function authorizeWithIssuer(serve: (request: IncomingMessage, response: ServerResponse, url: string) => void) {
  let url = '';
  const server = createHttpServer((request, response) => serve(request, response, url)).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const trust = await createTrust({
    organization: org,
    issuer: url,
    audience: 'tfc-tags-comments',
    role: 'owner',
    claims: {},
  });
  try {
    return await authorize(await signRaw({ alg: 'RS256', kid: issuer.keys[0]!.kid }, claims(url), issuer.keys[0]!));
  } finally {
    await deleteTrust(trust.trustId);
    server.closeAllConnections();
    server.close();
  }
}

/** The discovery document naming `url` and its `/jwks`, or what `otherwise` answers. */
function serveDiscoveryOr(request: IncomingMessage, response: ServerResponse, url: string, otherwise: () => void) {
  if (request.url === '/.well-known/openid-configuration')
    response.end(JSON.stringify({ issuer: url, jwks_uri: `${url}/jwks` }));
  else otherwise();
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
