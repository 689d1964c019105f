import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { InvokeStoreBase } from '@aws/lambda-invoke-store';
import type { Context } from 'aws-lambda';
import { LOCAL_ACCOUNT, LOCAL_REGION, type Stack } from './cloudformation';
import type { InvocationResult } from './lambda';

/**
 * Lambda for `npm run dev`: each function of the template runs its TypeScript handler in this
 * process (the file its Description names, `functions/comments/create.ts`), loaded on its first
 * invocation. No bundle, no instance of its own, no timeout or memory limit, no role: the inner
 * loop, behind the same API Gateway as `npm start` (lambda.ts runs the bundles, isolated).
 */
export class InProcessLambda {
  /** Function logical id → its handler file under functions/. */
  private readonly files = new Map<string, string>();
  /** Function logical id → the qualifiers its versions and aliases give it. */
  private readonly qualifiers = new Map<string, Set<string>>();
  private readonly handlers = new Map<string, Promise<Handler>>();

  constructor(stack: Stack) {
    for (const [logicalId, fn] of stack.resourcesOf('AWS::Lambda::Function')) {
      const file = /functions\/\S+\.ts$/.exec(String(fn.Properties?.Description ?? ''))?.[0];
      if (!file)
        throw new Error(`Lambda ${logicalId}: its Description names no functions/*.ts handler to run in process`);
      this.files.set(logicalId, file);
      // The functions share this process: each one's template environment, where this process has not set it.
      for (const [name, value] of Object.entries(
        (fn.Properties?.Environment?.Variables ?? {}) as Record<string, unknown>,
      )) {
        process.env[name] ??= stack.string(value);
      }
    }
    const functionOf = (name: unknown) => stack.string(name).split(':function:').pop()!.split(':')[0]!;
    for (const [logicalId, version] of stack.resourcesOf('AWS::Lambda::Version')) {
      this.qualify(functionOf(version.Properties.FunctionName), stack.versionNumber(logicalId));
    }
    for (const [, alias] of stack.resourcesOf('AWS::Lambda::Alias')) {
      this.qualify(functionOf(alias.Properties.FunctionName), stack.string(alias.Properties.Name));
    }
    concurrentInvocations();
  }

  private qualify(fn: string, qualifier: string): void {
    this.qualifiers.set(fn, (this.qualifiers.get(fn) ?? new Set()).add(qualifier));
  }

  /** `NAME`, `NAME:ALIAS`, `NAME:VERSION` or `NAME:$LATEST` → the function's handler file; undefined if none. */
  resolve(target: string): string | undefined {
    const [name, qualifier = '$LATEST'] = target.split(':');
    if (qualifier !== '$LATEST' && !this.qualifiers.get(name!)?.has(qualifier)) return undefined;
    return this.files.get(name!);
  }

  async invoke(target: string, event: unknown): Promise<InvocationResult> {
    const file = this.resolve(target);
    if (!file) throw new Error(`No function, version or alias ${target} in the template`);
    const name = target.split(':')[0]!;
    const loaded = this.handlers.has(file);
    const context = lambdaContext(name);
    try {
      const handler = await this.handlerIn(file);
      const result = await invocation(context, () => handler(event, context));
      return { ok: true, result, coldStart: !loaded, instanceId: 'in-process' };
    } catch (error) {
      const { name: errorType = 'Error', message: errorMessage = String(error) } = error instanceof Error ? error : {};
      return { ok: false, error: { errorType, errorMessage }, coldStart: !loaded, instanceId: 'in-process' };
    }
  }

  private handlerIn(file: string): Promise<Handler> {
    if (!this.handlers.has(file)) {
      this.handlers.set(
        file,
        (async () => {
          // A computed path (not a template literal) so test runners load nested handler files too.
          const module = (await import(fileURLToPath(new URL(`../../../${file}`, import.meta.url)))) as {
            handler?: unknown;
          };
          if (typeof module.handler !== 'function') throw new Error(`${file} does not export a handler`);
          return module.handler as Handler;
        })(),
      );
    }
    return this.handlers.get(file)!;
  }

  async close(): Promise<void> {}
}

type Handler = (event: unknown, context: Context) => Promise<unknown>;

/**
 * Every function runs in this one process, many invocations at once: as Lambda does when an
 * environment takes concurrent invocations (AWS_LAMBDA_MAX_CONCURRENCY), each invocation gets its
 * own InvokeStore context, where Powertools keeps its per-invocation state (the logger's keys and
 * Lambda context), so no request's keys end up on another's log lines. Installed in place of any
 * store already there: the AWS SDK creates a single-context one on its first call.
 */
class ConcurrentInvocations extends InvokeStoreBase {
  readonly #contexts = new AsyncLocalStorage<Record<string | symbol, unknown>>();
  getContext() {
    return this.#contexts.getStore();
  }
  hasContext() {
    return this.#contexts.getStore() !== undefined;
  }
  get<T>(key: string | symbol) {
    return this.#contexts.getStore()?.[key] as T | undefined;
  }
  set<T>(key: string | symbol, value: T) {
    const context = this.#contexts.getStore();
    if (!context || this.isProtectedKey(key)) throw new Error(`InvokeStore: cannot set ${String(key)} here`);
    context[key] = value;
  }
  run<T>(context: Record<string | symbol, unknown>, fn: () => T): T {
    return this.#contexts.run(context, fn);
  }
}
const invocations = new ConcurrentInvocations();

function concurrentInvocations(): void {
  const lambda = globalThis as { awslambda?: Record<string, unknown> };
  (lambda.awslambda ??= {}).InvokeStore = invocations;
  process.env.AWS_LAMBDA_MAX_CONCURRENCY ??= '1000';
}

/** One invocation in its own InvokeStore context, keyed by its request id as the runtime does. */
function invocation<T>(context: Context, invoke: () => Promise<T>): Promise<T> {
  return invocations.run({ [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: context.awsRequestId }, invoke);
}

/** The Lambda context an in-process invocation gets: 29 s left, as API Gateway's integration timeout. */
export function lambdaContext(functionName: string): Context {
  const deadline = Date.now() + 29_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
