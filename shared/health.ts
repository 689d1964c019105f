import type { Route } from './routes';

/**
 * The deep health check of a multi-Region stage (docs/deploying.md, Three Regions): each Region's
 * Route 53 health check calls it on that Region's own endpoint, and it answers 200 only when the
 * Region can serve: API Gateway, Lambda and one strongly consistent read of the Region's replica
 * of the global table. A strongly consistent read in a multi-Region strong consistency (MRSC)
 * replica fails when that replica cannot serve the latest data, so this fails when the Region
 * cannot serve, not only when API Gateway is down.
 *
 * Not in the route table (shared/routes.ts): a single-Region stage has no health check and keeps
 * its template; the multi-Region stacks add this route (infra/cdk/regions.ts).
 */
export const HEALTH_FUNCTION = 'health';

/** The one item read: it never exists, and its partition is no other item's (see PARTITION in shared/store/keys.ts). */
export const HEALTH_PARTITION = 'HEALTH';
export const HEALTH_KEY = { PK: HEALTH_PARTITION, SK: HEALTH_PARTITION } as const;

export const HEALTH_ROUTE: Route = {
  method: 'GET',
  operationId: 'health',
  path: '/health',
  function: HEALTH_FUNCTION,
  role: null,
  table: { actions: ['dynamodb:GetItem'], partitions: [HEALTH_PARTITION] },
};
