import { inject } from 'vitest';
import { randomAlphanumeric } from '#shared/ids';
import { ensureTable, useLocalEndpoint } from '#infra/local/dynamodb-local';

// Runs before each test file's imports: the SDK client must see the endpoint and table first.
const endpoint = inject('dynamoDbEndpoint');
useLocalEndpoint(endpoint);
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
process.env.TABLE_NAME = `test-${randomAlphanumeric(12)}`;
await ensureTable(endpoint, process.env.TABLE_NAME);
