import { ensureAssembly } from '#infra/local/assembly';
// Loaded by Node itself (jest does not transform global setup): the relative import names its file.
import globalSetup from './global-setup.ts';

/**
 * The end-to-end tests serve the `local` stage's cloud assembly: synthesized here, once, before any
 * worker starts (again only when its sources changed), then shared by every test file.
 */
export default async function globalSetupEndToEnd(): Promise<void> {
  await Promise.all([globalSetup(), ensureAssembly((line) => process.stderr.write(`${line}\n`))]);
}
