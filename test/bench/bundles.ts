import { build, type Plugin } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ESBUILD_OPTIONS } from '#infra/cdk/constructs/bundling';
import type { Assembly } from '#infra/local/assembly';
import { Stack } from '#infra/local/aws/cloudformation';

/**
 * Bundles one entry exactly as the stack does (same esbuild options) and returns the file; a
 * tracer candidate adds its aliases and the plugin that swaps the tracer module (tracers/candidates.ts).
 * `esbuildDefault`: without the stack's own choices on top of esbuild's ESM output (the built-ins
 * it takes through require(), infra/cdk/constructs/bundling.ts), as a function is bundled by default.
 */
export async function bundle(
  entry: string,
  variant: { alias?: Record<string, string>; plugins?: Plugin[]; esbuildDefault?: true } = {},
): Promise<{ file: string; bytes: number }> {
  const outdir = mkdtempSync(join(tmpdir(), 'tfc-bench-bundle-'));
  const outfile = join(outdir, 'index.mjs');
  await build({
    ...ESBUILD_OPTIONS,
    alias: { ...(variant.esbuildDefault ? {} : ESBUILD_OPTIONS.alias), ...variant.alias },
    plugins: variant.plugins ?? [],
    entryPoints: [entry],
    outfile,
    logLevel: 'error',
  });
  return { file: outfile, bytes: statSync(outfile).size };
}

/** What a cold start's module initialization costs: elapsed time, and the CPU time it used. */
export interface InitCost {
  wallMs: number;
  cpuMs: number;
}

/**
 * Module initialization of a bundle, as a cold start pays it: a fresh Node process, started
 * with `environment` (NODE_OPTIONS included, as Lambda starts it), imports the bundle and reports
 * how long the import took (process start-up itself excluded) and the CPU time the process spent
 * on it, which other processes on a busy machine disturb less than the elapsed time.
 */
export function initCost(file: string, environment: Record<string, string>): InitCost {
  const script =
    `const cpu = process.cpuUsage(); const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)});` +
    ' const used = process.cpuUsage(cpu); console.log(performance.now() - t, (used.user + used.system) / 1000);';
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH, ...environment, POWERTOOLS_LOG_LEVEL: 'SILENT' },
    encoding: 'utf8',
  });
  const [wallMs, cpuMs] = out.trim().split('\n').at(-1)!.split(' ').map(Number) as [number, number];
  return { wallMs, cpuMs };
}

/** A cold start as a user feels it: module initialization, then the first invocation, in one process. */
export interface ColdStartCost {
  init: InitCost;
  /** Import and first invocation together, from the start of the import to the handler's answer. */
  total: InitCost;
  /** What the handler answered: its status code, or an authorizer's Allow or Deny. */
  answer: string;
}

/**
 * A fresh Node process started with `environment`, as Lambda starts one, imports the bundle, then
 * invokes its handler once with `event` (read before the clock starts) and a Lambda-like context.
 */
export function coldStartCost(file: string, environment: Record<string, string>, event: unknown): ColdStartCost {
  const script = `const event = JSON.parse(process.getBuiltinModule('node:fs').readFileSync(0, 'utf8'));
const context = { callbackWaitsForEmptyEventLoop: true, functionName: process.env.AWS_LAMBDA_FUNCTION_NAME, functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:' + process.env.AWS_LAMBDA_FUNCTION_NAME, memoryLimitInMB: '1024',
  awsRequestId: 'bench-' + process.pid, logGroupName: 'bench', logStreamName: 'bench', getRemainingTimeInMillis: () => 10_000 };
const ms = (used) => (used.user + used.system) / 1000;
const cpu = process.cpuUsage(); const t = performance.now();
const { handler } = await import(${JSON.stringify(pathToFileURL(file).href)});
const init = { wallMs: performance.now() - t, cpuMs: ms(process.cpuUsage(cpu)) };
const result = await handler(event, context);
const total = { wallMs: performance.now() - t, cpuMs: ms(process.cpuUsage(cpu)) };
const answer = String(result?.statusCode ?? result?.policyDocument?.Statement?.[0]?.Effect);
console.log(JSON.stringify({ init, total, answer }));
process.exit(0); // the SDK's keep-alive connection would hold the process open`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH, ...environment },
    input: JSON.stringify(event),
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as ColdStartCost;
}

/**
 * Lambda's own variables that change what a bundle does at init (AWS_EXECUTION_ENV turned
 * Powertools Tracer on; the X-Ray variables are set with active tracing): Lambda sets them beside
 * the template's (https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime).
 */
export const lambdaRuntimeEnvironment = (name: string, codeDirectory: string): Record<string, string> => ({
  AWS_REGION: 'us-east-1',
  AWS_DEFAULT_REGION: 'us-east-1',
  AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
  AWS_LAMBDA_FUNCTION_NAME: name,
  AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1024',
  AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
  LAMBDA_TASK_ROOT: codeDirectory,
  _HANDLER: 'index.handler',
  AWS_XRAY_DAEMON_ADDRESS: '169.254.79.129:2000',
  AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
});

/**
 * Every function of the synthesized stack by its handler file (`functions/<name>.ts`, from its
 * description): the bundle as deployed and the environment it starts with.
 */
export function deployedFunctions(
  assembly: Assembly,
): Map<string, { file: string; bytes: number; environment: Record<string, string> }> {
  const stack = new Stack(assembly.directory, assembly.stackName);
  const found = new Map<string, { file: string; bytes: number; environment: Record<string, string> }>();
  for (const [logicalId, resource] of stack.resourcesOf('AWS::Lambda::Function')) {
    const name = /functions\/(.+)\.ts/.exec(String(resource.Properties.Description ?? ''))?.[1];
    if (!name) continue;
    const codeDirectory = stack.assetDirectory(resource.Properties.Code);
    const file = join(codeDirectory, 'index.mjs');
    const template = Object.fromEntries(
      Object.entries((resource.Properties.Environment?.Variables ?? {}) as Record<string, unknown>).map(
        ([key, value]) => [key, typeof value === 'string' ? value : 'bench'],
      ),
    ); // a table Ref → any table name
    found.set(name, {
      file,
      bytes: statSync(file).size,
      environment: { ...lambdaRuntimeEnvironment(logicalId, codeDirectory), ...template },
    });
  }
  return found;
}
