// Every test file: the functions' logs stay quiet unless a test turns them on (test/e2e/logging.e2e.test.ts).
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
