import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { registerNewRun } from '#shared/store/runs';
import { createTrust, deleteTrust } from '#shared/store/trusts';
import { CLOCK_LEEWAY_SECONDS } from '#shared/workload-identity/verify';
import { startLocalStack } from '#infra/local/local-stack';
import { errorBody, TestApi, tokenFor } from '../support/api';
import { localAssemblyVariant } from '../support/assembly-variant';
import { useLocalStack } from '../support/local-stack';
import { eventually } from '../support/processes';
import { claims, newIssuerKey, signRaw, startTestIssuer, unsignedToken, type TestIssuer } from '../support/oidc';
import { commentDocument, keyDocument } from '../support/documents';

/**
 * Workload identity as a platform team and an attacker meet it: an OpenID issuer of the test's own
 * on 127.0.0.1 (the local stage's authorizer may fetch loopback issuers), trusted per organization,
 * and its tokens sent as `Authorization: Bearer` through the local stack (WAF, API Gateway and its
 * authorizer cache, the functions' Lambda processes, IAM).
 */
const { api, logs, stack } = useLocalStack();
const ORG = 'wi-acme';
const AUDIENCE = 'tfc-tags-comments';
const WORKSPACE = { terraform_organization_id: 'org-WIACME', terraform_workspace_id: 'ws-networking' };
const unauthorized = errorBody(401, 'unauthorized', 'token not accepted: it is unknown, revoked or expired');
/** The authorizer cache TTL of the stack that shows a deleted trust's cached tokens refused once it has passed. */
const SHORT_TTL_SECONDS = 5;

let issuer: TestIssuer;
let run: string, otherRun: string;

beforeAll(async () => {
  issuer = await startTestIssuer();
  const runs = await Promise.all([registerNewRun(ORG, 'networking'), registerNewRun(ORG, 'app')]);
  [run, otherRun] = runs.map((r) => r.runId) as [string, string];
  await Promise.all([
    // A workspace's plan and apply phases may comment on any run of the organization…
    createTrust({
      organization: ORG,
      issuer: issuer.url,
      audience: AUDIENCE,
      role: 'member',
      claims: { ...WORKSPACE },
    }),
    // …an apply phase of another workspace only on its own run…
    createTrust({
      organization: ORG,
      issuer: issuer.url,
      audience: AUDIENCE,
      role: 'member',
      claims: { terraform_workspace_id: 'ws-app', terraform_run_phase: 'apply' },
      runClaim: 'terraform_run_id',
    }),
    // …and the platform repository's pipeline owns the organization's reserved tag keys.
    createTrust({
      organization: ORG,
      issuer: issuer.url,
      audience: AUDIENCE,
      role: 'owner',
      claims: { repository: 'acme/platform', ref: 'refs/heads/main' },
    }),
  ]);
});
afterAll(async () => {
  await issuer.close();
});

const hcpToken = (
  extra: Record<string, unknown> = {},
  subject = 'organization:wi-acme:project:Default Project:workspace:networking:run_phase:apply',
) => issuer.mint({ subject, claims: { ...WORKSPACE, terraform_run_phase: 'apply', ...extra } });

describe('a trusted workload signs in with its own token', () => {
  it("lists keys and comments as its trust's role allows, the comment created by the token's sub", async () => {
    const token = await hcpToken();
    expect((await api.get(`/organizations/${ORG}/reserved-tag-keys`, { token })).status).toBe(200);
    const created = await api.post(`/runs/${run}/comments`, {
      token,
      body: commentDocument('Plan approved by the apply phase'),
    });
    expect(created.status).toBe(201);
    expect(created.json.data.relationships['created-by'].data).toEqual({
      id: 'organization:wi-acme:project:Default Project:workspace:networking:run_phase:apply',
      type: 'users',
    });
    const shown = await api.get(`/comments/${created.json.data.id}`, { token });
    expect(shown.json.data.attributes.body).toBe('Plan approved by the apply phase');
    // member: no reserved tag key writes.
    const refused = await api.post(`/organizations/${ORG}/reserved-tag-keys`, { token, body: keyDocument('team') });
    expect(refused.status).toBe(403);
  });

  it('with ES256 too, and an owner trust may manage reserved tag keys; nothing in other organizations', async () => {
    const token = await issuer.mint({
      key: issuer.keys[1]!,
      subject: 'repo:acme/platform:ref:refs/heads/main',
      claims: { repository: 'acme/platform', ref: 'refs/heads/main' },
    });
    const created = await api.post(`/organizations/${ORG}/reserved-tag-keys`, {
      token,
      body: { data: { type: 'reserved-tag-keys', attributes: { key: `env-${Date.now()}` } } },
    });
    expect(created.status).toBe(201);
    expect((await api.get('/organizations/other-org/reserved-tag-keys', { token })).status).toBe(404);
  });

  it('keeps operator tokens working beside it', async () => {
    const token = await tokenFor({ [ORG]: 'reader' });
    expect((await api.get(`/runs/${run}/comments`, { token })).status).toBe(200);
  });
});

