import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The infra project's global setup: starts the one process that synthesizes the templates the
 * infra test files ask for (test/infra/templates.ts, synthesize-templates.ts), and returns: a file
 * that asks for a template waits for it, the others run meanwhile. The requests and templates are in
 * `infra-templates/` in the run's scratch folder (jest.config.js's TMPDIR), with the process's
 * output (`synthesize.log`); `exited` is written there if it ends, so no file waits for a template it
 * will not make. global-teardown-infra.ts stops it.
 * (Node loads global setups itself, without jest's resolver: hence the names below are repeated
 * from templates.ts rather than imported from it.)
 */
export type InfraRunState = typeof globalThis & { infraTemplates?: ChildProcess };

const TEMPLATES_FOLDER_ENV = 'INFRA_TEMPLATES_FOLDER';
const EXITED_MARKER = 'exited';

export default function globalSetupInfra(): void {
  const state = globalThis as InfraRunState;
  if (state.infraTemplates) return;
  const folder = join(process.env.TMPDIR!, 'infra-templates');
  mkdirSync(folder, { recursive: true });
  const log = openSync(join(folder, 'synthesize.log'), 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/infra/synthesize-templates.ts', folder], {
    cwd: join(import.meta.dirname, '../..'),
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const exited = (how: string) => {
    try {
      writeFileSync(join(folder, EXITED_MARKER), `${how}\n`);
    } catch {
      // The run is over and its scratch folder gone: nobody is waiting.
    }
  };
  child.once('exit', (code, signal) => exited(String(signal ?? code)));
  child.once('error', (error) => exited(`not started: ${error.message}`));
  state.infraTemplates = child;
  // Test workers start after this and inherit it.
  process.env[TEMPLATES_FOLDER_ENV] = folder;
}
