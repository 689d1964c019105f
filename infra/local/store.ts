import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { ensureTable, startDynamoDbLocal, useLocalEndpoint, type DynamoDbLocal } from './dynamodb-local';
import { localSettings } from './settings';

/**
 * Opens the local store for a command-line tool: the DynamoDB Local that `npm start` runs if it
 * answers on DDB_PORT, otherwise a temporary one over the same DATA_DIR, stopped by `close()`.
 */
export async function openLocalStore(): Promise<{ close(): Promise<void> }> {
  const settings = localSettings();
  const running = `http://127.0.0.1:${settings.ddbPort}`;
  let owned: DynamoDbLocal | undefined;
  let endpoint = running;
  if (!(await answers(running))) {
    owned = await startDynamoDbLocal({ dataDir: settings.dataDir });
    endpoint = owned.endpoint;
  }
  useLocalEndpoint(endpoint);
  process.env.TABLE_NAME = settings.tableName;
  await ensureTable(endpoint, settings.tableName);
  return { close: async () => { await owned?.stop(); } };
}

async function answers(endpoint: string): Promise<boolean> {
  const client = new DynamoDBClient({
    endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1,
    requestHandler: { connectionTimeout: 500, requestTimeout: 1000 },
  });
  try {
    await client.send(new ListTablesCommand({ Limit: 1 }));
    return true;
  } catch {
    return false;
  } finally {
    client.destroy();
  }
}
