import { describe, expect, it } from '@jest/globals';
import type { Principal } from '#shared/auth/principal';
import { lambdaContext, routeInvocation } from '../support/lambda-events';

/**
 * API Gateway may hand a function an authorizer answer it cached before the token expired (for up
 * to the stage's TTL). The chain reads the expiry the authorizer put in the context and refuses
 * the request itself, whatever that cached Allow says.
 */
async function listKeysAs(principal: Principal) {
  const { handler, event } = await routeInvocation({
    function: 'reserved-tag-keys/list',
    path: '/organizations/expiry-org/reserved-tag-keys',
    principal,
  });
  const response = await handler(event, lambdaContext('reserved-tag-keys/list'));
  return { status: response.statusCode, body: JSON.parse(response.body) };
}

const owner = (expiresAt?: string): Principal => ({
  subject: 'user-expiry',
  tokenId: 'at-expiryexpiryexp',
  grants: { 'expiry-org': 'owner' },
  ...(expiresAt ? { expiresAt } : {}),
});

describe('an authorizer context whose token has expired', () => {
  it('is refused with 401 by the function, though the context allows the organization', async () => {
    for (const expiresAt of [new Date(Date.now() - 1).toISOString(), new Date(Date.now() - 86_400_000).toISOString()]) {
      expect(await listKeysAs(owner(expiresAt))).toEqual({
        status: 401,
        body: {
          errors: [
            { status: '401', title: 'unauthorized', detail: 'token not accepted: it is unknown, revoked or expired' },
          ],
        },
      });
    }
  });

  it('is served until that instant, and always when the token never expires', async () => {
    expect((await listKeysAs(owner(new Date(Date.now() + 60_000).toISOString()))).status).toBe(200);
    expect((await listKeysAs(owner())).status).toBe(200);
  });
});
