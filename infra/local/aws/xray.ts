import { createSocket } from 'node:dgram';
import { randomBytes } from 'node:crypto';

/**
 * The local stand-in for the X-Ray daemon Lambda runs beside a function with active tracing: a UDP
 * listener that decodes the segment documents the tracers send
 * (https://docs.aws.amazon.com/xray/latest/devguide/xray-api-sendingdata.html) and keeps them flat,
 * as X-Ray assembles a trace, with the segment the local Lambda records for each invocation, so a
 * trace reads from function to DynamoDB call. OTLP datagrams (`T1S`/`T1U`) are counted, not decoded.
 */
export interface XRayDaemon {
  address: string;
  /** Every segment and subsegment, flat, oldest first. */
  segments: Array<Record<string, any>>;
  /** Datagrams and bytes received, and those that were not a segment document. */
  received: { datagrams: number; bytes: number; undecoded: number };
  /** The segment Lambda records for an invocation: the trace header's `Parent`. */
  recordFunctionSegment(invocation: FunctionInvocation): void;
  /** The request of this trace has been answered: its trace is complete once its last datagrams are in. */
  endTrace(traceId: string): void;
  /** A trace's segments, oldest first. */
  trace(traceId: string): Array<Record<string, any>>;
  close(): Promise<void>;
}

export interface FunctionInvocation {
  name: string;
  traceHeader: string;
  startedAt: number;
  endedAt: number;
  ok: boolean;
}

export interface XRayDaemonOptions {
  /**
   * A trace's segments, once: when its request has ended (`endTrace`) and nothing more arrived for
   * `quietMs` (default 50: the last datagrams in flight), or, for a trace no request ends, when
   * nothing arrived for `orphanQuietMs` (default 15 s, past any function's init and timeout).
   */
  onTrace?(traceId: string, segments: Array<Record<string, any>>): void;
  quietMs?: number;
  orphanQuietMs?: number;
}

const KEPT = 10_000;

/** Lambda's trace header for one invocation: the trace API Gateway started (or a new one), a new function segment. */
export function lambdaTraceHeader(upstream: string | undefined): string {
  const root = /Root=([^;]+)/.exec(upstream ?? '')?.[1] ?? newTraceId();
  const sampled = /Sampled=([01])/.exec(upstream ?? '')?.[1] ?? '1';
  return `Root=${root};Parent=${randomBytes(8).toString('hex')};Sampled=${sampled}`;
}

export const newTraceId = () => `1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`;

export async function startXRayDaemon(options: XRayDaemonOptions = {}): Promise<XRayDaemon> {
  const socket = createSocket('udp4');
  const segments: Array<Record<string, any>> = [];
  const received = { datagrams: 0, bytes: 0, undecoded: 0 };
  const quiet = new Map<string, NodeJS.Timeout>();
  /** Traces whose request has ended: a pause between two functions of one request (a cold start) is not their end. */
  const ended = new Set<string>();
  const settle = (traceId: string) => {
    clearTimeout(quiet.get(traceId));
    quiet.set(
      traceId,
      setTimeout(
        () => {
          quiet.delete(traceId);
          ended.delete(traceId);
          options.onTrace!(
            traceId,
            segments.filter((s) => s.trace_id === traceId),
          );
        },
        ended.has(traceId) ? (options.quietMs ?? 50) : (options.orphanQuietMs ?? 15_000),
      ).unref(),
    );
  };
  const keep = (document: Record<string, any>, parent?: Record<string, any>) => {
    const { subsegments, ...own } = document;
    const kept = parent ? { ...own, trace_id: parent.trace_id, parent_id: parent.id } : own;
    segments.push(kept);
    for (const child of (subsegments ?? []) as Array<Record<string, any>>) keep(child, kept);
    if (segments.length > KEPT) segments.splice(0, segments.length - KEPT);
    if (options.onTrace && typeof kept.trace_id === 'string' && !parent) settle(kept.trace_id);
  };
  socket.on('message', (message) => {
    received.datagrams++;
    received.bytes += message.length;
    const text = message.toString('utf8');
    const newline = text.indexOf('\n');
    try {
      const header = JSON.parse(text.slice(0, newline)) as Record<string, unknown>;
      if (header.format !== 'json' || header.version !== 1) throw new Error('not a daemon header');
      keep(JSON.parse(text.slice(newline + 1)) as Record<string, any>);
    } catch {
      received.undecoded++;
    }
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  return {
    address: `127.0.0.1:${port}`,
    segments,
    received,
    recordFunctionSegment({ name, traceHeader, startedAt, endedAt, ok }) {
      const root = /Root=([^;]+)/.exec(traceHeader)?.[1];
      const id = /Parent=([^;]+)/.exec(traceHeader)?.[1];
      if (!root || !id || !traceHeader.includes('Sampled=1')) return;
      keep({
        name,
        id,
        trace_id: root,
        origin: 'AWS::Lambda::Function',
        start_time: startedAt / 1000,
        end_time: endedAt / 1000,
        ...(ok ? {} : { fault: true }),
      });
    },
    endTrace(traceId) {
      if (!options.onTrace) return;
      ended.add(traceId);
      // A request with no sampled segment leaves nothing to print: forgotten once its datagrams could have come.
      if (quiet.has(traceId)) settle(traceId);
      else
        setTimeout(() => {
          if (!quiet.has(traceId)) ended.delete(traceId);
        }, 1_000).unref();
    },
    trace: (traceId) => segments.filter((s) => s.trace_id === traceId),
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of quiet.values()) clearTimeout(timer);
        socket.close(() => resolve());
      }),
  };
}

/**
 * A trace as an indented tree, one line per segment: name, time, outcome, and what X-Ray shows of
 * it (annotations; a DynamoDB call's operation and table). What `npm start` prints with TRACES=print.
 */
export function formatTrace(traceId: string, segments: Array<Record<string, any>>): string {
  const children = new Map<string | undefined, Array<Record<string, any>>>();
  const ids = new Set(segments.map((s) => s.id));
  for (const s of segments) {
    const parent = ids.has(s.parent_id) ? s.parent_id : undefined;
    children.set(parent, [...(children.get(parent) ?? []), s]);
  }
  const lines = [`trace ${traceId}`];
  const walk = (parent: string | undefined, depth: number) => {
    for (const s of (children.get(parent) ?? []).sort((a, b) => a.start_time - b.start_time)) {
      const ms = ((s.end_time - s.start_time) * 1000).toFixed(1);
      const flags = ['fault', 'error', 'throttle'].filter((flag) => s[flag]).join(' ');
      const details = [
        ...Object.entries(s.annotations ?? {}).map(([key, value]) => `${key}=${String(value)}`),
        ...(s.aws?.operation ? [s.aws.operation, s.aws.table_name ?? (s.aws.table_names ?? []).join(',')] : []),
        ...(s.cause?.exceptions?.[0]?.type ? [s.cause.exceptions[0].type] : []),
      ]
        .filter(Boolean)
        .join(' ');
      lines.push(
        `${'  '.repeat(depth + 1)}${s.name} ${ms} ms${flags ? ` [${flags}]` : ''}${details ? `  ${details}` : ''}`,
      );
      walk(s.id, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join('\n');
}
