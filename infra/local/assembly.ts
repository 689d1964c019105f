import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { LOCAL_STAGE } from '#infra/cdk/config';

/**
 * The cloud assembly of the `local` stage: what `cdk synth -c stage=local` writes (template and
 * asset bundles), synthesized again only when a source it is built from changed.
 */
export const PROJECT_ROOT = resolve(import.meta.dirname, '../..');
export { LOCAL_STAGE };
/** Inside cdk.out (git-ignored), apart from what `npm run synth` writes there. */
export const ASSEMBLY_DIR = join(PROJECT_ROOT, 'cdk.out', LOCAL_STAGE);

/** Everything the synthesized stack depends on: the CDK app, the handlers, shared code, the pins. */
const SOURCES = ['infra/cdk', 'functions', 'shared', 'cdk.json', 'package.json', 'package-lock.json', 'tsconfig.json'];
const HASH_FILE = 'sources.sha256';

/** The template alone (no bundles), for `npm run dev`, which runs the handlers' TypeScript in process. */
export const TEMPLATE_DIR = join(PROJECT_ROOT, 'cdk.out', `${LOCAL_STAGE}-template`);
/** CDK's context key naming the stacks whose assets it bundles: none. */
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

export interface Assembly {
  directory: string;
  stackName: string;
  /** Whether this call synthesized it (false: reused). */
  synthesized: boolean;
}

interface Target {
  directory: string;
  sources: string[];
  context: Record<string, unknown>;
}

export function ensureAssembly(log: (line: string) => void = () => undefined): Promise<Assembly> {
  return ensure({ directory: ASSEMBLY_DIR, sources: SOURCES, context: {} }, log);
}

/**
 * The local stage's template synthesized without bundling its functions: only an edit to what the
 * CDK app imports synthesizes it again, so `npm run dev` restarts in seconds after a handler's.
 */
export function ensureTemplate(log: (line: string) => void = () => undefined): Promise<Assembly> {
  const sources = [
    'infra/cdk',
    ...importedBy('infra/cdk/app.ts'),
    ...SOURCES.filter((s) => !['infra/cdk', 'functions', 'shared'].includes(s)),
  ];
  return ensure({ directory: TEMPLATE_DIR, sources, context: NO_BUNDLING }, log);
}

/**
 * The project files `entry` imports, directly or not (relative paths and the package.json aliases):
 * what a template synthesized without bundles is built from, so an edit elsewhere in shared/ or
 * functions/ leaves it current.
 */
function importedBy(entry: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file) || !existsSync(join(PROJECT_ROOT, file))) return;
    seen.add(file);
    const text = readFileSync(join(PROJECT_ROOT, file), 'utf8');
    for (const [, specifier] of text.matchAll(/(?:from|import\()\s*'([^']+)'/g)) {
      const alias = /^#(shared|infra|functions)\/(.+)$/.exec(specifier!);
      if (alias) visit(`${alias[1]}/${alias[2]}.ts`);
      else if (specifier!.startsWith('.')) {
        const path = relative(PROJECT_ROOT, resolve(PROJECT_ROOT, dirname(file), specifier!));
        visit(/\.[cm]?[jt]s$/.test(path) ? path : `${path}.ts`);
      }
    }
  };
  visit(entry);
  return [...seen];
}

async function ensure(target: Target, log: (line: string) => void): Promise<Assembly> {
  const hash = sourcesHash(target.sources);
  const current = () => currentHash(target.directory) === hash;
  const reused = () => ({ directory: target.directory, stackName: stackNameIn(target.directory), synthesized: false });
  if (current()) return reused();
  // Two starts in one checkout (npm start beside npm test) synthesize one at a time: the second
  // then finds the assembly current instead of replacing it under the first one's feet.
  return withLock(target.directory, async () => (current() ? reused() : synthesizeAs(target, hash, log)));
}

const currentHash = (directory: string) =>
  existsSync(join(directory, HASH_FILE)) ? readFileSync(join(directory, HASH_FILE), 'utf8') : '';

async function synthesizeAs(target: Target, hash: string, log: (line: string) => void): Promise<Assembly> {
  const what = target.directory === TEMPLATE_DIR ? "the local stage's template" : 'the local stage';
  log(
    currentHash(target.directory)
      ? `Sources changed: synthesizing ${what} again…`
      : `Synthesizing ${what} (first start)…`,
  );
  // Written beside the old one and swapped in whole, so a reader never sees half an assembly.
  const building = `${target.directory}.${process.pid}.tmp`;
  rmSync(building, { recursive: true, force: true });
  try {
    await synthesizeStage(building, LOCAL_STAGE, target.context);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    throw error;
  }
  writeFileSync(join(building, HASH_FILE), hash);
  rmSync(target.directory, { recursive: true, force: true });
  renameSync(building, target.directory);
  return { directory: target.directory, stackName: stackNameIn(target.directory), synthesized: true };
}

/**
 * Runs the CDK app the way the CDK CLI does (`cdk synth` sets CDK_OUTDIR and CDK_CONTEXT_JSON and
 * runs cdk.json's `app`), with cdk.json's context, `stage` and `context` (as `-c` adds it), offline:
 * no AWS account or region. The local stage's assembly, and infra/ops/lint-cfn.ts's templates.
 */
export async function synthesizeStage(
  outdir: string,
  stage: string,
  context: Record<string, unknown> = {},
): Promise<void> {
  mkdirSync(outdir, { recursive: true });
  const cdkJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CDK_OUTDIR: outdir,
    CDK_CONTEXT_JSON: JSON.stringify({ ...cdkJson.context, ...context, stage }),
  };
  delete env.CDK_DEFAULT_ACCOUNT; // an environment-agnostic stack: nothing of this machine's AWS set-up leaks in
  delete env.CDK_DEFAULT_REGION;
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/cdk/app.ts'], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  if (code !== 0) throw new Error(`cdk synth of the ${stage} stage failed (exit ${code}):\n${output}`);
}

/** A lock directory (mkdir is atomic) holding its owner's pid; an owner that died leaves it free. */
async function withLock<T>(directory: string, work: () => Promise<T>): Promise<T> {
  const lock = `${directory}.lock`;
  mkdirSync(dirname(lock), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(existsSync(join(lock, 'pid')) ? readFileSync(join(lock, 'pid'), 'utf8') : 0);
      if (owner > 0 && !isAlive(owner)) rmSync(lock, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The one stack of a cloud assembly: its name, the base of its `.template.json`. */
export function stackNameIn(directory: string): string {
  const manifest = JSON.parse(readFileSync(join(directory, 'manifest.json'), 'utf8')) as {
    artifacts: Record<string, { type: string }>;
  };
  const stacks = Object.entries(manifest.artifacts).filter(
    ([, artifact]) => artifact.type === 'aws:cloudformation:stack',
  );
  if (stacks.length !== 1) throw new Error(`Expected one stack in ${directory}, found ${stacks.length}`);
  return stacks[0]![0];
}

function sourcesHash(sources: string[]): string {
  const hash = createHash('sha256');
  for (const file of sources.flatMap((source) => filesUnder(join(PROJECT_ROOT, source))).sort()) {
    hash.update(relative(PROJECT_ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, encoding: 'utf8' })
    .map((entry) => join(path, entry))
    .filter((file) => statSync(file).isFile());
}
