import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Stack } from './cloudformation';
import { LOCAL_ACCOUNT, LOCAL_REGION } from './cloudformation';
import { PROJECT_ROOT } from '../assembly';
import { lambdaTraceHeader } from './xray';
import { lambdaNiceness } from '../settings';

/**
 * The local stand-in for Lambda: every function of the template runs its synthesized bundle with
 * exactly the template's handler, environment, memory and timeout, each instance a child process
 * of its own (module state, `process.env`, NODE_OPTIONS) serving one invocation at a time, as
 * Lambda runs them. What it plays, and what stops the start: docs/design.md, "What the local stack
 * emulates".
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
  /** ReservedConcurrentExecutions: invocations in flight at most (all versions together); undefined = unreserved. */
  reservedConcurrency?: number;
}

export interface InvocationResult {
  ok: boolean;
  /** The handler's return value when ok. */
  result?: unknown;
  /** Lambda's error shape when not ok: `Sandbox.Timedout`, `Runtime.ExitError`, or what the handler threw. */
  error?: { errorType: string; errorMessage: string };
  coldStart: boolean;
  instanceId: string;
  /** Lambda refused the invocation (throttled: the reserved concurrency is in use); the function never ran. */
  rejected?: boolean;
}

/** One invocation as Lambda resolved it: the function, the qualifier it was called with, the version that ran. */
export interface Invocation {
  function: string;
  /** The alias or version named in the ARN, `$LATEST` when none. */
  qualifier: string;
  version: string;
}

export interface LambdaOptions {
  /** Extra variables for every function: the emulator's credentials and endpoints. */
  environmentFor(fn: FunctionConfig): Record<string, string>;
  /** Where each log line goes, labelled with its function (like its log stream). */
  log(functionName: string, line: string): void;
  /** The instances' niceness (default: LOCAL_LAMBDA_NICENESS, infra/local/settings.ts). */
  niceness?: number;
  /** Each invocation once it ended, with the trace header it ran under (X-Ray's function segment). */
  onInvoked?(invocation: { name: string; traceHeader: string; startedAt: number; endedAt: number; ok: boolean }): void;
}

const SUPPORTED_RUNTIMES = /^nodejs\d+\.x$/;
/** https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html: the Init phase is limited to 10 seconds. */
export const INIT_TIMEOUT_MS = 10_000;
/**
 * Function properties: those emulated, and those with no effect on a synchronous invocation here.
 * Any other (layers, SnapStart, a file system, a container image, …) stops the start.
 */
const FUNCTION_PROPERTIES = new Set([
  'Code',
  'Handler',
  'Runtime',
  'Timeout',
  'MemorySize',
  'Environment',
  'Role',
  'ReservedConcurrentExecutions',
  'Architectures',
  'Description',
  'FunctionName',
  'LoggingConfig',
  'TracingConfig',
  'Tags',
  'RuntimeManagementConfig',
  'EphemeralStorage',
]);
/** A version is its function's code and configuration at publication; these describe it, nothing more. */
const VERSION_PROPERTIES = new Set(['FunctionName', 'Description', 'CodeSha256']);
const ALIAS_PROPERTIES = new Set(['FunctionName', 'FunctionVersion', 'Name', 'Description']);
/** https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html: 6 MB synchronous response. */
const MAX_RESPONSE_BYTES = 6 * 1024 * 1024;

export class LambdaService {
  readonly functions: ReadonlyMap<string, FunctionConfig>;
  /** Each function's published versions (by number) and aliases (name → version number). */
  private readonly versions = new Map<string, Set<string>>();
  private readonly aliases = new Map<string, Map<string, string>>();
  private readonly pools = new Map<string, Instance[]>();
  private readonly busy = new Set<Instance>();
  /** Invocations in flight, by function logical id (all versions: what a reservation caps). */
  private readonly inFlight = new Map<string, number>();
  private readonly options: LambdaOptions;
  private readonly niceness: number;
  /** Every instance ever started, by function logical id (tests count cold starts with it). */
  readonly started = new Map<string, number>();
  /** The latest invocations as Lambda resolved them (newest last). */
  readonly invocations: Invocation[] = [];

