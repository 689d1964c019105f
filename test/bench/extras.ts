import type { coldStartCost } from './bundles';
import type { ColdStartFloor } from './cold-start';
import type { ExtraFigure } from './goals';
import { workloadIdentityMeasurement } from './workload-identity';

/**
 * Measurements one function adds to the bench beside those every function gets (warm latency,
 * bundle, import and first invocation): the authorizer's JWT verification per authorizer-cache
 * miss and what a JWKS fetch adds to its cold start, once it verifies JWTs. Each runs while
 * DynamoDB Local is up, after the cold starts; its figures are printed in one table, written to the
 * report, and those with a goal are judged by `--check`.
 */
export interface ExtraMeasurement {
  function: string;
  measure(context: ExtraContext): Promise<ExtraFigure[]>;
}

export interface ExtraContext {
  /** The function's bundle as deployed, and the environment the bench starts it with (DynamoDB Local's endpoint included). */
  file: string;
  bytes: number;
  environment: Record<string, string>;
  /** The floors of the cold-start table, to measure against the same ones. */
  floors: ColdStartFloor[];
  /** How many cold processes a figure may take (BENCH_COLD_SAMPLES). */
  samples: number;
  /** A fresh process that imports a bundle and invokes it once (bundles.ts). */
  coldStart: typeof coldStartCost;
}

export const EXTRA_MEASUREMENTS: ExtraMeasurement[] = [workloadIdentityMeasurement];
