import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ESBUILD_OPTIONS } from '#infra/cdk/constructs/bundling';

/** Bundles one entry exactly as the stack does (same esbuild options) and returns the file. */
export async function bundle(entry: string): Promise<{ file: string; bytes: number }> {
  const outdir = mkdtempSync(join(tmpdir(), 'tfc-bench-bundle-'));
  const outfile = join(outdir, 'index.mjs');
  await build({ ...ESBUILD_OPTIONS, entryPoints: [entry], outfile, logLevel: 'error' });
  return { file: outfile, bytes: statSync(outfile).size };
}

/**
 * Module initialization time of a bundle, as a cold start pays it: a fresh Node process imports it
 * and reports how long the import took (process start-up itself excluded).
 */
export function initMs(file: string): number {
  const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); console.log(performance.now() - t);`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH, TABLE_NAME: 'bench', AWS_REGION: 'us-east-1', POWERTOOLS_LOG_LEVEL: 'SILENT' },
    encoding: 'utf8',
  });
  return Number(out.trim());
}
