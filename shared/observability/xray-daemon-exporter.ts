import type { Socket } from 'node:dgram';
import type { DynamoDbSpan, InvocationSpan } from './trace-types';

/**
 * The tracer's one transport: a finished invocation becomes one X-Ray subsegment document sent in
 * one UDP datagram to the daemon Lambda runs beside the function (AWS_XRAY_DAEMON_ADDRESS): no
 * HTTPS, no credentials, nothing to flush before the sandbox freezes. An OpenTelemetry exporter
 * can replace this module alone (docs/design.md, Tracing).
 * Format: https://docs.aws.amazon.com/xray/latest/devguide/xray-api-sendingdata.html; fields:
 * https://docs.aws.amazon.com/xray/latest/devguide/xray-api-segmentdocuments.html
 */
export const DAEMON_HEADER = '{"format":"json","version":1}\n';

/** `host:port`, or Lambda's `tcp:host:port udp:host:port` form (the UDP one is used). */
export function daemonAddress(value: string | undefined): { host: string; port: number } | undefined {
  if (!value) return undefined;
  const parts = value.trim().split(/\s+/);
  const udp = parts.find((part) => part.startsWith('udp:')) ?? parts.find((part) => !part.startsWith('tcp:'));
  const match = /^(?:udp:)?(.+):(\d+)$/.exec(udp ?? '');
  return match ? { host: match[1]!, port: Number(match[2]) } : undefined;
}

/** The X-Ray subsegment document of one invocation: what the daemon forwards to X-Ray. */
export function segmentDocument(span: InvocationSpan): Record<string, unknown> {
  return {
    type: 'subsegment',
    name: span.name,
    id: span.id,
    trace_id: span.traceId,
    ...(span.parentId ? { parent_id: span.parentId } : {}),
    start_time: span.start,
    end_time: span.end,
    ...outcomeFlags(span.status),
    annotations: span.annotations,
    ...(span.calls.length > 0 ? { subsegments: span.calls.map(callDocument) } : {}),
  };
}

function callDocument(call: DynamoDbSpan): Record<string, unknown> {
  return {
    id: call.id,
    name: 'DynamoDB',
    namespace: 'aws',
    start_time: call.start,
    end_time: call.end,
    ...outcomeFlags(call.status, call.error),
    ...(call.error ? { cause: { exceptions: [{ id: call.id, type: call.error, remote: true }] } } : {}),
    ...(call.status ? { http: { response: { status: call.status } } } : {}),
    aws: {
      operation: call.operation,
      region: process.env.AWS_REGION,
      ...(call.tables.length === 1
        ? { table_name: call.tables[0] }
        : call.tables.length > 1
          ? { table_names: call.tables }
          : {}),
      ...(call.requestId ? { request_id: call.requestId } : {}),
      retries: call.retries,
    },
  };
}

const THROTTLED = new Set(['ThrottlingException', 'ProvisionedThroughputExceededException', 'RequestLimitExceeded']);

/** 5xx (or no answer at all) a fault, 4xx an error, 429 or a throttling error also a throttle. */
function outcomeFlags(status: number | undefined, error?: string): Record<string, true> {
  if (status === undefined) return error ? { fault: true } : {};
  if (status >= 500) return { fault: true };
  if (status === 429 || (error && THROTTLED.has(error))) return { error: true, throttle: true };
  if (status >= 400 || error) return { error: true };
  return {};
}

let socket: Socket | undefined;

/** Sends it, never throws: a trace lost is not a request failed. */
export function exportInvocation(span: InvocationSpan): void {
  const address = daemonAddress(process.env.AWS_XRAY_DAEMON_ADDRESS);
  if (!address) return;
  try {
    if (!socket) {
      // Loaded on the first sampled invocation, not at init: no other module of the bundle needs
      // node:dgram, and importing it at init would add to every cold start (docs/performance.md).
      socket = process.getBuiltinModule('node:dgram').createSocket('udp4');
      socket.on('error', () => {
        /* the daemon is optional: X-Ray drops what it does not receive */
      });
      socket.unref();
    }
    socket.send(DAEMON_HEADER + JSON.stringify(segmentDocument(span)), address.port, address.host);
  } catch {
    // A document over the datagram limit, or a closed socket: the trace is lost, the request is not.
  }
}