describe('a run-scoped trust', () => {
  const runToken = (runId: string) =>
    issuer.mint({
      subject: 'organization:wi-acme:workspace:app:run_phase:apply',
      claims: { terraform_workspace_id: 'ws-app', terraform_run_phase: 'apply', terraform_run_id: runId },
    });

  it('lets a run list, show and comment on itself', async () => {
    const token = await runToken(run);
    const created = await api.post(`/runs/${run}/comments`, {
      token,
      body: commentDocument('Applied by the run itself'),
    });
    expect(created.status).toBe(201);
    expect((await api.get(`/runs/${run}/comments`, { token })).status).toBe(200);
    expect((await api.get(`/comments/${created.json.data.id}`, { token })).status).toBe(200);
  });

  it('reaches no other run (404, as if it did not exist) and no reserved tag keys (403)', async () => {
    const token = await runToken(run);
    const elsewhere = await api.post(`/runs/${otherRun}/comments`, {
      token: await tokenFor({ [ORG]: 'member' }),
      body: commentDocument('on the other run'),
    });
    expect((await api.get(`/runs/${otherRun}/comments`, { token })).status).toBe(404);
    expect((await api.post(`/runs/${otherRun}/comments`, { token, body: commentDocument('not mine') })).status).toBe(
      404,
    );
    expect((await api.get(`/comments/${elsewhere.json.data.id}`, { token })).status).toBe(404);
    const keys = await api.get(`/organizations/${ORG}/reserved-tag-keys`, { token });
    expect(keys.status).toBe(403);
    expect(keys.json.errors[0].detail).toContain(`only on run ${run}`);
  });

  it('does not match a plan phase, or a token without the run claim', async () => {
    const plan = await issuer.mint({
      claims: { terraform_workspace_id: 'ws-app', terraform_run_phase: 'plan', terraform_run_id: run },
    });
    const noRun = await issuer.mint({ claims: { terraform_workspace_id: 'ws-app', terraform_run_phase: 'apply' } });
    for (const token of [plan, noRun])
      expect((await api.get(`/runs/${run}/comments`, { token })).json).toEqual(unauthorized);
  });
});

describe('hostile tokens get 401, never 2xx, never 5xx', () => {
  it.each<[string, () => Promise<string>]>([
    ['alg none', async () => unsignedToken({ kid: issuer.keys[0]!.kid }, claims(issuer.url, { ...WORKSPACE }))],
    ['expired', async () => issuer.mint({ claims: { ...WORKSPACE }, expiresInSeconds: -(CLOCK_LEEWAY_SECONDS + 5) })],
    ['another audience', async () => issuer.mint({ audience: 'elsewhere', claims: { ...WORKSPACE } })],
    ['a pinned claim that does not match', async () => hcpToken({ terraform_workspace_id: 'ws-other' })],
    [
      'an unpublished key with a jwk header',
      async () => {
        const attacker = await newIssuerKey('RS256');
        return signRaw(
          { alg: 'RS256', kid: attacker.kid, jwk: attacker.publicJwk },
          claims(issuer.url, { ...WORKSPACE }),
          attacker,
        );
      },
    ],
    [
      'the issuer with a trailing slash',
      async () =>
        signRaw(
          { alg: 'RS256', kid: issuer.keys[0]!.kid },
          claims(`${issuer.url}/`, { ...WORKSPACE }),
          issuer.keys[0]!,
        ),
    ],
    ['garbage in three parts', async () => 'abc.def.ghi'],
    ['a token of several KB', async () => hcpToken({ padding: 'x'.repeat(9000) })],
  ])('%s', async (_name, token) => {
    const answer = await api.get(`/runs/${run}/comments`, { token: await token() });
    expect(answer.status).toBe(401);
    expect(answer.json).toEqual(unauthorized);
  });
});