  constructor(stack: Stack, options: LambdaOptions) {
    this.options = options;
    this.niceness = options.niceness ?? lambdaNiceness();
    if (this.niceness > 0) {
      try {
        execFileSync('nice', ['-n', String(this.niceness), 'true'], { stdio: 'ignore' });
      } catch {
        throw new Error(
          'the local Lambda starts its instances with nice(1), which is not on PATH: set LOCAL_LAMBDA_NICENESS=0',
        );
      }
    }
    this.functions = new Map(
      stack.resourcesOf('AWS::Lambda::Function').map(([logicalId, resource]) => {
        const p = resource.Properties;
        const runtime = String(p.Runtime);
        if (!SUPPORTED_RUNTIMES.test(runtime))
          throw new Error(`Lambda ${logicalId}: the local stack runs Node.js runtimes only, not ${runtime}`);
        if (p.Layers) throw new Error(`Lambda ${logicalId}: layers are not emulated`);
        const unknown = Object.keys(p).filter((key) => !FUNCTION_PROPERTIES.has(key));
        if (unknown.length > 0)
          throw new Error(`Lambda ${logicalId}: ${unknown.join(', ')} not emulated by the local stack`);
        // What CloudFormation refuses (AWS::Lambda::Function: Timeout 1-900 s, MemorySize 128-10240 MB).
        const timeout = Number(p.Timeout ?? 3); // Lambda's default timeout
        const memory = Number(p.MemorySize ?? 128);
        if (!Number.isInteger(timeout) || timeout < 1 || timeout > 900)
          throw new Error(`Lambda ${logicalId}: Timeout ${p.Timeout} is refused by Lambda (1 to 900 seconds)`);
        if (!Number.isInteger(memory) || memory < 128 || memory > 10_240)
          throw new Error(`Lambda ${logicalId}: MemorySize ${p.MemorySize} is refused by Lambda (128 to 10240 MB)`);
        const reserved =
          p.ReservedConcurrentExecutions === undefined ? undefined : Number(p.ReservedConcurrentExecutions);
        if (reserved !== undefined && (!Number.isInteger(reserved) || reserved < 0))
          throw new Error(
            `Lambda ${logicalId}: ReservedConcurrentExecutions ${p.ReservedConcurrentExecutions} is refused by Lambda (0 or more)`,
          );
        const environment = Object.fromEntries(
          Object.entries((p.Environment?.Variables ?? {}) as Record<string, unknown>).map(([name, value]) => [
            name,
            stack.string(value),
          ]),
        );
        const role = p.Role?.['Fn::GetAtt']?.[0] as string | undefined;
        if (!role) throw new Error(`Lambda ${logicalId}: its role is not a role of this template`);
        const config: FunctionConfig = {
          logicalId,
          name: logicalId,
          codeDirectory: stack.assetDirectory(p.Code),
          handler: String(p.Handler),
          runtime,
          timeoutSeconds: timeout,
          memoryMb: memory,
          environment,
          roleLogicalId: role,
          node: nodeFor(logicalId, runtime),
          ...(reserved === undefined ? {} : { reservedConcurrency: reserved }),
        };
        return [logicalId, config];
      }),
    );

    const functionOf = (kind: string, logicalId: string, name: unknown): string => {
      const fn = stack.string(name).split(':function:').pop()!.split(':')[0]!;
      if (!this.functions.has(fn))
        throw new Error(`${kind} ${logicalId}: FunctionName does not name a function of this template`);
      return fn;
    };
    for (const [logicalId, version] of stack.resourcesOf('AWS::Lambda::Version')) {
      const unknown = Object.keys(version.Properties ?? {}).filter((key) => !VERSION_PROPERTIES.has(key));
      if (unknown.length > 0)
        throw new Error(`Lambda version ${logicalId}: ${unknown.join(', ')} not emulated by the local stack`);
      const fn = functionOf('Lambda version', logicalId, version.Properties.FunctionName);
      this.versions.set(fn, (this.versions.get(fn) ?? new Set()).add(stack.versionNumber(logicalId)));
    }
    for (const [logicalId, alias] of stack.resourcesOf('AWS::Lambda::Alias')) {
      // RoutingConfig (weights between two versions) is what CodeDeploy sets during a shift, never a template's state here.
      const unknown = Object.keys(alias.Properties ?? {}).filter((key) => !ALIAS_PROPERTIES.has(key));
      if (unknown.length > 0)
        throw new Error(`Lambda alias ${logicalId}: ${unknown.join(', ')} not emulated by the local stack`);
      const fn = functionOf('Lambda alias', logicalId, alias.Properties.FunctionName);
      const version = stack.string(alias.Properties.FunctionVersion);
      if (version !== '$LATEST' && !this.versions.get(fn)?.has(version))
        throw new Error(`Lambda alias ${logicalId}: version ${version} is not a version of ${fn} in this template`);
      const aliases = this.aliases.get(fn) ?? new Map<string, string>();
      aliases.set(stack.string(alias.Properties.Name), version);
      this.aliases.set(fn, aliases);
    }
  }

