import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { createTrust, listTrusts } from '#shared/store/trusts';
import { claims, signRaw, startTestIssuer, type TestIssuer } from '../support/oidc';
import { freePort } from '../support/processes';
import { admin, jsonLine, startAdmin } from '../support/admin-cli';
import { expectWith } from '../support/expect-with';

const deployed = () => ({
  TABLE_NAME: process.env.TABLE_NAME,
  AWS_ENDPOINT_URL_DYNAMODB: process.env.AWS_ENDPOINT_URL_DYNAMODB,
});
const HCP = 'https://app.terraform.io';

describe('npm run admin -- trust (against a table, as after a deploy)', () => {
  it('creates a trust (--json names its id), lists it, deletes it, saying how long cached answers last', async () => {
    const created = await admin(
      [
        'trust',
        'create',
        '--org',
        'trust-org',
        '--issuer',
        HCP,
        '--audience',
        'tfc-tags-comments',
        '--role',
        'member',
        '--claim',
        'terraform_organization_id=org-ABC',
        '--claim',
        'terraform_run_phase=apply',
        '--run-claim',
        'terraform_run_id',
        '--json',
      ],
      deployed(),
    );
    expectWith(created.code, created.output).toBe(0);
    const trust = JSON.parse(created.output.split('\n').find((line) => line.startsWith('{'))!);
    expect(trust).toMatchObject({
      trustId: expect.stringMatching(/^trust-[A-Za-z0-9]{16}$/),
      organization: 'trust-org',
      issuer: HCP,
      audience: 'tfc-tags-comments',
      role: 'member',
      claims: { terraform_organization_id: 'org-ABC', terraform_run_phase: 'apply' },
      runClaim: 'terraform_run_id',
    });
    expect((await listTrusts('trust-org')).map((t) => t.trustId)).toContain(trust.trustId);
    // The same trust again (its claims in another order): named, not doubled.
    const twin = await admin(
      [
        'trust',
        'create',
        '--org',
        'trust-org',
        '--issuer',
        HCP,
        '--audience',
        'tfc-tags-comments',
        '--role',
        'member',
        '--claim',
        'terraform_run_phase=apply',
        '--claim',
        'terraform_organization_id=org-ABC',
        '--run-claim',
        'terraform_run_id',
      ],
      deployed(),
    );
    expectWith(twin.code, twin.output).toBe(0);
    expect(twin.output).toContain(`The organization already has this trust: ${trust.trustId}`);
    expect((await listTrusts('trust-org')).filter((t) => t.issuer === HCP)).toHaveLength(1);

    const listed = await admin(['trust', 'list', '--org', 'trust-org'], deployed());
    const row = listed.output.split('\n').find((line) => line.startsWith(trust.trustId))!;
    expect(row.split(/\s{2,}/).slice(0, 6)).toEqual([
      trust.trustId,
      'member',
      HCP,
      'tfc-tags-comments',
      'terraform_organization_id=org-ABC,terraform_run_phase=apply',
      'terraform_run_id',
    ]);
    const listedJson = jsonLine((await admin(['trust', 'list', '--org', 'trust-org', '--json'], deployed())).output);
    expect(listedJson.trusts.map((t: { trustId: string }) => t.trustId)).toContain(trust.trustId);

    const deleted = await admin(['trust', 'delete', trust.trustId], deployed());
    expectWith(deleted.code, deleted.output).toBe(0);
    expect(deleted.output).toContain(`Deleted trust ${trust.trustId}`);
    expect(deleted.output).toMatch(
      /may still accept tokens it accepted for up to authorizerCacheTtlSeconds \(60 s by default\)/,
    );
    expect((await listTrusts('trust-org')).map((t) => t.trustId)).not.toContain(trust.trustId);
    const again = await admin(['trust', 'delete', trust.trustId, '--json'], deployed());
    expect(again.code).toBe(2);
    expect(again.output).toContain(`{"error":"no trust ${trust.trustId} (trust list --org ORG shows the ids)"}`);
  }, 60_000);

  it.each<[string[], string]>([
    [['--role', 'admin'], '--role must be one of reader, member, owner, not admin'],
    [['--audience', ''], '--audience is required'],
    [
      ['--issuer', 'http://127.0.0.1:3001'],
      'an http:// issuer is accepted only by the local stack (stage local): a deployed stage needs https://',
    ],
    [['--issuer', 'http://idp.example.com'], 'the issuer must be an https:// URL, not http://idp.example.com'],
    [['--issuer', 'https://idp.example.com/#x'], 'the issuer must have no query or fragment'],
    [['--claim', 'no-equals-sign'], '--claim takes NAME=VALUE, not "no-equals-sign"'],
    [
      ['--claim', '__proto__=x'],
      'a claim name must be a letter or _ then up to 127 letters, digits, or _ . : - (not "__proto__")',
    ],
    [
      ['--run-claim', 'bad name'],
      '--run-claim: a claim name must be a letter or _ then up to 127 letters, digits, or _ . : - (not "bad name")',
    ],
    // Near misses of the two issuers everyone uses: a trust that no token would ever match.
    ...(
      [
        ['https://token.actions.githubusercontent.com/', 'https://token.actions.githubusercontent.com'],
        ['https://app.terraform.io/', 'https://app.terraform.io'],
        ['https://app.terraform.io/.well-known/openid-configuration', 'https://app.terraform.io'],
        ['https://github.com', 'https://token.actions.githubusercontent.com'],
        [
          'https://token.actions.githubusercontent.com/acme-enterprise/',
          'https://token.actions.githubusercontent.com/acme-enterprise',
        ],
      ] as const
    ).map(([issuer, meant]): [string[], string] => [
      ['--issuer', issuer],
      `--issuer ${issuer} would match no token (a token's iss must equal it exactly): did you mean ${meant}? ` +
        "GitHub Actions' issuer is https://token.actions.githubusercontent.com, HCP Terraform's https://app.terraform.io (no trailing slash); " +
        '--force creates the trust as given',
    ]),
  ])(
    'refuses %j in one line, exit 2, writing nothing',
    async (change, line) => {
      const base: Record<string, string> = {
        '--org': 'refused-org',
        '--issuer': HCP,
        '--audience': 'aud',
        '--role': 'reader',
        '--claim': 'terraform_organization_id=org-X',
      };
      for (let i = 0; i < change.length; i += 2) base[change[i]!] = change[i + 1]!;
      const result = await admin(['trust', 'create', ...Object.entries(base).flat()], deployed());
      expectWith(result.code, result.output).toBe(2);
      expect(result.output.split('\n')).toContain(`admin: ${line}`);
      expect(await listTrusts('refused-org')).toEqual([]);
    },
    30_000,
  );

  it('creates a near miss with --force, and the issuers that only look like one without it', async () => {
    const create = (issuer: string, ...more: string[]) =>
      admin(
        [
          'trust',
          'create',
          '--org',
          'forced-org',
          '--issuer',
          issuer,
          '--audience',
          'aud',
          '--role',
          'reader',
          '--claim',
          'repository_owner=acme',
          ...more,
        ],
        deployed(),
      );
    const forced = await create('https://token.actions.githubusercontent.com/', '--force');
    expectWith(forced.code, forced.output).toBe(0);
    // A GitHub enterprise's own issuer, and HCP Terraform Europe's: issuers of their own.
    for (const issuer of [
      'https://token.actions.githubusercontent.com/acme-enterprise',
      'https://app.eu.terraform.io',
    ]) {
      const created = await create(issuer);
      expectWith(created.code, created.output).toBe(0);
    }
    expect((await listTrusts('forced-org')).map((t) => t.issuer).sort()).toEqual([
      'https://app.eu.terraform.io',
      'https://token.actions.githubusercontent.com/',
      'https://token.actions.githubusercontent.com/acme-enterprise',
    ]);
  }, 60_000);

  it("refuses a trust that pins no claim: the audience alone is the caller's to choose", async () => {
    const result = await admin(
      ['trust', 'create', '--org', 'refused-org', '--issuer', HCP, '--audience', 'aud', '--role', 'reader'],
      deployed(),
    );
    expect(result.code).toBe(2);
    expect(result.output).toContain('pin at least one claim with --claim NAME=VALUE');
  }, 30_000);
});

