import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_TMP } from '#infra/local/settings';

/**
 * Imported first by a script (bench, load): everything it and its child processes put in the temp
 * directory (os.tmpdir() follows TMPDIR) goes to a folder of its own under the project's `.tmp/`,
 * removed when the script exits, so nothing is left in the system temp directory.
 */
mkdirSync(PROJECT_TMP, { recursive: true });
const scratch = mkdtempSync(join(PROJECT_TMP, 'run-'));
process.env.TMPDIR = scratch;
process.once('exit', () => rmSync(scratch, { recursive: true, force: true }));