describe('keys and trusts over time', () => {
  it('an issuer that cannot be reached is a 503 with Retry-After, never an allow', async () => {
    const gone = await startTestIssuer();
    await createTrust({
      organization: ORG,
      issuer: gone.url,
      audience: AUDIENCE,
      role: 'owner',
      claims: { ...WORKSPACE },
    });
    const token = await gone.mint({ claims: { ...WORKSPACE } });
    await gone.close();
    const answer = await api.get(`/runs/${run}/comments`, { token });
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('a token used just before its exp is refused once exp and the leeway have passed, though the gateway cached its Allow', async () => {
    // Expired 25 s ago: within the 30 s leeway, so accepted, and the gateway caches the Allow for 60 s.
    const now = Math.floor(Date.now() / 1000);
    const token = await signRaw(
      { alg: 'RS256', kid: issuer.keys[0]!.kid, typ: 'JWT' },
      claims(issuer.url, { ...WORKSPACE, iat: now - 60, nbf: now - 60, exp: now - 25 }),
      issuer.keys[0]!,
    );
    expect((await api.get(`/runs/${run}/comments`, { token })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, (now - 25 + CLOCK_LEEWAY_SECONDS + 1) * 1000 - Date.now()));
    expect((await api.get(`/runs/${run}/comments`, { token })).json).toEqual(unauthorized);
  }, 20_000);

  it("a deleted trust's tokens are refused at once when new, and within the authorizer cache TTL when cached", async () => {
    // The stage's template with a shorter authorizer cache TTL (the stage's own, AUTHORIZER_CACHE_TTL_SECONDS,
    // is the template's: test/infra/api.test.ts): the same rule, in seconds rather than a minute of waiting.
    const assembly = await localAssemblyVariant('short-authorizer-cache', (resources) => {
      for (const r of Object.values(resources))
        if (r.Type === 'AWS::ApiGateway::Authorizer') r.Properties.AuthorizerResultTtlInSeconds = SHORT_TTL_SECONDS;
    });
    const short = await startLocalStack({
      assembly,
      dynamoDbEndpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB!,
      tableName: process.env.TABLE_NAME!,
      log: () => undefined,
    });
    try {
      const shortApi = new TestApi(short.url);
      const trust = await createTrust({
        organization: ORG,
        issuer: issuer.url,
        audience: 'deleted-soon',
        role: 'reader',
        claims: { ...WORKSPACE },
      });
      const cached = await issuer.mint({ audience: 'deleted-soon', claims: { ...WORKSPACE } });
      expect((await shortApi.get(`/runs/${run}/comments`, { token: cached })).status).toBe(200);
      const firstAllowed = Date.now();
      await deleteTrust(trust.trustId);
      const fresh = await issuer.mint({ audience: 'deleted-soon', claims: { ...WORKSPACE, n: 2 } });
      expect((await shortApi.get(`/runs/${run}/comments`, { token: fresh })).status).toBe(401);
      await new Promise((resolve) => setTimeout(resolve, firstAllowed + SHORT_TTL_SECONDS * 1000 + 500 - Date.now()));
      expect((await shortApi.get(`/runs/${run}/comments`, { token: cached })).status).toBe(401);
    } finally {
      await short.close();
      assembly.remove();
    }
  }, 120_000);

  it("the authorizer's trace names the trust and the sub, never the token", async () => {
    const subject = 'organization:wi-acme:workspace:networking:run_phase:traced';
    const token = await hcpToken({}, subject);
    const from = stack().traces.length;
    expect((await api.get(`/runs/${run}/comments`, { token })).status).toBe(200);
    let span: Record<string, any> | undefined;
    await eventually(
      () =>
        (span = stack()
          .traces.slice(from)
          .find((s) => s.name === '## authorizer' && s.annotations?.workload === subject)) !== undefined,
      5_000,
    );
    expect(span!.annotations).toEqual({
      route: 'authorizer',
      outcome: 'allowed',
      trust: expect.stringMatching(/^trust-[A-Za-z0-9]{16}$/),
      workload: subject,
    });
    const text = JSON.stringify(stack().xray.trace(span!.trace_id));
    for (const part of token.split('.')) expect(text).not.toContain(part);
  });

  it('logs name the trust and the sub, never the token', async () => {
    const token = await hcpToken({}, 'organization:wi-acme:workspace:networking:run_phase:logged');
    await api.get(`/runs/${run}/comments`, { token });
    await api.get(`/runs/${run}/comments`, { token: `${token.slice(0, -4)}AAAA` });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const text = logs.join('\n');
    const accepted = logs.find((line) => line.includes('token accepted') && line.includes('run_phase:logged'));
    expect(accepted).toMatch(/"tokenId":"trust-[A-Za-z0-9]{16}"/);
    expect(text).toMatch(/token rejected.*"why":"invalid"/);
    for (const part of token.split('.')) expect(text).not.toContain(part);
  });
});
