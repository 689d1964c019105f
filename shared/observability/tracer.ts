import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { randomBytes } from 'node:crypto';
import type { InvocationSpan } from './trace-types';
import { exportInvocation } from './xray-daemon-exporter';

/**
 * Traces of the functions, owned by the project (no X-Ray SDK, no tracing framework: why, what a
 * trace shows and what it costs are in docs/design.md, "Tracing"). Spans are recorded here in
 * plain terms and handed, finished, to one exporter module (xray-daemon-exporter.ts). Nothing is
 * recorded unless Lambda sampled the invocation and gave the daemon's address. The current
 * invocation is module state: Lambda runs one at a time per process (no AWS_LAMBDA_MAX_CONCURRENCY).
 */

/** The X-Ray trace header Lambda gives an invocation: `Root=1-…;Parent=…;Sampled=1`. */
export interface TraceHeader {
  root: string;
  parent: string | undefined;
  sampled: boolean;
}

/** https://docs.aws.amazon.com/xray/latest/devguide/xray-concepts.html#xray-concepts-tracingheader */
export function parseTraceHeader(header: string | undefined): TraceHeader | undefined {
  if (!header) return undefined;
  let root: string | undefined;
  let parent: string | undefined;
  let sampled = false;
  for (const field of header.split(';')) {
    const equals = field.indexOf('=');
    const name = field.slice(0, equals).trim();
    const value = field.slice(equals + 1).trim();
    if (name === 'Root') root = value;
    else if (name === 'Parent') parent = value;
    else if (name === 'Sampled') sampled = value === '1';
  }
  return root ? { root, parent, sampled } : undefined;
}

/**
 * This invocation's header: from the runtime's invoke store when it keeps one (the Node.js
 * runtime does for concurrent invocations), else `_X_AMZN_TRACE_ID`, which it sets per invocation.
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime
 */
function invocationTraceHeader(): string | undefined {
  const store = (globalThis as { awslambda?: { InvokeStore?: { getXRayTraceId?(): string | undefined } } }).awslambda
    ?.InvokeStore;
  return store?.getXRayTraceId?.() ?? process.env._X_AMZN_TRACE_ID;
}

/** Kept opaque for the callers: they open and close it, nothing more. */
export interface InvocationTrace {
  readonly span: InvocationSpan;
  readonly clock: Clock;
}

/** Epoch seconds from one wall-clock reading per invocation plus the monotonic clock. */
interface Clock {
  wallMs: number;
  monotonicMs: number;
}
const seconds = (clock: Clock, monotonicMs = performance.now()) =>
  (clock.wallMs + monotonicMs - clock.monotonicMs) / 1000;

const spanId = () => randomBytes(8).toString('hex');

let current: InvocationTrace | undefined;

/** Opens `## <function>` when this invocation is sampled; undefined (and no cost after) otherwise. */
export function openInvocationTrace(functionName: string, route: string): InvocationTrace | undefined {
  current = undefined;
  if (!process.env.AWS_XRAY_DAEMON_ADDRESS) return undefined;
  const header = parseTraceHeader(invocationTraceHeader());
  if (!header?.sampled) return undefined;
  const clock = { wallMs: Date.now(), monotonicMs: performance.now() };
  current = {
    clock,
    span: {
      traceId: header.root,
      parentId: header.parent,
      id: spanId(),
      name: `## ${functionName}`,
      start: seconds(clock, clock.monotonicMs),
      end: 0,
      annotations: { route },
      status: undefined,
      calls: [],
    },
  };
  return current;
}

/**
 * Closes it with the outcome: the HTTP status as answered (or the authorizer's decision); 5xx
 * marks a fault, 4xx an error, as X-Ray's console reads them; then hands it to the exporter.
 */
export function closeInvocationTrace(
  trace: InvocationTrace | undefined,
  outcome: string,
  status?: number,
  who?: Pick<InvocationSpan['annotations'], 'trust' | 'workload'>,
): void {
  if (!trace) return;
  if (current === trace) current = undefined;
  trace.span.end = seconds(trace.clock);
  trace.span.annotations.outcome = outcome;
  if (who) Object.assign(trace.span.annotations, who);
  trace.span.status = status;
  exportInvocation(trace.span);
}

type Input = Record<string, unknown> & { TableName?: string; RequestItems?: Record<string, unknown> };

/** The tables a call names: TableName, or a batch's keys (the store sends no transaction). */
function tablesOf(input: Input | undefined): string[] {
  if (!input) return [];
  if (typeof input.TableName === 'string') return [input.TableName];
  return Object.keys(input.RequestItems ?? {});
}

type Metadata = { httpStatusCode?: number; requestId?: string; attempts?: number };

/**
 * Records each call of this client as a DynamoDB span of the current invocation, retries
 * included (the SDK's first step, around its retry loop). Outside a sampled invocation a call
 * goes straight through.
 */
export function traceDynamoDbCalls<C extends DynamoDBClient>(client: C): C {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const trace = current;
      if (!trace) return next(args);
      const started = performance.now();
      const record = (metadata: Metadata | undefined, error: string | undefined) => {
        trace.span.calls.push({
          id: spanId(),
          operation: (context.commandName ?? 'Unknown').replace(/Command$/, ''),
          tables: tablesOf(args.input as Input),
          start: seconds(trace.clock, started),
          end: seconds(trace.clock),
          status: metadata?.httpStatusCode,
          error,
          retries: Math.max(0, (metadata?.attempts ?? 1) - 1),
          requestId: metadata?.requestId,
        });
      };
      try {
        const output = await next(args);
        record((output.output as { $metadata?: Metadata } | undefined)?.$metadata, undefined);
        return output;
      } catch (error) {
        const failure = error as { name?: string; $metadata?: Metadata };
        record(failure?.$metadata, failure?.name ?? 'Error');
        throw error;
      }
    },
    { step: 'initialize', priority: 'high', name: 'traceDynamoDbCallsMiddleware' },
  );
  return client;
}