  /**
   * `NAME`, `NAME:ALIAS`, `NAME:VERSION` or `NAME:$LATEST` (a Lambda ARN's last parts) → the
   * function and the version Lambda runs for it; undefined for a qualifier the function lacks.
   */
  resolve(target: string): { fn: FunctionConfig; qualifier: string; version: string } | undefined {
    const [name, qualifier = '$LATEST'] = target.split(':');
    const fn = this.functions.get(name!);
    if (!fn) return undefined;
    if (qualifier === '$LATEST') return { fn, qualifier, version: qualifier };
    if (this.versions.get(name!)?.has(qualifier)) return { fn, qualifier, version: qualifier };
    const version = this.aliases.get(name!)?.get(qualifier);
    return version === undefined ? undefined : { fn, qualifier, version };
  }

  async invoke(target: string, event: unknown): Promise<InvocationResult> {
    const resolved = this.resolve(target);
    if (!resolved) throw new Error(`No function, version or alias ${target} in the template`);
    const { fn, qualifier, version } = resolved;
    // Reserved concurrency: past it, Lambda refuses the invocation (429 TooManyRequestsException).
    const running = this.inFlight.get(fn.logicalId) ?? 0;
    if (fn.reservedConcurrency !== undefined && running >= fn.reservedConcurrency) {
      return {
        ok: false,
        rejected: true,
        error: { errorType: 'TooManyRequestsException', errorMessage: 'Rate Exceeded.' },
        coldStart: false,
        instanceId: '',
      };
    }
    this.inFlight.set(fn.logicalId, running + 1);
    this.invocations.push({ function: fn.logicalId, qualifier, version });
    if (this.invocations.length > 10_000) this.invocations.splice(0, 5_000);
    const poolKey = `${fn.logicalId}:${version}`;
    const pool = this.pools.get(poolKey) ?? [];
    this.pools.set(poolKey, pool);
    let warm = pool.pop();
    while (warm && !warm.alive) warm = pool.pop(); // an idle instance that died is gone, as in Lambda
    let instance = warm ?? this.startInstance(fn, version);
    this.busy.add(instance);
    // Lambda continues the trace its caller started (API Gateway's X-Amzn-Trace-Id) under a segment of its own.
    const traceHeader = lambdaTraceHeader(upstreamTraceHeader(event));
    const startedAt = Date.now();
    const invokedArn = `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${fn.name}${qualifier === '$LATEST' ? '' : `:${qualifier}`}`;
    try {
      let outcome = await instance.invoke(event, fn, traceHeader, invokedArn);
      if (outcome === 'init-timed-out') {
        // Lambda retries an Init that passed its 10 s with the first invocation, within the function's timeout.
        this.busy.delete(instance);
        instance = this.startInstance(fn, version, { suppressedInit: true });
        this.busy.add(instance);
        outcome = await instance.invoke(event, fn, traceHeader, invokedArn);
      }
      const settled = outcome as Outcome;
      this.options.onInvoked?.({ name: fn.name, traceHeader, startedAt, endedAt: Date.now(), ok: settled.ok });
      // An instance whose Init failed is not reused: the next invocation starts a fresh one, as Lambda runs Init again.
      if (instance.alive && !instance.initFailed) pool.push(instance);
      else if (instance.initFailed) void instance.stop();
      return { ...settled, coldStart: !warm, instanceId: instance.id };
    } finally {
      this.busy.delete(instance);
      this.inFlight.set(fn.logicalId, (this.inFlight.get(fn.logicalId) ?? 1) - 1);
    }
  }

