import type { Route } from './routes';

/**
 * The deep health check of a multi-Region stage (docs/deploying.md, Three Regions), called by each
 * Region's Route 53 health check on that Region's own endpoint: 200 only when API Gateway, Lambda
 * and one strongly consistent read of the Region's MRSC replica answer, and that read fails when
 * the replica cannot serve the latest data. Not in the route table (shared/routes.ts): the
 * multi-Region stacks add it, and stages that ask (infra/cdk/config.ts, healthRoute: the local
 * stage does), so a single-Region stage keeps its template.
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
