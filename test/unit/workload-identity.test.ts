import { describe, expect, it } from '@jest/globals';
import { authorize, organizationsWith, ROLES, type Principal } from '#shared/auth/principal';
import { Forbidden, NotFound } from '#shared/jsonapi/errors';
import { issuerFault } from '#shared/workload-identity/trust';
import { parseClaimPin } from '#infra/admin/trust-options';
import { looksLikeJwt } from '#shared/workload-identity/verify';

describe("a trust's issuer", () => {
  it.each([
    'https://app.terraform.io',
    'https://token.actions.githubusercontent.com',
    'https://tfe.example.com/tenant',
  ])('accepts %s', (issuer) => expect(issuerFault(issuer, { loopback: false })).toBeUndefined());

  it.each<[string, string]>([
    ['http://app.terraform.io', 'the issuer must be an https:// URL, not http://app.terraform.io'],
    ['ftp://x', 'the issuer must be an https:// URL, not ftp://x'],
    ['app.terraform.io', 'the issuer must be a URL (https://…), not app.terraform.io'],
    ['https://idp.example.com/?tenant=1', 'the issuer must have no query or fragment'],
    ['https://idp.example.com/#', 'the issuer must have no query or fragment'],
    ['https://user:pass@idp.example.com', 'the issuer must carry no user or password'],
    [
      'http://127.0.0.1:3001',
      'an http:// issuer is accepted only by the local stack (stage local): a deployed stage needs https://',
    ],
    ['http://localhost:3001', 'the issuer must be an https:// URL, not http://localhost:3001'],
    ['https://idp.example.com/a b', 'the issuer must be printable ASCII, without spaces'],
    ['https://bücher.example', 'the issuer must be printable ASCII, without spaces'],
    [`https://x.example/${'a'.repeat(600)}`, 'the issuer must be at most 512 characters'],
  ])('refuses %s', (issuer, fault) => expect(issuerFault(issuer, { loopback: false })).toBe(fault));

  it('accepts a loopback http:// issuer where loopback is allowed (the local stage) only', () => {
    expect(issuerFault('http://127.0.0.1:3001', { loopback: true })).toBeUndefined();
    expect(issuerFault('http://[::1]:3001', { loopback: true })).toBeUndefined();
    expect(issuerFault('http://10.0.0.1:3001', { loopback: true })).toBe(
      'the issuer must be an https:// URL, not http://10.0.0.1:3001',
    );
  });
});

describe('a pinned claim', () => {
  it('is NAME=VALUE, the value compared as it is (it may hold =)', () => {
    expect(parseClaimPin('terraform_run_phase=apply')).toEqual(['terraform_run_phase', 'apply']);
    expect(parseClaimPin('job_workflow_ref=acme/ci/.github/workflows/x.yml@refs/heads/main')).toEqual([
      'job_workflow_ref',
      'acme/ci/.github/workflows/x.yml@refs/heads/main',
    ]);
    expect(parseClaimPin('a=b=c')).toEqual(['a', 'b=c']);
  });

  it.each(['=value', 'name', 'name=', '__proto__=x', '1st=x', 'bad name=x'])('refuses %j', (pin) => {
    expect(typeof parseClaimPin(pin)).toBe('string');
  });
});

describe('a JWT is told from an operator token by its shape', () => {
  it.each(['eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln', 'a.b.', 'a.b.c'])('%s is a JWT', (t) =>
    expect(looksLikeJwt(t)).toBe(true),
  );
  it.each([
    'tfcapi_AAAAAAAAAAAAAAAABBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB',
    'a.b',
    'a.b.c.d',
    'a..c',
    'a.b+c.d',
    '.b.c',
  ])('%s is not', (t) => expect(looksLikeJwt(t)).toBe(false));
});

describe('a run-scoped principal', () => {
  const RUN = 'run-AAAAAAAAAAAAAAAA';
  const scoped: Principal = {
    subject: 'run-phase',
    tokenId: 'trust-x',
    grants: { acme: 'member', other: 'reader' },
    runs: { acme: RUN },
  };

  it('acts on its run as its role allows', () => {
    expect(authorize(scoped, 'acme', 'member', RUN)).toBe('member');
    expect(() => authorize(scoped, 'acme', 'owner', RUN)).toThrow(Forbidden);
  });

  it('sees no other run of the organization (404) and nothing but runs (403)', () => {
    expect(() => authorize(scoped, 'acme', 'reader', 'run-BBBBBBBBBBBBBBBB')).toThrow(NotFound);
    expect(() => authorize(scoped, 'acme', 'reader')).toThrow(Forbidden);
  });

  it('is bound only where its trust bound it', () => {
    expect(authorize(scoped, 'other', 'reader', 'run-BBBBBBBBBBBBBBBB')).toBe('reader');
    expect(authorize(scoped, 'other', 'reader')).toBe('reader');
  });
});

describe('the organizations a principal may act on (a delete reads their key counters)', () => {
  it('are exactly those where authorize accepts the organization itself at that role', () => {
    const principal: Principal = {
      subject: 's',
      tokenId: 't',
      grants: {
        acme: 'owner',
        beta: 'member',
        gamma: 'reader',
        bound: 'owner',
        'Not An Org!': 'owner',
        odd: 'admin' as never,
      },
      runs: { bound: 'run-AAAAAAAAAAAAAAAA' },
    };
    for (const minimum of ROLES) {
      const accepted = Object.keys(principal.grants).filter((organization) => {
        try {
          authorize(principal, organization, minimum);
          return true;
        } catch {
          return false;
        }
      });
      expect(organizationsWith(principal, minimum)).toEqual(accepted);
    }
    expect(organizationsWith(principal, 'owner')).toEqual(['acme']);
  });
});