  /** Stops every instance, busy or idle. */
  async close(): Promise<void> {
    const all = [...this.busy, ...[...this.pools.values()].flat()];
    this.pools.clear();
    await Promise.all(all.map((instance) => instance.stop()));
  }

  private startInstance(fn: FunctionConfig, version: string, options: { suppressedInit?: boolean } = {}): Instance {
    this.started.set(fn.logicalId, (this.started.get(fn.logicalId) ?? 0) + 1);
    const env = { ...lambdaEnvironment(fn, version), ...fn.environment, ...this.options.environmentFor(fn) };
    return new Instance(fn, env, this.options.log, this.niceness, options.suppressedInit ?? false);
  }
}

/** The variables Lambda itself sets in every function's environment (Lambda: "Defined runtime environment variables"). */
export function lambdaEnvironment(fn: FunctionConfig, version = '$LATEST'): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    AWS_REGION: LOCAL_REGION,
    AWS_DEFAULT_REGION: LOCAL_REGION,
    AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
    AWS_LAMBDA_FUNCTION_NAME: fn.name,
    AWS_LAMBDA_FUNCTION_VERSION: version,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.name}`,
    AWS_LAMBDA_LOG_STREAM_NAME: `local/[${version}]${randomBytes(16).toString('hex')}`,
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
      try {
        nodeVersions.set(candidate, execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim());
      } catch {
        nodeVersions.set(candidate, '');
      }
    }
    if (nodeVersions.get(candidate)!.startsWith(`v${major}.`)) return candidate;
  }
  throw new Error(
    `Lambda ${logicalId}: runtime ${runtime} needs Node.js ${major}; run npm install (the project pins it)`,
  );
}

const RUNTIME = new URL('./lambda-runtime.mjs', import.meta.url);

type Outcome = Pick<InvocationResult, 'ok' | 'result' | 'error'>;

class Instance {
  readonly id = randomUUID();
  alive = true;
  /** Its Init (loading the handler module) threw. */
  initFailed = false;
  private readonly child: ChildProcess;
  /** The runtime's first message, sent once its Init (loading the handler module) has ended. */
  private readonly ready: Promise<void>;
  private readonly exited: Promise<void>;
  private pending?: { id: string; settle(outcome: Outcome): void };
  /** An Init retried with the first invocation: it counts against the function's timeout. */
  private readonly suppressedInit: boolean;

  constructor(
    fn: FunctionConfig,
    env: Record<string, string>,
    log: LambdaOptions['log'],
    niceness: number,
    suppressedInit: boolean,
  ) {
    this.suppressedInit = suppressedInit;
    // No Node flag in execArgv: the emulator's own loader flags must not reach the function, only
    // its NODE_OPTIONS. Niced, the services answer first, as on AWS, where an instance never takes
    // their CPU (settings.ts). Started through nice(1), so every thread of the runtime is born niced.
    const niced = niceness > 0;
    this.child = fork(RUNTIME, [], {
      env,
      execPath: niced ? 'nice' : fn.node,
      execArgv: niced ? ['-n', String(niceness), fn.node] : [],
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'json',
    });
    for (const stream of [this.child.stdout!, this.child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => log(fn.name, line));
    }
    this.ready = new Promise((resolve) =>
      this.child.once('message', (message: { initFailed?: boolean }) => {
        this.initFailed = message.initFailed === true;
        resolve();
      }),
    );
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    this.child.on('message', (message: { id?: string; ok?: boolean; result?: unknown; error?: Outcome['error'] }) => {
      if (message.id && message.id === this.pending?.id)
        this.pending.settle(tooLarge(message) ?? { ok: message.ok!, result: message.result, error: message.error });
    });
    this.child.once('exit', (code, signal) => {
      this.alive = false;
      this.pending?.settle({
        ok: false,
        error: {
          errorType: 'Runtime.ExitError',
          errorMessage: `RequestId: ${this.pending.id} Error: Runtime exited with ${signal ? `signal: ${signal}` : `error: exit status ${code}`}`,
        },
      });
    });
  }

  /**
   * One invocation. The Init of a new instance has 10 s of its own before the timeout starts
   * (https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html); past them the
   * instance is stopped and 'init-timed-out' returned, for the caller to retry it as Lambda does.
   */
  async invoke(
    event: unknown,
    fn: FunctionConfig,
    traceHeader: string,
    invokedFunctionArn: string,
  ): Promise<Outcome | 'init-timed-out'> {
    const awsRequestId = randomUUID();
    let deadline = Date.now() + fn.timeoutSeconds * 1000;
    if (!this.suppressedInit) {
      let timer: NodeJS.Timeout | undefined;
      const initEnded = await Promise.race([
        this.ready.then(() => true),
        this.exited.then(() => true),
        new Promise<false>((resolve) => {
          timer = setTimeout(() => resolve(false), INIT_TIMEOUT_MS);
        }),
      ]);
      clearTimeout(timer);
      if (!initEnded) {
        await this.stop();
        return 'init-timed-out';
      }
      deadline = Date.now() + fn.timeoutSeconds * 1000;
    }
    return new Promise<Outcome>((resolve) => {
      const timer = setTimeout(() => {
        // Lambda ends a timed-out invocation by stopping its instance; the next one starts cold.
        this.settleAs(resolve, {
          ok: false,
          error: {
            errorType: 'Sandbox.Timedout',
            errorMessage: `${awsRequestId} Task timed out after ${fn.timeoutSeconds.toFixed(2)} seconds`,
          },
        });
        void this.stop();
      }, deadline - Date.now());
      this.pending = {
        id: awsRequestId,
        settle: (outcome) => {
          clearTimeout(timer);
          this.settleAs(resolve, outcome);
        },
      };
      if (!this.alive)
        return this.pending.settle({
          ok: false,
          error: { errorType: 'Runtime.ExitError', errorMessage: 'Runtime exited before the invocation' },
        });
      // A retried Init runs first in the runtime (it awaits its handler), within this timeout.
      this.child.send({
        id: awsRequestId,
        event,
        context: {
          awsRequestId,
          deadline,
          invokedFunctionArn,
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
  return {
    ok: false,
    error: {
      errorType: 'Function.ResponseSizeTooLarge',
      errorMessage: 'Response payload size exceeded maximum allowed payload size (6291556 bytes).',
    },
  };
}

/** The X-Amzn-Trace-Id header of an API Gateway event (proxy or REQUEST authorizer), if any. */
function upstreamTraceHeader(event: unknown): string | undefined {
  const headers = (event as { headers?: Record<string, string | undefined> } | null)?.headers ?? {};
  const name = Object.keys(headers).find((key) => key.toLowerCase() === 'x-amzn-trace-id');
  return name === undefined ? undefined : headers[name];
}
