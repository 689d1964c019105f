import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
export { freePort } from '#infra/local/ports';

export const TSX = 'node_modules/.bin/tsx';

export const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Polls until `check` holds or the time runs out; returns whether it held. */
export async function eventually(check: () => boolean, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

/** A child process whose output is collected, with a way to wait for a line. */
export function run(
  args: string[],
  env: Record<string, string | undefined>,
): {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
} {
  const child = spawn(args[0]!, args.slice(1), { env: { ...process.env, ...env }, stdio: 'pipe' });
  let output = '';
  child.stdout.on('data', (c: Buffer) => {
    output += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    output += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited,
    async waitFor(pattern, ms = 45_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const match = pattern.exec(output);
        if (match) return match;
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`never printed ${pattern}:\n${output}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

/** Runs a command to completion and returns its exit code and output. */
export async function runToEnd(args: string[], env: Record<string, string | undefined>) {
  const proc = run(args, env);
  const code = await proc.exited;
  return { code, output: proc.output() };
}