describe('npm run admin -- issuer token (the local issuer)', () => {
  it('mints a token of the local issuer with the claims asked for, without opening a store', async () => {
    const env = {
      DATA_DIR: mkdtempSync(join(tmpdir(), 'tfc-issuer-')),
      ISSUER_PORT: String(await freePort()),
      DDB_PORT: String(await freePort()),
      TABLE_NAME: undefined,
      AWS_ENDPOINT_URL_DYNAMODB: undefined,
    };
    const result = await admin(
      [
        'issuer',
        'token',
        '--audience',
        'tfc-tags-comments',
        '--subject',
        'run-phase',
        '--claim',
        'terraform_run_id=run-AAAAAAAAAAAAAAAA',
        '--alg',
        'ES256',
      ],
      env,
    );
    expectWith(result.code, result.output).toBe(0);
    const token = result.output.trim().split('\n').at(-1)!;
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'ES256', typ: 'JWT', kid: expect.any(String) });
    expect(decodeJwt(token)).toMatchObject({
      iss: `http://127.0.0.1:${env.ISSUER_PORT}`,
      aud: 'tfc-tags-comments',
      sub: 'run-phase',
      terraform_run_id: 'run-AAAAAAAAAAAAAAAA',
    });
    expect(result.output).not.toContain('DynamoDB Local');
  }, 30_000);

  it('refuses to mint for a deployed table', async () => {
    const result = await admin(['issuer', 'token', '--audience', 'x'], deployed());
    expect(result.code).toBe(2);
    expect(result.output).toContain('the local issuer signs for the local stack only');
  }, 30_000);
});

