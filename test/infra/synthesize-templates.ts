import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TemplateOptions } from './templates';

/**
 * `node --import tsx test/infra/synthesize-templates.ts <folder>`: the one process of a jest run
 * that synthesizes the templates the infra test files read (templates.ts). It makes each template
 * asked for in the folder (`<key>.wanted`) into `<key>.json`, written whole and renamed into place;
 * a synth that fails leaves `<key>.failed`, with its error, instead. The infra project's global
 * setup starts it (test/support/global-setup-infra.ts); it loads the CDK app at the first request,
 * and ends with the run (its teardown), or when the run's process is gone.
 */
const folder = process.argv[2];
if (!folder) throw new Error('usage: synthesize-templates.ts <folder>');
const run = process.ppid;
const made = new Set<string>();
let synthesize: typeof import('./synth').synthesize | undefined;

while (process.ppid === run) {
  const wanted = readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.name.endsWith('.wanted') && !made.has(entry.name.slice(0, -'.wanted'.length)))
    .map((entry) => entry.name.slice(0, -'.wanted'.length));
  if (wanted.length === 0) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    continue;
  }
  for (const key of wanted) {
    made.add(key);
    const file = join(folder, `${key}.json`);
    try {
      const options = JSON.parse(readFileSync(join(folder, `${key}.wanted`), 'utf8')) as TemplateOptions;
      synthesize ??= (await import('./synth')).synthesize;
      writeFileSync(`${file}.partial`, JSON.stringify(synthesize(options).template.toJSON()));
      renameSync(`${file}.partial`, file);
    } catch (error) {
      writeFileSync(join(folder, `${key}.failed`), `${(error as Error).stack ?? String(error)}\n`);
    }
  }
}
