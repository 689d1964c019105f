import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Stack } from './cloudformation';
import { LOCAL_ACCOUNT, LOCAL_REGION } from './cloudformation';
import { PROJECT_ROOT } from './assembly';
import { lambdaTraceHeader } from './xray';

/**
 * The local stand-in for Lambda. Every AWS::Lambda::Function of the template runs its synthesized
 * bundle with exactly the template's handler, environment, memory and timeout. An instance is a
 * child process of its own (its own module state, `process.env` and NODE_OPTIONS) and serves one
 * invocation at a time: concurrent invocations start more instances, each with its cold start.
 */
export interface FunctionConfig {
  logicalId: string;
  /** The name its logs are labelled with: the function's construct path, like its log group. */
  name: string;
  codeDirectory: string;
  handler: string;
  runtime: string;
  timeoutSeconds: number;
  memoryMb: number;
  environment: Record<string, string>;
  roleLogicalId: string;
  /** The Node.js binary of the function's runtime (`nodejs24.x` → a Node 24). */
  node: string;
}

export interface InvocationResult {
  ok: boolean;
  /** The handler's return value when ok. */
  result?: unknown;
  /** Lambda's error shape when not ok: `Sandbox.Timedout`, `Runtime.ExitError`, or what the handler threw. */
  error?: { errorType: string; errorMessage: string };
  coldStart: boolean;
  instanceId: string;
}

export interface LambdaOptions {
  /** Extra variables for every function: the emulator's credentials and endpoints. */
  environmentFor(fn: FunctionConfig): Record<string, string>;
  /** Where each log line goes, labelled with its function (like its log stream). */
  log(functionName: string, line: string): void;
  /** Each invocation once it ended, with the trace header it ran under (X-Ray's function segment). */
  onInvoked?(invocation: { name: string; traceHeader: string; startedAt: number; endedAt: number; ok: boolean }): void;
}

const SUPPORTED_RUNTIMES = /^nodejs\d+\.x$/;
/** https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html: 6 MB synchronous response. */
const MAX_RESPONSE_BYTES = 6 * 1024 * 1024;

export class LambdaService {
  readonly functions: ReadonlyMap<string, FunctionConfig>;
  private readonly pools = new Map<string, Instance[]>();
  private readonly busy = new Set<Instance>();
  private readonly options: LambdaOptions;
  /** Every instance ever started, by function logical id (tests count cold starts with it). */
  readonly started = new Map<string, number>();

  constructor(stack: Stack, options: LambdaOptions) {
    this.options = options;
    this.functions = new Map(stack.resourcesOf('AWS::Lambda::Function').map(([logicalId, resource]) => {
      const p = resource.Properties;
      const runtime = String(p.Runtime);
      if (!SUPPORTED_RUNTIMES.test(runtime)) throw new Error(`Lambda ${logicalId}: the local stack runs Node.js runtimes only, not ${runtime}`);
      if (p.Layers) throw new Error(`Lambda ${logicalId}: layers are not emulated`);
      const environment = Object.fromEntries(Object.entries((p.Environment?.Variables ?? {}) as Record<string, unknown>)
        .map(([name, value]) => [name, stack.string(value)]));
      const role = p.Role?.['Fn::GetAtt']?.[0] as string | undefined;
      if (!role) throw new Error(`Lambda ${logicalId}: its role is not a role of this template`);
      const config: FunctionConfig = {
        logicalId,
        name: logicalId,
        codeDirectory: stack.assetDirectory(p.Code),
        handler: String(p.Handler),
        runtime,
        timeoutSeconds: Number(p.Timeout ?? 3), // Lambda's default timeout
        memoryMb: Number(p.MemorySize ?? 128),
        environment,
        roleLogicalId: role,
        node: nodeFor(logicalId, runtime),
      };
      return [logicalId, config];
    }));
  }

  async invoke(logicalId: string, event: unknown): Promise<InvocationResult> {
    const fn = this.functions.get(logicalId);
    if (!fn) throw new Error(`No function ${logicalId} in the template`);
    const pool = this.pools.get(logicalId) ?? [];
    this.pools.set(logicalId, pool);
    let warm = pool.pop();
    while (warm && !warm.alive) warm = pool.pop(); // an idle instance that died is gone, as in Lambda
    const instance = warm ?? this.startInstance(fn);
    this.busy.add(instance);
    // Lambda continues the trace its caller started (API Gateway's X-Amzn-Trace-Id) under a segment of its own.
    const traceHeader = lambdaTraceHeader(upstreamTraceHeader(event));
    const startedAt = Date.now();
    try {
      const outcome = await instance.invoke(event, fn, traceHeader);
      this.options.onInvoked?.({ name: fn.name, traceHeader, startedAt, endedAt: Date.now(), ok: outcome.ok });
      if (instance.alive) pool.push(instance);
      return { ...outcome, coldStart: !warm, instanceId: instance.id };
    } finally {
      this.busy.delete(instance);
    }
  }

  /** Stops every instance, busy or idle. */
  async close(): Promise<void> {
    const all = [...this.busy, ...[...this.pools.values()].flat()];
    this.pools.clear();
    await Promise.all(all.map((instance) => instance.stop()));
  }

  private startInstance(fn: FunctionConfig): Instance {
    this.started.set(fn.logicalId, (this.started.get(fn.logicalId) ?? 0) + 1);
    return new Instance(fn, { ...lambdaEnvironment(fn), ...fn.environment, ...this.options.environmentFor(fn) }, this.options.log);
  }
}

