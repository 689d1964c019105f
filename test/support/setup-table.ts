import { randomAlphanumeric } from '#shared/ids';
import { ensureTable, useLocalEndpoint } from '#infra/local/aws/dynamodb-local';

// Runs before each test file's imports: the SDK client must see the endpoint and table first.
// The endpoint is the run's one DynamoDB Local, which test/support/global-setup.ts started.
const endpoint = process.env.TEST_DYNAMODB_ENDPOINT;
if (!endpoint)
  throw new Error('TEST_DYNAMODB_ENDPOINT is not set: test/support/global-setup.ts did not run for this project.');
useLocalEndpoint(endpoint);
process.env.TABLE_NAME = `test-${randomAlphanumeric(12)}`;
await ensureTable(endpoint, process.env.TABLE_NAME);
