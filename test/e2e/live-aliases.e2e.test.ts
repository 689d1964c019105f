import { describe, expect, it } from '@jest/globals';
import { AUTHORIZER_FUNCTION, routes } from '#shared/routes';
import { constructId } from '#infra/cdk/stack';
import { tokenFor } from '../support/api';
import { useLocalStack } from '../support/local-stack';
import { expectWith } from '../support/expect-with';

/**
 * The synthesized stack, served locally: every route reaches its function through the `live`
 * alias the template gives API Gateway (the version it points at, not $LATEST). How a burst is
 * sized against the reservations is tested on the deployed stages' template (test/infra/
 * deployments.test.ts) and, as the gateway and Lambda answer it, in test/e2e/emulator/api-gateway.e2e.test.ts.
 */
const local = useLocalStack();
const ORG = 'deployments-org';

/** The function's logical id in the template (`reserved-tag-keys/create` → `ReservedTagKeysCreateFunction…`). */
const logicalIdOf = (name: string) =>
  [...local.stack().lambda.functions.keys()].find((id) => id.startsWith(constructId(name)))!;
/** A concrete path for a route: each `{parameter}` some value. */
const concrete = (path: string) => path.replace('{organization_name}', ORG).replace(/\{\w+\}/g, 'x-1');

describe('what serves each route', () => {
  it('is the live alias of its function, resolved to the version it points at, never $LATEST; the authorizer’s too', async () => {
    const token = await tokenFor({ [ORG]: 'owner' }, 'user-deployments');
    const { lambda } = local.stack();
    for (const route of routes) {
      const before = lambda.invocations.length;
      const response = await local.api.request(route.method, concrete(route.path), {
        ...(route.role === null ? {} : { token }),
        ...(route.method === 'POST' || route.method === 'PATCH' ? { body: '{}' } : {}),
      });
      // Whatever the function answers (a 404, a 400, a 401 for an unsigned notification), it ran.
      expectWith(response.status, `${route.method} ${route.path}`).toBeLessThan(500);
      const ran = lambda.invocations.slice(before);
      expectWith(
        ran.filter((i) => i.function === logicalIdOf(route.function)),
        `${route.method} ${route.path}`,
      ).toEqual([{ function: logicalIdOf(route.function), qualifier: 'live', version: '1' }]);
      for (const invocation of ran) expect(invocation).toMatchObject({ qualifier: 'live', version: '1' });
    }
    expect(lambda.invocations).toContainEqual({
      function: logicalIdOf(AUTHORIZER_FUNCTION),
      qualifier: 'live',
      version: '1',
    });
    expect(lambda.invocations.filter((i) => i.qualifier === '$LATEST')).toEqual([]);
  });
});
