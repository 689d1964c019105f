// Every test file: the functions' logs stay quiet unless a test turns them on (test/e2e/logging.e2e.test.ts).
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
// Handlers run in the test process print no EMF metric lines either. Tests that assert on metrics read
// them from processes with their own environment: the local stack's functions (the template's
// environment), or a child given POWERTOOLS_METRICS_DISABLED=false (test/int/store-unavailable.int.test.ts).
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
