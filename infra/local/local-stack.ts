import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { ApiGateway, MAX_PAYLOAD_BYTES, type HttpRequest, type HttpResponse } from './aws/apigateway';
import { ensureAssembly, ensureTemplate, type Assembly } from './assembly';
import { deployLocally, localTableArn, partitionKeys, type Stack } from './aws/cloudformation';
import { LocalSchedules, scheduledRules, type ScheduledRun } from './aws/eventbridge';
import { CLOUDFRONT_ID_HEADER, LocalFront, plainHttpStageVariables } from './aws/cloudfront';
import { IamPolicies, startDynamoDbProxy, type DynamoDbCall } from './aws/iam';
import type { MrscOptions } from './aws/mrsc';
import { LambdaService } from './aws/lambda';
import { InProcessLambda } from './aws/lambda-in-process';
import { answerParserRefusals } from './parser-refusals';
import { webAclOf, type WebAcl } from './aws/waf';
import { startXRayDaemon, type XRayDaemon } from './aws/xray';

/**
 * The synthesized stack, running on this machine: WAF → API Gateway → Lambda (each function's
 * bundle, isolated) → IAM → DynamoDB Local, and EventBridge's schedules → Lambda (the sweeper).
 * One module per service; this one only wires them.
 */
export interface LocalStackOptions {
  /** DynamoDB Local's endpoint (the caller starts it and owns the data). */
  dynamoDbEndpoint: string;
  /** The local table standing in for the template's table. */
  tableName: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** The assembly to serve; the `local` stage's (synthesized when its sources changed) by default. */
  assembly?: Assembly;
  /**
   * Each function's log lines, labelled with its name. By default, printed to stdout labelled with
   * the function's route (`[GET /api/v2/ping]`), its EMF metric lines left out unless `showMetrics`.
   */
  log?(functionName: string, line: string): void;
  /** With the default log: print the functions' EMF metric lines too (CloudWatch turns them into metrics). */
  showMetrics?: boolean;
  /** One line per request, after the response: an access log without tokens. */
  onRequest?(entry: { method: string; path: string; status: number; ms: number; errorType?: string }): void;
  /** Each trace the functions sent, once its request was answered and its last datagrams are in: `npm start` prints or saves it (TRACES). */
  onTrace?(traceId: string, segments: Array<Record<string, any>>): void;
  /** Run every scheduled rule this often instead of its rate (ms): tests, and `LOCAL_SCHEDULE_SECONDS` for npm start. */
  scheduleEveryMs?: number;
  /** Each invocation a scheduled rule made, once it ended (npm start prints a line). */
  onScheduledRun?(run: ScheduledRun): void;
  /**
   * What the IAM proxy refuses as an MRSC replica does (infra/local/aws/mrsc.ts): several local Regions
   * over one DynamoDB Local give each its `region` and one shared `inFlightWrites`. Defaults there.
   */
  mrsc?: MrscOptions;
  /**
   * The host clients reach the stage at, for the template's front (its `DomainName`: the links in
   * answers). Default: this server's. Several local Regions behind one front give the front's, as
   * Regions behind one custom domain answer with that domain.
   */
  publicHost?: string;
}

export interface LocalStack {
  url: string;
  port: number;
  gateway: ApiGateway;
  lambda: LambdaService;
  /** The DynamoDB calls the functions made, with IAM's decision (newest last). */
  dynamoDbCalls: DynamoDbCall[];
  /** X-Ray segment documents the functions sent (flat, with the local Lambda's function segments). */
  traces: Array<Record<string, any>>;
  /** The local X-Ray daemon: what it received, a trace by id. */
  xray: XRayDaemon;
  /** Managed WAF rule groups passed through unevaluated. */
  unevaluatedRuleGroups: string[];
  /** The template's scheduled rules, on their timers: their runs so far, and `fire` to run one now. */
  schedules: LocalSchedules;
  close(): Promise<void>;
}

/** Refuses to start with one line that begins with what is refused: a template setting it does not play, or the port. */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const assembly = options.assembly ?? (await ensureAssembly());
  const { server, edge } = await listen(options.port);
  try {
    return await serveAssembly(server, assembly, options, edge);
  } catch (error) {
    server.close();
    throw error;
  }
}

export interface InProcessStackOptions {
  /** The local table standing in for the template's table (DynamoDB Local's endpoint: the process's). */
  tableName: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** The template to serve; the local stage's, synthesized without bundles (ensureTemplate), by default. */
  assembly?: Assembly;
  onRequest?: LocalStackOptions['onRequest'];
}

export interface InProcessStack {
  url: string;
  port: number;
  gateway: ApiGateway;
  unevaluatedRuleGroups: string[];
  close(): Promise<void>;
}

