import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { dirname } from 'node:path';
import { newTraceId } from '#infra/local/aws/xray';
import { median } from './stats';

/**
 * Warm cost of each tracer in a Lambda-like sandbox (issue 23): per candidate and function, one
 * child process started with the function's Lambda environment (AWS_EXECUTION_ENV,
 * LAMBDA_TASK_ROOT, the daemon's address…) runs the candidate's bundle
 * (lambda-like-runtime.mjs), against DynamoDB Local, with a trace header per invocation as Lambda
 * sets it: sampled (`Sampled=1`) or not. Each candidate has its own UDP listener standing in for
 * the daemon, which counts what it is sent. Batches are interleaved across candidates, so drift on
 * a shared machine hits all alike; the overhead is a candidate's p50 minus the floor's (no tracing).
 */
export interface WarmCandidate {
  name: string;
  floor?: true;
  bundles: Map<string, string>;
}
export interface WarmFunction {
  name: string;
  environment: Record<string, string>;
  events(count: number): unknown[];
}
export type Mode = 'sampled' | 'unsampled';

export interface WarmRow {
  candidate: string;
  function: string;
  mode: Mode;
  p50Ms: number;
  p50CpuMs: number;
  overheadMs: number;
  overheadCpuMs: number;
  datagramsPerRequest: number;
  bytesPerRequest: number;
}

const RUNTIME = new URL('./lambda-like-runtime.mjs', import.meta.url);
const BATCH = 20;

interface Sandbox {
  child: ChildProcess;
  stderr: string[];
  ready: Promise<void>;
}

function startSandbox(bundle: string, environment: Record<string, string>): Sandbox {
  const child = fork(RUNTIME, [], {
    env: environment,
    execArgv: [],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    serialization: 'json',
  });
  const stderr: string[] = [];
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr.push(chunk.toString());
    if (stderr.length > 50) stderr.shift();
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) =>
      reject(new Error(`Lambda-like sandbox for ${bundle} exited (${code}) before its init ended: ${stderr.join('')}`)),
    );
  });
  return { child, stderr, ready };
}

function runBatch(
  sandbox: Sandbox,
  events: unknown[],
  traceHeaders: string[],
): Promise<{ timings: Array<[number, number]>; statuses: number[] }> {
  return new Promise((resolve, reject) => {
    const exited = (code: number | null) =>
      reject(new Error(`Lambda-like sandbox exited (${code}): ${sandbox.stderr.join('')}`));
    sandbox.child.once('exit', exited);
    sandbox.child.once('message', (message: { timings: Array<[number, number]>; statuses: number[] }) => {
      sandbox.child.off('exit', exited);
      resolve(message);
    });
    sandbox.child.send({ events, traceHeaders });
  });
}

const header = (mode: Mode) =>
  `Root=${newTraceId()};Parent=${randomBytes(8).toString('hex')};Sampled=${mode === 'sampled' ? 1 : 0}`;

export async function benchTracersWarm(options: {
  candidates: WarmCandidate[];
  functions: WarmFunction[];
  environment: Record<string, string>;
  iterations: number;
  log(line: string): void;
}): Promise<WarmRow[]> {
  const { candidates, functions } = options;
  const daemons = new Map<string, { socket: Socket; received: { datagrams: number; bytes: number } }>();
  const sandboxes = new Map<string, Sandbox>();
  const key = (candidate: string, fn: string) => `${candidate}\0${fn}`;
  try {
    for (const candidate of candidates) {
      const socket = createSocket('udp4');
      const received = { datagrams: 0, bytes: 0 };
      socket.on('message', (message) => {
        received.datagrams++;
        received.bytes += message.length;
      });
      await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
      daemons.set(candidate.name, { socket, received });
      for (const fn of functions) {
        const bundle = candidate.bundles.get(fn.name)!;
        sandboxes.set(
          key(candidate.name, fn.name),
          startSandbox(bundle, {
            ...fn.environment,
            ...options.environment,
            LAMBDA_TASK_ROOT: dirname(bundle),
            AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${socket.address().port}`,
          }),
        );
      }
    }
    await Promise.all([...sandboxes.values()].map((sandbox) => sandbox.ready));

    const samples = new Map<string, Array<[number, number]>>();
    const sent = new Map<string, { datagrams: number; bytes: number; requests: number }>();
    const rounds = 1 + Math.ceil(options.iterations / BATCH); // the first round warms up
    for (let round = 0; round < rounds; round++) {
      for (const mode of ['sampled', 'unsampled'] as Mode[]) {
        for (const fn of functions) {
          // A different candidate goes first each round.
          for (const candidate of candidates.map((_, i) => candidates[(i + round) % candidates.length]!)) {
            const daemon = daemons.get(candidate.name)!;
            const before = { ...daemon.received };
            const events = fn.events(BATCH);
            const { timings, statuses } = await runBatch(
              sandboxes.get(key(candidate.name, fn.name))!,
              events,
              events.map(() => header(mode)),
            );
            const failed = statuses.filter((status) => status >= 300);
            if (failed.length > 0)
              throw new Error(`${candidate.name} ${fn.name}: answered ${failed.join(', ')} in the Lambda-like sandbox`);
            if (round === 0) continue;
            const k = `${key(candidate.name, fn.name)}\0${mode}`;
            samples.set(k, [...(samples.get(k) ?? []), ...timings]);
            await new Promise((resolve) => setTimeout(resolve, 5)); // the last datagrams on loopback
            const total = sent.get(k) ?? { datagrams: 0, bytes: 0, requests: 0 };
            total.datagrams += daemon.received.datagrams - before.datagrams;
            total.bytes += daemon.received.bytes - before.bytes;
            total.requests += events.length;
            sent.set(k, total);
          }
        }
      }
      options.log(`  round ${round + 1}/${rounds}`);
    }

    const rows: WarmRow[] = [];
    for (const fn of functions) {
      for (const mode of ['sampled', 'unsampled'] as Mode[]) {
        const floor = candidates.find((c) => c.floor)!;
        const floorSamples = samples.get(`${key(floor.name, fn.name)}\0${mode}`)!;
        const [floorMs, floorCpu] = [median(floorSamples.map((s) => s[0])), median(floorSamples.map((s) => s[1]))];
        for (const candidate of candidates) {
          const k = `${key(candidate.name, fn.name)}\0${mode}`;
          const timings = samples.get(k)!;
          const [p50Ms, p50CpuMs] = [median(timings.map((s) => s[0])), median(timings.map((s) => s[1]))];
          const total = sent.get(k)!;
          rows.push({
            candidate: candidate.name,
            function: fn.name,
            mode,
            p50Ms,
            p50CpuMs,
            overheadMs: p50Ms - floorMs,
            overheadCpuMs: p50CpuMs - floorCpu,
            datagramsPerRequest: total.datagrams / total.requests,
            bytesPerRequest: total.bytes / total.requests,
          });
        }
      }
    }
    return rows;
  } finally {
    for (const sandbox of sandboxes.values()) sandbox.child.kill('SIGKILL');
    for (const { socket } of daemons.values()) socket.close();
  }
}
