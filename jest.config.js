// Jest 30 on native ESM TypeScript, with no transform package: jest erases the types with Node's own
// stripper (module.stripTypeScriptTypes), as Node does when it runs a .ts file, and runs the files as
// ES modules on Node's VM modules (`--experimental-vm-modules`, which .npmrc gives every npm script
// and npx). README "Tests" and docs/design.md say why.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

// Every test runs on the project's Node (package.json pins it as the `node` dependency). Any other
// start (an IDE on the machine's Node, a shell without the flag) is refused in one line.
const pinned = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')).dependencies.node;
const olderThan = (version, than) => {
  const [a, b] = [version, than].map((v) => v.split('.').map(Number));
  const i = a.findIndex((n, k) => n !== b[k]);
  return i !== -1 && a[i] < b[i];
};
const refuse = (why) => {
  process.stderr.write(
    `jest: ${why}. Run \`npm test\` or \`npx jest\`, or start jest with node_modules/.bin/node and NODE_OPTIONS=--experimental-vm-modules.\n`,
  );
  process.exit(1);
};
if (olderThan(process.versions.node, pinned))
  refuse(`this project tests on Node ${pinned}, and this is Node ${process.versions.node}`);
if (typeof vm.SourceTextModule !== 'function')
  refuse('Node was started without --experimental-vm-modules, which jest needs for ES modules');
// The tests' child processes (`tsx`, scripts that start with `#!/usr/bin/env node`) run on this Node too.
if (process.env.PATH?.split(delimiter)[0] !== dirname(process.execPath)) {
  process.env.PATH = [dirname(process.execPath), process.env.PATH].filter(Boolean).join(delimiter);
}

// What the tests, their child processes and the CDK apps they synthesize put in the temp directory goes
// to a folder of this run under the project's git-ignored .tmp/ (os.tmpdir() follows TMPDIR), removed
// when jest exits: nothing is left in the system temp directory.
const projectTmp = fileURLToPath(new URL('./.tmp/', import.meta.url));
mkdirSync(projectTmp, { recursive: true });
const scratch = mkdtempSync(join(projectTmp, 'jest-'));
process.env.TMPDIR = scratch;
process.once('exit', () => rmSync(scratch, { recursive: true, force: true }));

// The tests' local stacks run their Lambda instances at the emulator's niceness, not niced (the
// default, infra/local/settings.ts): jest's other worker is no AWS service, and niced instances
// would yield the CPU to its tests. The emulator's own tests of the setting set it themselves.
process.env.LOCAL_LAMBDA_NICENESS ??= '0';

const common = {
  // jest's Node environment, less Node's warning about VM modules (see the file).
  testEnvironment: '<rootDir>/test/support/environment.ts',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {},
  setupFiles: ['<rootDir>/test/support/setup-logs.ts'],
};
// One DynamoDB Local for the run, started only if a project that needs it has tests to run; a table per test file.
// (jest runs each distinct global setup and teardown module once per run: see test/support/global-setup.ts)
const dynamoDb = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  setupFiles: [...common.setupFiles, '<rootDir>/test/support/setup-table.ts'],
};

/** @type {import('jest').Config} */
export default {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...common, ...dynamoDb, displayName: 'int', testMatch: ['<rootDir>/test/int/**/*.test.ts'] },
    // e2e's global setup also synthesizes the local stage's cloud assembly that its tests serve.
    // e2e's answers are each checked against the OpenAPI document (test/support/validate-answers.ts).
    {
      ...common,
      ...dynamoDb,
      globalSetup: '<rootDir>/test/support/global-setup-e2e.ts',
      setupFilesAfterEnv: ['<rootDir>/test/support/validate-answers.ts'],
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
    },
    // infra's global setup starts the synth of the templates several of its files read (test/infra/templates.ts).
    {
      ...common,
      globalSetup: '<rootDir>/test/support/global-setup-infra.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown-infra.ts',
      displayName: 'infra',
      testMatch: ['<rootDir>/test/infra/**/*.test.ts'],
    },
  ],
  testTimeout: 30_000,
  // jest's transform cache, in the project rather than the system temp directory.
  cacheDirectory: '<rootDir>/node_modules/.cache/jest',
  // One worker per core: 2 on this project's machines, where 2 was measured fastest.
  maxWorkers: '100%',
};
