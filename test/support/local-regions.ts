import { afterAll, beforeAll } from '@jest/globals';
import { freePort } from '#infra/local/ports';
import type { HealthCheckSettings } from '#infra/local/front-router';
import { startMultiRegion, type MultiRegion } from '#infra/local/multi-region';
import { TestApi } from './api';

export interface LocalRegionsHandle {
  /** What `REGIONS=… npm start` runs: the Regions, the front, the control endpoint. */
  multi(): MultiRegion;
  /** A client of the front. */
  front: TestApi;
  /** A client of one Region's own address. */
  region(name: string): TestApi;
  /** The front's HEALTH lines, as npm start prints them. */
  healthLines: string[];
  /** Every log line the functions of every Region wrote. */
  logs: string[];
}

/**
 * Several local Regions over this file's table, behind the health-checked front, wired as
 * `REGIONS=… npm start` wires them (infra/local/multi-region.ts), stopped after the file.
 */
export function useLocalRegions(names: string[], healthCheck: HealthCheckSettings): LocalRegionsHandle {
  let multi: MultiRegion | undefined;
  const front = new TestApi('');
  const clients = new Map<string, TestApi>();
  const healthLines: string[] = [];
  const logs: string[] = [];
  beforeAll(async () => {
    multi = await startMultiRegion({
      port: await freePort(),
      names,
      healthCheck,
      stack: {
        dynamoDbEndpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB!,
        tableName: process.env.TABLE_NAME!,
        log: (name, line) => {
          logs.push(`[${name}] ${line}`);
        },
      },
      onHealthChange: (line) => {
        healthLines.push(line);
      },
    });
    (front as { baseUrl: string }).baseUrl = multi.url;
    for (const region of multi.regions.regions) clients.set(region.name, new TestApi(region.url));
  }, 120_000);
  afterAll(async () => {
    await multi?.close();
  });
  return { multi: () => multi!, front, region: (name) => clients.get(name)!, healthLines, logs };
}
