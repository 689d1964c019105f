import { API_BASE_PATH } from '#shared/config';
import { startControl } from './control';
import { healthCheckLine, startFrontRouter, type FrontRouter, type HealthCheckSettings } from './front-router';
import type { LocalStack } from './local-stack';
import { startRegions, type LocalRegions, type LocalRegionsOptions } from './regions';

/**
 * `REGIONS=us-east-1,us-east-2 npm start`: the Regions (infra/local/regions.ts) over the one
 * DynamoDB Local, the health-checked front on PORT (infra/local/front-router.ts) and the control
 * endpoint the admin CLI's `region fail|recover` calls (infra/local/control.ts), wired together.
 */
export interface MultiRegion {
  /** The front's address: what clients are given. */
  url: string;
  controlUrl: string;
  regions: LocalRegions;
  /** The health-checked front: its health of each Region, and its changes. */
  front: FrontRouter;
  /** The first Region's, for npm start's lines (each Region runs its own). */
  schedules: LocalStack['schedules'];
  unevaluatedRuleGroups: string[];
  /** What npm start prints about the Regions, the front and its health checks. */
  lines(): string[];
  close(): Promise<void>;
}

export async function startMultiRegion(options: {
  port: number;
  names: string[];
  healthCheck: HealthCheckSettings;
  stack: LocalRegionsOptions['stack'];
  onRequest?: LocalRegionsOptions['onRequest'];
  /** One line per change of a Region's health, as the front decided it. */
  onHealthChange?(line: string): void;
}): Promise<MultiRegion> {
  // Every Region answers with the front's host in its links, as Regions behind one custom domain do.
  const { path } = options.healthCheck;
  const regions = await startRegions({
    names: options.names,
    stack: { ...options.stack, publicHost: `127.0.0.1:${options.port}` },
    // The health checks' own passing requests are left out of the access lines: one per Region per interval.
    ...(options.onRequest
      ? {
          onRequest: (region, entry) => {
            if (!(entry.path === path && entry.status < 400)) options.onRequest!(region, entry);
          },
        }
      : {}),
  });
  let front;
  try {
    front = await startFrontRouter({
      regions: regions.regions.map(({ name, url }) => ({ name, url })),
      port: options.port,
      settings: options.healthCheck,
      onChange: ({ region, healthy }) =>
        options.onHealthChange?.(
          `HEALTH ${region} ${healthy ? 'healthy' : 'unhealthy'}: the front routes to ${front!.current()}`,
        ),
    });
  } catch (error) {
    await regions.close();
    throw error;
  }
  const control = await startControl(regions, front);
  const first = regions.regions[0]!.stack;
  return {
    url: front.url,
    controlUrl: control.url,
    regions,
    front,
    schedules: first.schedules,
    unevaluatedRuleGroups: first.unevaluatedRuleGroups,
    lines: () => [
      `Regions ${options.names.join(', ')} over one DynamoDB Local (the MRSC global table: concurrent writes of one item from two Regions get ReplicatedWriteConflictException):`,
      ...regions.regions.map((r) => `  ${r.name} ${r.url}${API_BASE_PATH}`),
      `Front ${front.url}${API_BASE_PATH} routes to the first healthy Region (${options.names[0]} while it is healthy), as failover records would`,
      `${healthCheckLine(options.healthCheck)} (their passing requests print no access line; a HEALTH line when a Region's health changes)`,
      `Fail and recover a Region: npm run admin -- region fail ${options.names[0]}, region recover ${options.names[0]} (control endpoint ${control.url})`,
    ],
    async close() {
      await control.close();
      await front.close();
      await regions.close();
    },
  };
}
