import middy, { type MiddlewareObj, type Request } from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Context } from 'aws-lambda';
import { reportFailure } from './failures';
import { logger } from './logger';
import { flushMetrics } from './metrics';
import type { InvocationSpan } from './trace-types';
// By this path: the bench swaps the module it names for each tracer it compares (test/bench/tracers/).
import { closeInvocationTrace, openInvocationTrace, type InvocationTrace } from '../observability/tracer';

/**
 * What every function gets, whatever invokes it: the logger's Lambda context, a trace, its metrics
 * flushed, its failures logged and counted as what they are. The JSON:API chain
 * (shared/http/handler.ts) is built from these pieces, and so is invocationHandler for the rest.
 */

/** How an invocation ended, as its trace says: the outcome, the status (5xx a fault), who (authorizer). */
export interface InvocationOutcome {
  outcome: string;
  status?: number;
  who?: Pick<InvocationSpan['annotations'], 'trust' | 'workload'>;
}

type Invocation<E, R> = Request<E, R, Error, Context>;

/**
 * The invocation's trace and metrics. Used first in a chain, so it opens the trace first and closes
 * it last, with the outcome `outcomeOf` reads as the invocation ends (from its response, or from
 * its error once the chain's other onError handlers have run), then flushes the metrics. One
 * invocation at a time per process, as Lambda runs them.
 */
export function observeInvocation<E, R>(
  functionName: string,
  label: string,
  outcomeOf: (invocation: Invocation<E, R>) => InvocationOutcome,
): MiddlewareObj<E, R, Error, Context> {
  let trace: InvocationTrace | undefined;
  const end = (invocation: Invocation<E, R>) => {
    const { outcome, status, who } = outcomeOf(invocation);
    closeInvocationTrace(trace, outcome, status, who);
    trace = undefined;
    flushMetrics(functionName);
  };
  return {
    before: () => {
      trace = openInvocationTrace(functionName, label);
    },
    after: end,
    onError: end,
  };
}

/**
 * The Lambda request id and cold start on every log line, and the keys an invocation appended
 * dropped after it. Never the event: events carry Authorization headers.
 */
export const lambdaLogging = () => injectLambdaContext(logger, { resetKeys: true, logEvent: false });

/** What a handler on invocationHandler answers, and how its invocation ended. */
export type Answered<R> = { answer: R } & InvocationOutcome;

/**
 * A function outside the route table's JSON:API chain (the authorizer, the sweeper), on the same
 * pieces: its trace ends with the outcome its handler gives, or on a failure with what `report`
 * (logs and counts it; reportFailure unless given) calls it and 500; the failure is thrown on, so
 * Lambda counts a function error. No early timeout: nothing answers for it but Lambda.
 */
export function invocationHandler<E, R>(
  functionName: string,
  label: string,
  handle: (event: E, context: Context) => Promise<Answered<R>>,
  report: (error: unknown) => string = reportFailure,
): (event: E, context?: Context) => Promise<R> {
  let ended: InvocationOutcome = { outcome: 'failed', status: 500 };
  const chain = middy<E, R, Error, Context>({ timeoutEarlyInMillis: 0 })
    .use(observeInvocation<E, R>(functionName, label, () => ended))
    .use(lambdaLogging())
    .use({
      onError: ({ error }) => {
        ended = { outcome: report(error), status: 500 };
      },
    })
    .handler(async (event, context) => {
      const { answer, ...outcome } = await handle(event, context);
      ended = outcome;
      return answer;
    });
  // middy gives an invocation without a context (a test's) an empty one.
  return (event, context) => chain(event, context as Context);
}
