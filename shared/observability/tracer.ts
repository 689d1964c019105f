import { Tracer } from '@aws-lambda-powertools/tracer';
import { APP_NAME } from '../config';

/**
 * X-Ray through Powertools Tracer. Active only inside Lambda with tracing on (it checks
 * AWS_EXECUTION_ENV; POWERTOOLS_TRACE_ENABLED=false turns it off): elsewhere every call is a no-op
 * and nothing is sent. HTTP capture is off: the DynamoDB client is instrumented itself (store/client.ts),
 * and capturing its HTTP calls again would only duplicate those subsegments.
 */
export const tracer = new Tracer({ serviceName: APP_NAME, captureHTTPsRequests: false });

/** One invocation's subsegment, under the segment Lambda opened for it. */
type TraceSegment = NonNullable<ReturnType<Tracer['getSegment']>>;

export interface InvocationTrace {
  parent: TraceSegment;
  subsegment: ReturnType<TraceSegment['addNewSubsegment']>;
}

/**
 * Opens `## <function>` for this invocation (annotations cannot go on Lambda's own facade
 * segment), annotated with what identifies it: route, cold start, service. The DynamoDB
 * subsegments nest under it.
 */
export function openInvocationTrace(functionName: string, route: string): InvocationTrace | undefined {
  if (!tracer.isTracingEnabled()) return undefined;
  const parent = tracer.getSegment();
  if (!parent) return undefined;
  const subsegment = parent.addNewSubsegment(`## ${functionName}`);
  tracer.setSegment(subsegment);
  tracer.annotateColdStart();
  tracer.addServiceNameAnnotation();
  tracer.putAnnotation('route', route);
  return { parent, subsegment };
}

/**
 * Closes it with the outcome: the HTTP status as answered (or the authorizer's decision); 5xx
 * marks a fault, 4xx an error, as X-Ray's console reads them. Never a request or response body.
 */
export function closeInvocationTrace(trace: InvocationTrace | undefined, outcome: string, status?: number): void {
  if (!trace) return;
  tracer.putAnnotation('outcome', outcome);
  if (status !== undefined && status >= 500) trace.subsegment.addFaultFlag();
  else if (status !== undefined && status >= 400) trace.subsegment.addErrorFlag();
  trace.subsegment.close();
  tracer.setSegment(trace.parent);
}
