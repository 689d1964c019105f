import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { run, runToEnd } from './processes';

/**
 * The operator CLI's command line: what `npm run admin -- …` runs (tsx on infra/admin/main.ts),
 * as one process, node with tsx's loader, so a signal sent to it reaches the CLI itself.
 */
export const ADMIN_CLI = [process.execPath, '--import', 'tsx', 'infra/admin/main.ts'];

type Env = Record<string, string | undefined>;
type Streams = { stdout: string; stderr: string };

/** `npm run admin -- …args` run to its end: its exit code and its stdout and stderr together. */
export const admin = (args: string[], env: Env = {}) => runToEnd([...ADMIN_CLI, ...args], env);

/** `npm run admin -- …args` started, its output collected: for a test that writes its stdin or kills it. */
export const startAdmin = (args: string[], env: Env = {}) => run([...ADMIN_CLI, ...args], env);

/** `npm run admin -- …args` run to its end, with its stdout and stderr apart. */
export async function adminStreams(args: string[], env: Env = {}): Promise<{ code: number } & Streams> {
  const [node, ...cli] = ADMIN_CLI as [string, ...string[]];
  try {
    const { stdout, stderr } = await promisify(execFile)(node, [...cli, ...args], { env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number } & Streams;
    return { code, stdout, stderr };
  }
}

/** The first line of the output that is a JSON object (what `--json` prints), parsed. */
export function jsonLine(output: string) {
  const line = output.split('\n').find((candidate) => candidate.startsWith('{'));
  if (line === undefined) throw new Error(`no JSON object in the output:\n${output}`);
  return JSON.parse(line);
}
