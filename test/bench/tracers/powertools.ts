import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { APP_NAME } from '#shared/config';

/**
 * Bench candidate "Powertools Tracer", as the functions used it until issue 23 (the same API as
 * shared/observability/tracer.ts): X-Ray through Powertools Tracer and the X-Ray SDK for Node.js,
 * bundled with the SDK's entry replaced by xray-sdk-stubs/ as the deployed bundles had it.
 * Active only inside Lambda with tracing on (it checks AWS_EXECUTION_ENV). HTTP capture is off:
 * the DynamoDB client is instrumented itself.
 */
export const tracer = new Tracer({ serviceName: APP_NAME, captureHTTPsRequests: false });

type TraceSegment = NonNullable<ReturnType<Tracer['getSegment']>>;

export interface InvocationTrace {
  parent: TraceSegment;
  subsegment: ReturnType<TraceSegment['addNewSubsegment']>;
}

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

export function closeInvocationTrace(trace: InvocationTrace | undefined, outcome: string, status?: number): void {
  if (!trace) return;
  tracer.putAnnotation('outcome', outcome);
  if (status !== undefined && status >= 500) trace.subsegment.addFaultFlag();
  else if (status !== undefined && status >= 400) trace.subsegment.addErrorFlag();
  trace.subsegment.close();
  tracer.setSegment(trace.parent);
}

export function traceDynamoDbCalls<C extends DynamoDBClient>(client: C): C {
  return tracer.captureAWSv3Client(client);
}
