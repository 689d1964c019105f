import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import {
  COMMANDS,
  confirmationProblem,
  failureHint,
  preflight,
  usage,
  whatItDoes,
  type Command,
} from '#infra/ops/preflight';

/**
 * `npm run deploy|diff|destroy -- [-c stage=NAME] [-c key=value …] [CDK CLI options]`: the CDK CLI's
 * command, after a check that needs no synthesis and no AWS call (infra/ops/preflight.ts). What is
 * missing is said in one line each, with what to do, and nothing is synthesized. Node runs this
 * file itself (type stripping; the imports map finds the .ts files): no tsx start-up, so the check
 * answers in a fraction of a second.
 */
const PROJECT_ROOT = resolve(import.meta.dirname, '../..');

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv as [Command, ...string[]];
  if (!COMMANDS.includes(command)) {
    console.error(`infra/ops/cdk.ts: the command is one of ${COMMANDS.join(', ')}`);
    return 2;
  }
  if (args.includes('--help') || args.includes('-h')) {
    console.log(usage(command));
    return 0;
  }
  const cdkJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  const check = preflight({ args, env: process.env, cdkContext: cdkJson.context ?? {} });
  if (command === 'destroy' && !check.stageNamed) {
    check.problems.unshift({
      what: 'no stage named',
      fix: "npm run destroy -- -c stage=<stage> (destroy deletes that stage's stack; there is no default)",
    });
  }
  const confirmation = confirmationProblem(command, args, Boolean(process.stdout.isTTY));
  if (confirmation) check.problems.push(confirmation);
  if (check.problems.length > 0) {
    for (const { what, fix } of check.problems) console.error(`${command}: ${what}: ${fix}.`);
    return 1;
  }
  for (const line of whatItDoes(command, check)) console.log(line);

  // The CLI on the terminal as it is (deploy and destroy ask before changes they judge risky); its
  // stderr passes through and is kept, so a failure's hint names the cause the CLI printed.
  const cli = join(PROJECT_ROOT, 'node_modules', '.bin', 'cdk');
  const colour = process.stderr.isTTY && !process.env.NO_COLOR ? { FORCE_COLOR: '1' } : {};
  const child = spawn(cli, [command, ...args], {
    cwd: PROJECT_ROOT,
    stdio: ['inherit', 'inherit', 'pipe'],
    env: { ...process.env, ...colour },
  });
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    output = (output + chunk.toString()).slice(-100_000);
  });
  const code = await new Promise<number>((done) =>
    child.once('close', (exit, signal) => done(exit ?? (signal ? 1 : 0))),
  );
  if (code !== 0) console.error(failureHint(command, stripVTControlCharacters(output), check));
  return code;
}

process.exitCode = await main(process.argv.slice(2));
