import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createSocket, type Socket } from 'node:dgram';
import {
  defaultTextMapGetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { AWSXRayPropagator } from '@opentelemetry/propagator-aws-xray';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SimpleSpanProcessor, TracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import { APP_NAME } from '#shared/config';

/**
 * Bench candidate "OpenTelemetry": the smallest setup of well-kept @opentelemetry/* packages that
 * puts the DynamoDB calls under the Lambda's own trace, with the API of
 * shared/observability/tracer.ts. The SDK's TracerProvider; the X-Ray propagator reads Lambda's
 * trace header (its parent and sampling decision: an unsampled invocation records nothing); spans
 * leave as AWS's Lambda layers send them: OTLP protobuf, base64, after the daemon header and the
 * `T1S` prefix, in UDP datagrams to AWS_XRAY_DAEMON_ADDRESS (the ADOT SDK's OTLPUdpSpanExporter),
 * one datagram per invocation as the layers' batch flushed at the end of each invocation sends.
 * No instrumentation packages: they patch modules at require time, which a bundle bypasses, and
 * pull in require-in-the-middle; a client middleware records the DynamoDB calls, as the
 * project's own tracer does. No context manager: one invocation at a time, as Lambda runs them.
 */
const HEADER = '{"format":"json","version":1}\n';
const SAMPLED_SPANS_PREFIX = 'T1S';

class OtlpUdpSpanExporter implements SpanExporter {
  private socket: Socket | undefined;
  private pending: ReadableSpan[] = [];

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.pending.push(...spans);
    // The invocation's span ends last (its parent is Lambda's, remote): then the batch leaves.
    if (!spans.some((span) => span.parentSpanContext?.isRemote)) {
      done({ code: ExportResultCode.SUCCESS });
      return;
    }
    const batch = this.pending;
    this.pending = [];
    const [host, port] = (process.env.AWS_XRAY_DAEMON_ADDRESS ?? '127.0.0.1:2000').split(':') as [string, string];
    const payload = ProtobufTraceSerializer.serializeRequest(batch);
    if (!payload) {
      done({ code: ExportResultCode.FAILED });
      return;
    }
    if (!this.socket) {
      this.socket = createSocket('udp4');
      this.socket.on('error', () => {});
      this.socket.unref();
    }
    this.socket.send(`${HEADER}${SAMPLED_SPANS_PREFIX}${Buffer.from(payload).toString('base64')}`, Number(port), host);
    done({ code: ExportResultCode.SUCCESS });
  }

  async shutdown(): Promise<void> {
    this.socket?.close();
  }
  async forceFlush(): Promise<void> {}
}

const provider = new TracerProvider({
  resource: resourceFromAttributes({
    'service.name': APP_NAME,
    'cloud.provider': 'aws',
    'cloud.platform': 'aws_lambda',
    'faas.name': process.env.AWS_LAMBDA_FUNCTION_NAME ?? '',
  }),
  spanProcessors: [new SimpleSpanProcessor({ exporter: new OtlpUdpSpanExporter() })],
});
const tracer = provider.getTracer(APP_NAME);
const propagator = new AWSXRayPropagator();

export interface InvocationTrace {
  span: Span;
  context: Context;
}
let current: InvocationTrace | undefined;

export function openInvocationTrace(functionName: string, route: string): InvocationTrace | undefined {
  current = undefined;
  const header = process.env._X_AMZN_TRACE_ID;
  if (!header || !process.env.AWS_XRAY_DAEMON_ADDRESS) return undefined;
  const parent = propagator.extract(ROOT_CONTEXT, { 'x-amzn-trace-id': header }, defaultTextMapGetter);
  const span = tracer.startSpan(
    `## ${functionName}`,
    { kind: SpanKind.SERVER, attributes: { route, 'aws.xray.annotations': ['route', 'outcome'] } },
    parent,
  );
  if (!span.isRecording()) return undefined;
  current = { span, context: trace.setSpan(parent, span) };
  return current;
}

export function closeInvocationTrace(invocation: InvocationTrace | undefined, outcome: string, status?: number): void {
  if (!invocation) return;
  if (current === invocation) current = undefined;
  invocation.span.setAttribute('outcome', outcome);
  if (status !== undefined && status >= 400) invocation.span.setStatus({ code: SpanStatusCode.ERROR });
  invocation.span.end();
}

export function traceDynamoDbCalls<C extends DynamoDBClient>(client: C): C {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const invocation = current;
      if (!invocation) return next(args);
      const operation = (context.commandName ?? 'Unknown').replace(/Command$/, '');
      const input = args.input as { TableName?: string };
      const span = tracer.startSpan(
        `DynamoDB.${operation}`,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'rpc.system': 'aws-api',
            'rpc.service': 'DynamoDB',
            'rpc.method': operation,
            ...(input.TableName ? { 'aws.dynamodb.table_names': [input.TableName] } : {}),
          },
        },
        invocation.context,
      );
      try {
        const output = await next(args);
        span.setAttribute(
          'http.response.status_code',
          (output.output as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0,
        );
        return output;
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.name });
        throw error;
      } finally {
        span.end();
      }
    },
    { step: 'initialize', priority: 'high', name: 'openTelemetryDynamoDbMiddleware' },
  );
  return client;
}