/**
 * `npm run dev`: the same front, WAF and API Gateway as startLocalStack, on the same template, with
 * each function's TypeScript handler invoked in this process (aws/lambda-in-process.ts) and calling
 * DynamoDB Local straight, without the IAM proxy, X-Ray daemon or schedules.
 */
export async function startInProcessStack(options: InProcessStackOptions): Promise<InProcessStack> {
  const assembly = options.assembly ?? (await ensureTemplate());
  const { server, edge } = await listen(options.port);
  try {
    const { port } = server.address() as { port: number };
    const host = `127.0.0.1:${port}`;
    const stack = deployLocally(assembly.directory, assembly.stackName, {
      tableName: options.tableName,
      frontHost: host,
    });
    const lambda = new InProcessLambda(stack);
    const gateway = ApiGateway.of(stack, {
      invoke: (target, event) => lambda.invoke(target, event),
      knows: (target) => lambda.resolve(target) !== undefined,
      servedVariables: (variables) => plainHttpStageVariables(stack, variables),
    });
    const waf = webAclOf(stack);
    edge.front = LocalFront.of(stack);
    serveRequests(server, { gateway, waf, front: edge.front }, options.onRequest);
    return {
      url: `http://${host}`,
      port,
      gateway,
      unevaluatedRuleGroups: waf?.passedThrough ?? [],
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  } catch (error) {
    server.close();
    throw error;
  }
}

/** The server on 127.0.0.1, answering what Node's parser refuses as the front would. */
async function listen(port = 0): Promise<{ server: Server; edge: { front?: LocalFront } }> {
  const server = createServer({ requestTimeout: 30_000, headersTimeout: 10_000 });
  server.keepAliveTimeout = 65_000;
  // Known once the template is read: the front, whose request id the parser's refusals carry too.
  const edge: { front?: LocalFront } = {};
  answerParserRefusals(
    server,
    (): Record<string, string> => (edge.front ? { [CLOUDFRONT_ID_HEADER]: edge.front.requestId() } : {}),
  );
  await new Promise<void>((resolve, reject) => {
    const refused = (error: Error) => reject(new Error(`could not serve on 127.0.0.1:${port}: ${error.message}`));
    server.once('error', refused);
    server.listen(port, '127.0.0.1', () => {
      server.removeListener('error', refused);
      resolve();
    });
  });
  return { server, edge };
}

interface Edge {
  gateway: ApiGateway;
  waf: WebAcl | undefined;
  front: LocalFront | undefined;
}

/** Each request through the front, WAF and API Gateway, and its access line once answered. */
function serveRequests(server: Server, { gateway, waf, front }: Edge, onRequest: LocalStackOptions['onRequest']): void {
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    // The front's id of this request: on the request to the stage, and on the answer whoever gave it.
    const viewerRequestId = front?.requestId();
    serve(req, gateway, waf, front, viewerRequestId)
      .catch((error: unknown) => {
        console.error('local stack failure', error);
        return gateway.refuse('API_CONFIGURATION_ERROR', requestOf(req, Buffer.alloc(0)));
      })
      .then((response) => {
        if (viewerRequestId) response.headers[CLOUDFRONT_ID_HEADER] = viewerRequestId;
        send(res, response);
        const path = (req.url ?? '').split('?')[0]!;
        const ms = performance.now() - started;
        onRequest?.({
          method: req.method ?? '',
          path,
          status: response.status,
          ms,
          ...(response.errorType ? { errorType: response.errorType } : {}),
        });
      });
  });
}