/** The variables Lambda itself sets in every function's environment (Lambda: "Defined runtime environment variables"). */
export function lambdaEnvironment(fn: FunctionConfig): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    AWS_REGION: LOCAL_REGION,
    AWS_DEFAULT_REGION: LOCAL_REGION,
    AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
    AWS_LAMBDA_FUNCTION_NAME: fn.name,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.name}`,
    AWS_LAMBDA_LOG_STREAM_NAME: `local/[$LATEST]${randomBytes(16).toString('hex')}`,
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    LAMBDA_TASK_ROOT: fn.codeDirectory,
    LAMBDA_RUNTIME_DIR: import.meta.dirname,
    _HANDLER: fn.handler,
  };
}

/**
 * A Node.js of the runtime's major version: the one running the emulator, or the project's pinned
 * one (the `node` package). A function never runs on another major than the one Lambda would use.
 */
const nodeVersions = new Map<string, string>();
function nodeFor(logicalId: string, runtime: string): string {
  const major = /^nodejs(\d+)\.x$/.exec(runtime)![1];
  for (const candidate of [process.execPath, join(PROJECT_ROOT, 'node_modules', 'node', 'bin', 'node')]) {
    if (!nodeVersions.has(candidate)) {
      try { nodeVersions.set(candidate, execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim()); } catch { nodeVersions.set(candidate, ''); }
    }
    if (nodeVersions.get(candidate)!.startsWith(`v${major}.`)) return candidate;
  }
  throw new Error(`Lambda ${logicalId}: runtime ${runtime} needs Node.js ${major}; run npm install (the project pins it)`);
}

const RUNTIME = new URL('./lambda-runtime.mjs', import.meta.url);

type Outcome = Pick<InvocationResult, 'ok' | 'result' | 'error'>;

class Instance {
  readonly id = randomUUID();
  alive = true;
  private readonly child: ChildProcess;
  private readonly ready: Promise<void>;
  private readonly exited: Promise<void>;
  private pending?: { id: string; settle(outcome: Outcome): void };

  constructor(fn: FunctionConfig, env: Record<string, string>, log: LambdaOptions['log']) {
    // execArgv empty: the emulator's own loader flags must not reach the function, only its NODE_OPTIONS.
    this.child = fork(RUNTIME, [], { env, execPath: fn.node, execArgv: [], stdio: ['ignore', 'pipe', 'pipe', 'ipc'], serialization: 'json' });
    for (const stream of [this.child.stdout!, this.child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => log(fn.name, line));
    }
    this.ready = new Promise((resolve) => this.child.once('message', () => resolve()));
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    this.child.on('message', (message: { id?: string; ok?: boolean; result?: unknown; error?: Outcome['error'] }) => {
      if (message.id && message.id === this.pending?.id) this.pending.settle(tooLarge(message) ?? { ok: message.ok!, result: message.result, error: message.error });
    });
    this.child.once('exit', (code, signal) => {
      this.alive = false;
      this.pending?.settle({ ok: false, error: { errorType: 'Runtime.ExitError', errorMessage: `RequestId: ${this.pending.id} Error: Runtime exited with ${signal ? `signal: ${signal}` : `error: exit status ${code}`}` } });
    });
  }

  async invoke(event: unknown, fn: FunctionConfig, traceHeader: string): Promise<Outcome> {
    await Promise.race([this.ready, this.exited]);
    const awsRequestId = randomUUID();
    const deadline = Date.now() + fn.timeoutSeconds * 1000;
    return new Promise<Outcome>((resolve) => {
      const timer = setTimeout(() => {
        // Lambda ends a timed-out invocation by stopping its instance; the next one starts cold.
        this.settleAs(resolve, { ok: false, error: { errorType: 'Sandbox.Timedout', errorMessage: `${awsRequestId} Task timed out after ${fn.timeoutSeconds.toFixed(2)} seconds` } });
        void this.stop();
      }, fn.timeoutSeconds * 1000);
      this.pending = {
        id: awsRequestId,
        settle: (outcome) => { clearTimeout(timer); this.settleAs(resolve, outcome); },
      };
      if (!this.alive) return this.pending.settle({ ok: false, error: { errorType: 'Runtime.ExitError', errorMessage: 'Runtime exited before the invocation' } });
      this.child.send({
        id: awsRequestId,
        event,
        context: {
          awsRequestId,
          deadline,
          invokedFunctionArn: `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${fn.name}`,
          traceId: traceHeader,
        },
      });
    });
  }

  private settleAs(resolve: (outcome: Outcome) => void, outcome: Outcome): void {
    if (!this.pending) return;
    this.pending = undefined;
    resolve(outcome);
  }

  stop(): Promise<void> {
    this.alive = false;
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    return this.exited;
  }
}

function tooLarge(message: { ok?: boolean; result?: unknown }): Outcome | undefined {
  if (!message.ok || Buffer.byteLength(JSON.stringify(message.result ?? null)) <= MAX_RESPONSE_BYTES) return undefined;
  return { ok: false, error: { errorType: 'Function.ResponseSizeTooLarge', errorMessage: 'Response payload size exceeded maximum allowed payload size (6291556 bytes).' } };
}

/** The X-Amzn-Trace-Id header of an API Gateway event (proxy or REQUEST authorizer), if any. */
function upstreamTraceHeader(event: unknown): string | undefined {
  const headers = (event as { headers?: Record<string, string | undefined> } | null)?.headers ?? {};
  const name = Object.keys(headers).find((key) => key.toLowerCase() === 'x-amzn-trace-id');
  return name === undefined ? undefined : headers[name];
}
