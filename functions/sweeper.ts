import type { ScheduledEvent } from 'aws-lambda';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { reportUnhandled } from '#shared/observability/failures';
import { invocationHandler } from '#shared/observability/invocation';
import { logger } from '#shared/observability/logger';
import { METRIC, metrics } from '#shared/observability/metrics';
import { withOriginalStack } from '#shared/observability/stack-traces';
import { SweepFailed, sweepExpired, type SweepReport } from '#shared/store/sweep';
import { maxDeletesFrom, SWEEPER_FUNCTION, SWEEPER_TIMEOUT_SECONDS } from '#shared/sweeper';

/**
 * The sweeper: run by an EventBridge schedule (infra/cdk/constructs/sweeper.ts), never by a
 * request, so none of the JSON:API chain, but the pieces every function has
 * (shared/observability/invocation.ts). One run deletes what has expired, within its bounds
 * (shared/store/sweep.ts), logs one line with its counts (in total, and for each shard that had
 * anything) and counts what it deleted. A failed call fails the invocation after logging what was
 * done: Lambda counts it as an error, which the sweeper's alarm watches.
 */
export const handler = invocationHandler<ScheduledEvent, SweepReport>(
  SWEEPER_FUNCTION,
  'schedule',
  async (_event, context) => {
    const report = await sweepExpired({
      maxDeletes: maxDeletesFrom(),
      // A caller without a Lambda context (a test invoking the handler) gets the deployed timeout.
      remainingMs: () => context?.getRemainingTimeInMillis?.() ?? SWEEPER_TIMEOUT_SECONDS * 1000,
    });
    logger.info('swept expired items', summaryOf(report));
    count(report);
    return { answer: summaryOf(report), outcome: report.stoppedBy ? `stopped by ${report.stoppedBy}` : 'swept' };
  },
  reportSweepFailure,
);

/** A sweep that failed part way: what it had done, then the failure, in one error line. */
function reportSweepFailure(error: unknown): 'failed' {
  if (!(error instanceof SweepFailed)) return reportUnhandled(error);
  logger.error('sweep failed', { ...summaryOf(error.report), error: withOriginalStack(error.cause) as Error });
  count(error.report);
  return 'failed';
}

/** What the log line and the invocation's result carry: the totals, and only the shards that found something. */
function summaryOf(report: SweepReport): SweepReport {
  const shards = Object.fromEntries(Object.entries(report.shards).filter(([, counts]) => counts.found > 0));
  return { ...report, shards };
}

function count(report: SweepReport): void {
  metrics.addMetric(METRIC.expiredItemsDeleted, MetricUnit.Count, report.total.deleted);
  // 1 when a run ended at its bound with expired items left: steadily 1 means the sweeper falls behind.
  metrics.addMetric(METRIC.sweepStoppedEarly, MetricUnit.Count, report.stoppedBy ? 1 : 0);
}
