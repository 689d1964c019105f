import { describe, expect, it } from '@jest/globals';
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { createToken, findToken, listTokens, revokeToken } from '#shared/store/tokens';
import { authenticate } from '#shared/auth/operations';
import { hashToken, newTokenSecret } from '#shared/auth/token-secret';
import { handler as authorizer, wholeApiArn } from '#functions/authorizer';
import { expectWith } from '../support/expect-with';

const METHOD_ARN = 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/GET/api/v2/runs/run-x/comments';
const authorizerEvent = (authorization?: string) =>
  ({
    type: 'REQUEST',
    methodArn: METHOD_ARN,
    headers: authorization === undefined ? {} : { Authorization: authorization },
  }) as unknown as APIGatewayRequestAuthorizerEvent;

describe('token store (DynamoDB Local)', () => {
  it('stores only a hash of the token, with subject, grants and times', async () => {
    const { record, token } = await createToken({ subject: 'user-alice', grants: { acme: 'owner' } });
    expect(token).toMatch(/^tfcapi_[A-Za-z0-9]{56}$/);
    expect(record.tokenId).toMatch(/^at-[A-Za-z0-9]{16}$/);
    const stored = await findToken(record.tokenId);
    expect(stored).toMatchObject({ subject: 'user-alice', grants: { acme: 'owner' }, tokenHash: hashToken(token) });
    expect(JSON.stringify(stored)).not.toContain(token.slice(7));
  });

  it('lists and revokes tokens; revoking an unknown id says so', async () => {
    const { record } = await createToken({ subject: 'user-bob', grants: { acme: 'reader' } });
    expect((await listTokens()).map((t) => t.tokenId)).toContain(record.tokenId);
    expect(await revokeToken(record.tokenId)).toEqual({ ...record, revokedAt: expect.any(String) });
    expect((await findToken(record.tokenId))?.revokedAt).toMatch(/Z$/);
    expect(await revokeToken('at-AAAAAAAAAAAAAAAA')).toBe('not-found');
  });
});

describe('authentication', () => {
  it('turns a live bearer token into its principal', async () => {
    const { record, token } = await createToken({ subject: 'user-carol', grants: { acme: 'member', other: 'reader' } });
    expect(await authenticate(`Bearer ${token}`)).toEqual({
      subject: 'user-carol',
      tokenId: record.tokenId,
      grants: { acme: 'member', other: 'reader' },
    });
    expect(await authenticate(`bearer  ${token}`)).toBeDefined();
  });

  it('rejects missing, other-scheme, malformed, forged, revoked and expired tokens', async () => {
    const live = await createToken({ subject: 'u', grants: { acme: 'owner' } });
    const revoked = await createToken({ subject: 'u', grants: { acme: 'owner' } });
    await revokeToken(revoked.record.tokenId);
    const expired = await createToken({
      subject: 'u',
      grants: { acme: 'owner' },
      expiresAt: new Date(Date.now() - 1000).toISOString(),
    });
    const forged = `${live.token.slice(0, -4)}AAAA`;
    for (const header of [
      undefined,
      '',
      `Basic ${live.token}`,
      'Bearer',
      'Bearer nonsense',
      `Bearer ${forged}`,
      `Bearer ${revoked.token}`,
      `Bearer ${expired.token}`,
      `Bearer ${live.token} extra`,
    ]) {
      expectWith(await authenticate(header), String(header)).toBeUndefined();
    }
  });

  it('rejects the token with any single character of its secret changed', async () => {
    const { token } = await createToken({ subject: 'u', grants: { acme: 'owner' } });
    const secretStart = token.length - 40;
    for (let i = secretStart; i < token.length; i += 3) {
      const changed = `${token.slice(0, i)}${token[i] === 'A' ? 'B' : 'A'}${token.slice(i + 1)}`;
      expectWith(await authenticate(`Bearer ${changed}`), `position ${i}`).toBeUndefined();
    }
  });

  it('honours a future expiry until it passes', async () => {
    const expiresAt = new Date(Date.now() + 60_000);
    const { token } = await createToken({
      subject: 'u',
      grants: { acme: 'owner' },
      expiresAt: expiresAt.toISOString(),
    });
    expect(await authenticate(`Bearer ${token}`)).toBeDefined();
    expect(await authenticate(`Bearer ${token}`, new Date(expiresAt.getTime() + 1))).toBeUndefined();
  });
});

describe('authorizer function', () => {
  it('allows the whole API, not just the method, and passes the principal as context', async () => {
    const { record, token } = await createToken({ subject: 'user-dave', grants: { acme: 'owner' } });
    const result = await authorizer(authorizerEvent(`Bearer ${token}`));
    expect(result.principalId).toBe('user-dave');
    expect(result.policyDocument.Statement).toEqual([
      {
        Action: 'execute-api:Invoke',
        Effect: 'Allow',
        Resource: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/*',
      },
    ]);
    expect(JSON.parse(result.context!.principal as string)).toEqual({
      subject: 'user-dave',
      tokenId: record.tokenId,
      grants: { acme: 'owner' },
    });
    expect(JSON.stringify(result)).not.toContain(token);
  });

  it("denies the whole API (API Gateway answers 401) for anything but a live token, without failing, with the 401's detail", async () => {
    const revoked = await createToken({ subject: 'u', grants: { acme: 'owner' } });
    await revokeToken(revoked.record.tokenId);
    const expired = await createToken({
      subject: 'u',
      grants: { acme: 'owner' },
      expiresAt: '2020-01-01T00:00:00.000Z',
    });
    const cases: Array<[string | undefined, string, string]> = [
      [undefined, 'malformed', 'no Authorization header: send Authorization: Bearer <token>'],
      ['Basic dXNlcjpwYXNz', 'malformed', 'not a Bearer token: send Authorization: Bearer <token>'],
      ['Bearer', 'malformed', 'not a Bearer token: send Authorization: Bearer <token>'],
      // The metric keeps the reason; the client reads one text for every token it cannot use.
      ['Bearer tfcapi_nope', 'malformed', 'token not accepted: it is unknown, revoked or expired'],
      [`Bearer ${newTokenSecret().token}`, 'unknown', 'token not accepted: it is unknown, revoked or expired'],
      [`Bearer ${revoked.token}`, 'revoked', 'token not accepted: it is unknown, revoked or expired'],
      [`Bearer ${expired.token}`, 'expired', 'token not accepted: it is unknown, revoked or expired'],
    ];
    for (const [header, reason, detail] of cases) {
      const result = await authorizer(authorizerEvent(header));
      expect(result.policyDocument.Statement).toEqual([
        {
          Action: 'execute-api:Invoke',
          Effect: 'Deny',
          Resource: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/*',
        },
      ]);
      expectWith(result.context, String(header)).toEqual({ reason, detail });
    }
  });

  it('scopes the policy to the API and stage of the method ARN', () => {
    expect(wholeApiArn('arn:aws:execute-api:us-east-1:1:api/dev/PATCH/api/v2/reserved-tags/rtk-1')).toBe(
      'arn:aws:execute-api:us-east-1:1:api/dev/*',
    );
  });
});