async function serveAssembly(
  server: Server,
  assembly: Assembly,
  options: LocalStackOptions,
  edge: { front?: LocalFront },
): Promise<LocalStack> {
  const { port } = server.address() as { port: number };
  const host = `127.0.0.1:${port}`;
  // The front (a CloudFront distribution, or the custom domain) is this server: its address is ours.
  const stack = deployLocally(assembly.directory, assembly.stackName, {
    tableName: options.tableName,
    frontHost: options.publicHost ?? host,
  });
  const keys = partitionKeys(stack);

  const dynamoDbCalls: DynamoDbCall[] = [];
  const proxy = await startDynamoDbProxy({
    policies: new IamPolicies(stack),
    target: options.dynamoDbEndpoint,
    tableArn: localTableArn,
    partitionKeyOf: (table) => keys.get(table) ?? 'PK',
    onCall: (call) => {
      dynamoDbCalls.push(call);
      if (dynamoDbCalls.length > 10_000) dynamoDbCalls.splice(0, 5_000);
    },
    ...(options.mrsc ? { mrsc: options.mrsc } : {}),
  });
  /** Function name → its route, for the default log (filled once the gateway has read the template). */
  let labels = new Map<string, string>();
  const xray = await startXRayDaemon(options.onTrace ? { onTrace: options.onTrace } : {});
  let lambda: LambdaService;
  let gateway: ApiGateway;
  let waf: WebAcl | undefined;
  let front: LocalFront | undefined;
  let schedules: LocalSchedules;
  try {
    const log =
      options.log ??
      ((name, line) => {
        if (!options.showMetrics && isMetricLine(line)) return;
        console.log(`[${labels.get(name) ?? name}] ${line}`);
      });
    lambda = new LambdaService(stack, {
      environmentFor: (fn) => ({
        ...proxy.credentialsFor(fn.roleLogicalId),
        AWS_ENDPOINT_URL_DYNAMODB: proxy.endpoint,
        AWS_XRAY_DAEMON_ADDRESS: xray.address,
        AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
      }),
      log,
      onInvoked: (invocation) => xray.recordFunctionSegment(invocation),
    });
    gateway = ApiGateway.of(stack, {
      invoke: (target, event) => lambda.invoke(target, event),
      knows: (target) => lambda.resolve(target) !== undefined,
      onRequestEnd: (traceId) => xray.endTrace(traceId),
      servedVariables: (variables) => plainHttpStageVariables(stack, variables),
    });
    labels = routeLabels(gateway.functionRoutes());
    const rules = scheduledRules(stack, (target) => lambda.resolve(target) !== undefined);
    for (const rule of rules)
      for (const target of rule.targets)
        labels.set(target.function.split(':')[0]!, scheduleLabel(stack, target.function, rule.expression));
    waf = webAclOf(stack);
    front = LocalFront.of(stack);
    edge.front = front;
    // Last: nothing may fire before the stack is whole.
    schedules = new LocalSchedules(rules, (target, event) => lambda.invoke(target, event), {
      ...(options.scheduleEveryMs === undefined ? {} : { everyMs: options.scheduleEveryMs }),
      ...(options.onScheduledRun ? { onRun: options.onScheduledRun } : {}),
    });
  } catch (error) {
    await Promise.all([proxy.close(), xray.close()]);
    throw error;
  }

  serveRequests(server, { gateway, waf, front }, options.onRequest);

  return {
    url: `http://${host}`,
    port,
    gateway,
    lambda,
    dynamoDbCalls,
    traces: xray.segments,
    xray,
    unevaluatedRuleGroups: waf?.passedThrough ?? [],
    schedules,
    async close() {
      schedules.close();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await lambda.close();
      await proxy.close();
      await xray.close();
    },
  };
}

async function serve(
  req: IncomingMessage,
  gateway: ApiGateway,
  waf: WebAcl | undefined,
  front: LocalFront | undefined,
  viewerRequestId?: string,
): Promise<HttpResponse> {
  const body = await readBody(req);
  const received = requestOf(req, body ?? Buffer.alloc(0));
  // With a CloudFront front in the template, this server is it: the stage sees what CloudFront forwards.
  const request = front ? front.forward(received, viewerRequestId!) : received;
  if (body === undefined) return gateway.refuse('REQUEST_TOO_LARGE', request);
  return waf?.filter(request, () => gateway.refuse('WAF_FILTERED', request)) ?? gateway.handle(request);
}

function requestOf(req: IncomingMessage, body: Buffer): HttpRequest {
  return {
    method: (req.method ?? 'GET').toUpperCase(),
    url: req.url ?? '/',
    rawHeaders: req.rawHeaders,
    body,
    sourceIp: req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1',
    httpVersion: req.httpVersion,
  };
}

/** The body, or undefined past API Gateway's 10 MB payload limit (the rest is drained, not kept). */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size <= MAX_PAYLOAD_BYTES) chunks.push(chunk as Buffer);
  }
  return size > MAX_PAYLOAD_BYTES ? undefined : Buffer.concat(chunks);
}

function send(res: ServerResponse, response: HttpResponse): void {
  const headers = { ...response.headers };
  if (response.status !== 204 && response.status !== 304) headers['Content-Length'] = String(response.body.length);
  res.writeHead(response.status, headers);
  res.end(response.status === 204 ? undefined : response.body);
}

/** A CloudWatch Embedded Metric Format line: a JSON object with an `_aws` member (Powertools writes it first). */
export function isMetricLine(line: string): boolean {
  if (!line.startsWith('{') || !line.includes('"_aws"')) return false;
  try {
    return Object.hasOwn(JSON.parse(line) as object, '_aws');
  } catch {
    return false;
  }
}

/** A scheduled function's label: its handler file (from its description) and its schedule, not its hashed logical id. */
function scheduleLabel(stack: Stack, target: string, expression: string): string {
  const description = String(stack.resource(target.split(':')[0]!).Properties?.Description ?? '');
  return `${/functions\/\S+$/.exec(description)?.[0] ?? target} ${expression}`;
}

/** A function's label: its route (the first, with how many more reach it), not its hashed logical id. */
function routeLabels(routes: Map<string, string[]>): Map<string, string> {
  return new Map(
    [...routes].map(([name, [first, ...more]]) => [name, more.length === 0 ? first! : `${first} +${more.length} more`]),
  );
}
