import { defineConfig } from 'vitest/config';

/**
 * One DynamoDB Local for the whole run (test/support/global-setup.ts); every test file gets its
 * own table (test/support/setup-file.ts), so files run in parallel without seeing each other's data.
 */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/setup-file.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