describe('npm run admin -- trust check (a JWT on stdin)', () => {
  let issuer: TestIssuer;
  beforeAll(async () => {
    issuer = await startTestIssuer();
  });
  afterAll(async () => {
    await issuer.close();
  });
  const RUN = 'run-CheckCheckCheck1';
  /** As `printf '%s' "$JWT" | npm run admin -- trust check …`; the test's issuer is on 127.0.0.1, which only a local authorizer may fetch. */
  async function check(org: string, token: string, ...more: string[]) {
    const env = { ...deployed(), WORKLOAD_IDENTITY_LOOPBACK_ISSUERS: 'allowed' };
    const proc = startAdmin(['trust', 'check', '--org', org, ...more], env);
    proc.child.stdin.end(`${token}\n`);
    const code = await proc.exited;
    const output = proc.output();
    for (const part of token.split('.')) expect(output).not.toContain(part); // never the token
    return { code, output, lines: output.split('\n') };
  }
  const hcp = (phase: string, changes: Record<string, unknown> = {}) =>
    signRaw(
      { alg: 'RS256', kid: issuer.keys[0]!.kid },
      claims(issuer.url, {
        sub: `organization:acme:project:Default Project:workspace:networking:run_phase:${phase}`,
        terraform_workspace_id: 'ws-net',
        terraform_run_phase: phase,
        terraform_run_id: RUN,
        ...changes,
      }),
      issuer.keys[0]!,
    );

  it('names the trust that accepts the token, or for each trust what did not match (exit 1)', async () => {
    const apply = await createTrust({
      organization: 'check-org',
      issuer: issuer.url,
      audience: 'tfc-tags-comments',
      role: 'member',
      claims: { terraform_workspace_id: 'ws-net', terraform_run_phase: 'apply' },
      runClaim: 'terraform_run_id',
    });
    const other = await createTrust({
      organization: 'check-org',
      issuer: issuer.url,
      audience: 'other-aud',
      role: 'owner',
      claims: { terraform_workspace_id: 'ws-net' },
    });

    const accepted = await check('check-org', await hcp('apply'));
    expectWith(accepted.code, accepted.output).toBe(0);
    expect(accepted.lines).toContain(
      `Accepted by ${apply.trustId}: member of check-org, only on run ${RUN} (its terraform_run_id).`,
    );
    expect(accepted.output).toMatch(
      /^Token: iss "http:\/\/127\.0\.0\.1:\d+", aud "tfc-tags-comments", sub "organization:acme:.*:run_phase:apply", exp \d{4}-.* UTC\.$/m,
    );

    const plan = await check('check-org', await hcp('plan'));
    expectWith(plan.code, plan.output).toBe(1);
    expect(plan.lines).toEqual(
      expect.arrayContaining([
        'Verified (signature, times), but no trust of check-org accepts it:',
        `  ${apply.trustId} (member): terraform_run_phase is "plan", the trust wants "apply"`,
        `  ${other.trustId} (owner): aud is "tfc-tags-comments", the trust wants "other-aud"`,
      ]),
    );
    // HCP Terraform's module-test tokens: no workspace, a trun- id in terraform_run_id.
    const test = await check(
      'check-org',
      await hcp('apply', { terraform_workspace_id: undefined, terraform_run_id: 'trun-AbCdEf123456' }),
    );
    expect(test.lines).toContain(
      `  ${apply.trustId} (member): terraform_workspace_id is missing, the trust wants "ws-net"; ` +
        'terraform_run_id is "trun-AbCdEf123456", the trust wants a run id (run- and 16 letters or digits) in its run claim',
    );

    const json = await check('check-org', await hcp('plan'), '--json');
    expect(JSON.parse(json.lines.find((line) => line.startsWith('{'))!)).toMatchObject({
      accepted: false,
      why: 'no-trust-matches',
      trusts: expect.arrayContaining([{ trustId: apply.trustId, failed: ['terraform_run_phase'] }]),
    });
  }, 60_000);

  it('says why a token is refused before any trust is tried: another issuer spelling, a lifetime over 24 h', async () => {
    await createTrust({
      organization: 'check-early',
      issuer: issuer.url,
      audience: 'tfc-tags-comments',
      role: 'reader',
      claims: { terraform_workspace_id: 'ws-net' },
    });
    const slash = await check('check-early', await hcp('apply', { iss: `${issuer.url}/` }));
    expectWith(slash.code, slash.output).toBe(1);
    expect(slash.lines).toContain(
      `No trust of check-early names the issuer "${issuer.url}/": a token's iss must equal a trust's issuer exactly (a trailing slash is another issuer).`,
    );
    expect(slash.lines).toContain(`check-early's trusts name: ${issuer.url}`);

    const now = Math.floor(Date.now() / 1000);
    const long = await check('check-early', await hcp('apply', { iat: now, nbf: now, exp: now + 25 * 3600 }));
    expectWith(long.code, long.output).toBe(1);
    expect(long.lines).toContain(
      'Refused before any trust was tried: its lifetime (exp − iat) is 25.0 h, over the 24 h this service accepts.',
    );
  }, 60_000);

  it('refuses stdin that is not a JWT, in one line, exit 2', async () => {
    const result = await check('check-org', 'Bearer abc');
    expect(result.code).toBe(2);
    expect(result.lines).toContain(
      'admin: stdin is not a JWT (three base64url parts separated by dots); give the token alone, without "Bearer "',
    );
  }, 30_000);
});
