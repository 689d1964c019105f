import { isStoreUnavailable } from '../store/errors';
import { IssuerUnavailable } from '../workload-identity/issuer-unavailable';
import { logger } from './logger';
import { countMetric, METRIC } from './metrics';
import { withOriginalStack } from './stack-traces';

/** What made an invocation fail: a service it needs was unavailable, or anything else (a bug). */
export type Failure = 'issuer-unavailable' | 'store-unavailable' | 'failed';

/**
 * What made an invocation fail, for its log line, metric and trace. The issuer is asked first: its
 * network errors (a refused connection, a timeout, a name DNS cannot resolve) travel as the cause
 * of an IssuerUnavailable, and the AWS SDK's classifier, which reads causes, calls them transient,
 * so the store's check would claim them and send on-call to DynamoDB.
 */
export function failureOf(error: unknown): Failure {
  if (error instanceof IssuerUnavailable) return 'issuer-unavailable';
  if (isStoreUnavailable(error)) return 'store-unavailable';
  return 'failed';
}

/**
 * Logs and counts a failure as what it is: a service unavailable is a warning and its metric (an
 * alarm watches each), anything else an error with the stack of the code that threw it.
 */
export function reportFailure(error: unknown): Failure {
  const failure = failureOf(error);
  if (failure === 'store-unavailable') {
    logger.warn('store unavailable', { error: error as Error });
    countMetric(METRIC.storeUnavailable);
  } else if (failure === 'issuer-unavailable') {
    const { issuer, message } = error as IssuerUnavailable;
    logger.warn('issuer unavailable', { issuer, detail: message });
    countMetric(METRIC.issuerUnavailable, { issuer });
  } else {
    reportUnhandled(error);
  }
  return failure;
}

/** Anything else is a bug: an error log line with the stack of the code that threw it. */
export function reportUnhandled(error: unknown): 'failed' {
  logger.error('unhandled error', { error: withOriginalStack(error) as Error });
  return 'failed';
}
