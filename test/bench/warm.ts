import { fork, type ChildProcess } from 'node:child_process';
import type { DynamoDbCall } from '../support/round-trips';

/** One invocation in a warm sandbox: the handler's elapsed time, its answer, the DynamoDB requests it sent. */
export interface WarmAnswer {
  ms: number;
  statusCode: number;
  body: string;
  calls: DynamoDbCall[];
}

const RUNTIME = new URL('./warm-runtime.mjs', import.meta.url);

/**
 * A function's deployed bundle, warm, in a process of its own started with its Lambda environment
 * (warm-runtime.mjs), as Lambda runs it: the warm latency is measured on what deploys. The bare
 * SDK's baseline runs bundled alike beside it (bare-replay.ts), with its own copy of the SDK, in
 * the same process: both meet the same caches after the same idle gaps. One call at a time.
 */
export class WarmSandbox {
  private readonly stderr: string[] = [];
  private readonly child: ChildProcess;
  private readonly name: string;
  private constructor(child: ChildProcess, name: string) {
    this.child = child;
    this.name = name;
    child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr.push(chunk.toString());
      if (this.stderr.length > 50) this.stderr.shift();
    });
  }

  /** Started with `environment` (LAMBDA_TASK_ROOT names the bundle's directory); resolves once its init has ended. */
  static async start(name: string, environment: Record<string, string>): Promise<WarmSandbox> {
    const child = fork(RUNTIME, [], {
      env: environment,
      execArgv: [],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'json',
    });
    const sandbox = new WarmSandbox(child, name);
    await sandbox.next();
    return sandbox;
  }

  invoke(event: unknown): Promise<WarmAnswer> {
    const answer = this.next<WarmAnswer>();
    this.child.send({ event });
    return answer;
  }

  /** `calls` through the bare SDK bundled beside the function (BENCH_BARE_REPLAY at start). */
  replay(calls: DynamoDbCall[]): Promise<WarmAnswer> {
    const answer = this.next<WarmAnswer>();
    this.child.send({ replay: calls });
    return answer;
  }

  stop(): void {
    if (this.child.connected) this.child.disconnect();
    this.child.kill();
  }

  private next<T>(): Promise<T> {
    return new Promise((resolve, reject) => {
      const exited = (code: number | null) =>
        reject(new Error(`warm sandbox of ${this.name} exited (${code}): ${this.stderr.join('')}`));
      this.child.once('exit', exited);
      this.child.once('message', (message: T) => {
        this.child.off('exit', exited);
        resolve(message);
      });
    });
  }
}
