import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { APP_NAME } from '../config';

/**
 * Business and health metrics as CloudWatch Embedded Metric Format: JSON lines on stdout that
 * CloudWatch turns into metrics (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html).
 * One namespace; dimensions are only `service`, plus `function_name` on ColdStart, `reason` on
 * AuthorizationOutcome and `hotSpot` (run, organization) on the HotSpot metrics (small fixed
 * sets). Ids go in metadata: searchable in the log line, never a
 * dimension (each distinct dimension value is a billed metric).
 */
export const METRICS_NAMESPACE = 'TfcTagsComments';

export const METRIC = {
  /** Powertools' own name for the metric `captureColdStartMetric` emits. */
  coldStart: 'ColdStart',
  reservedTagKeyCreated: 'ReservedTagKeyCreated',
  reservedTagKeyUpdated: 'ReservedTagKeyUpdated',
  reservedTagKeyDeleted: 'ReservedTagKeyDeleted',
  commentCreated: 'CommentCreated',
  authorizationOutcome: 'AuthorizationOutcome',
  storeUnavailable: 'StoreUnavailable',
  /** The authorizer could not read a trusted OIDC issuer's discovery document or keys (metadata: `issuer`). */
  issuerUnavailable: 'IssuerUnavailable',
  /** Per request that lost at least one round on a hot spot (shared/store/contention.ts), by `hotSpot`. */
  hotSpotWaits: 'HotSpotWaits',
  hotSpotAttempts: 'HotSpotAttempts',
  hotSpotWaitTime: 'HotSpotWaitTime',
  hotSpotGaveUp: 'HotSpotGaveUp',
  /** Per sweeper run (functions/sweeper.ts): the expired items it deleted, and 1 when it stopped at its bound with some left. */
  expiredItemsDeleted: 'ExpiredItemsDeleted',
  sweepStoppedEarly: 'SweepStoppedEarly',
} as const;

/** Why a request was or was not authorized: the `reason` dimension of AuthorizationOutcome. */
export const AUTHORIZATION_REASONS = [
  'allowed',
  'malformed',
  'unknown',
  'revoked',
  'expired',
  'forbidden',
  'not-visible',
] as const;
export type AuthorizationReason = (typeof AUTHORIZATION_REASONS)[number];
export type TokenRejection = Extract<AuthorizationReason, 'malformed' | 'unknown' | 'revoked' | 'expired'>;

/** Where many writers meet (shared/store/contention.ts): the `hotSpot` dimension's values. */
export const HOT_SPOTS = ['run', 'organization'] as const;
export type HotSpot = (typeof HOT_SPOTS)[number];

export const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: APP_NAME });

/** Counts one event of this invocation; flushed with the others when the invocation ends. */
export function countMetric(name: (typeof METRIC)[keyof typeof METRIC], metadata: Record<string, string> = {}): void {
  metrics.addMetric(name, MetricUnit.Count, 1);
  for (const [key, value] of Object.entries(metadata)) metrics.addMetadata(key, value);
}

/** Its own EMF line: the `reason` dimension must not spread to the invocation's other metrics. */
export function countAuthorization(reason: AuthorizationReason): void {
  const single = metrics.singleMetric();
  single.addDimension('reason', reason);
  single.addMetric(METRIC.authorizationOutcome, MetricUnit.Count, 1);
}

/**
 * Ends an invocation's metrics: ColdStart once per process (dimension `function_name`: the route
 * table's name, stable across deploys), then one EMF line with whatever was counted, if anything.
 */
export function flushMetrics(functionName: string): void {
  metrics.captureColdStartMetric(functionName);
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  else metrics.clearMetadata();
}

/**
 * One request's wait on a hot spot, as its own EMF line with the `hotSpot` dimension: attempts
 * made, time waited, and whether it gave up (1) or won (0), so an alarm can sum the give-ups.
 */
export function countContention(hotSpot: HotSpot, wait: { attempts: number; waitedMs: number; gaveUp: boolean }): void {
  const line = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: APP_NAME });
  line.addDimension('hotSpot', hotSpot);
  line.addMetric(METRIC.hotSpotWaits, MetricUnit.Count, 1);
  line.addMetric(METRIC.hotSpotAttempts, MetricUnit.Count, wait.attempts);
  line.addMetric(METRIC.hotSpotWaitTime, MetricUnit.Milliseconds, wait.waitedMs);
  line.addMetric(METRIC.hotSpotGaveUp, MetricUnit.Count, wait.gaveUp ? 1 : 0);
  line.publishStoredMetrics();
}
