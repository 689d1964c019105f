import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { synthesize } from './synth';
import { PRESYNTHESIZED, templateFile } from './templates';

/**
 * `node --import tsx test/infra/synthesize-templates.ts <folder>`: the template of each of
 * templates.ts's PRESYNTHESIZED variants, into `<folder>/<variant>.json`, in their order, each
 * written whole (renamed into place) for the test files waiting for it. The infra project's global
 * setup runs it once per jest run (test/support/global-setup-infra.ts). A variant that fails gets
 * `<variant>.json.failed` instead, with its error, and the others are still made.
 */
const folder = process.argv[2];
if (!folder) throw new Error('usage: synthesize-templates.ts <folder>');
for (const options of PRESYNTHESIZED) {
  const file = join(folder, templateFile(options));
  try {
    const json = JSON.stringify(synthesize(options).template.toJSON());
    writeFileSync(`${file}.partial`, json);
    renameSync(`${file}.partial`, file);
  } catch (error) {
    writeFileSync(`${file}.failed`, `${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  }
}
