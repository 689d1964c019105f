import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { ensureTable, startDynamoDbLocal, useLocalEndpoint, type DynamoDbLocal } from '../local/aws/dynamodb-local';
import { localSettings } from '../local/settings';
import { runningStack } from '../local/stack-record';

/**
 * Opens the local store for a command-line tool, and says which one on `say` (stderr):
 * - the store of the `npm start` serving DATA_DIR (found by the record it keeps there);
 * - with no stack serving DATA_DIR and nothing on DDB_PORT, a temporary DynamoDB Local over
 *   DATA_DIR, stopped by `close()`, with a warning: a stack started elsewhere will not see it;
 * - anything else answering on DDB_PORT is not ours to write to: refused.
 */
export async function openLocalStore(
  say: (line: string) => void,
): Promise<{ apiAddress: string; stackRunning: boolean; close(): Promise<void> }> {
  const settings = localSettings();
  const stack = runningStack(settings.dataDir);
  let owned: DynamoDbLocal | undefined;
  let endpoint: string;
  let tableName = settings.tableName;
  if (stack) {
    endpoint = `http://127.0.0.1:${stack.ddbPort}`;
    tableName = stack.tableName;
    if (!(await answers(endpoint)))
      throw new LocalStoreRefused(
        `npm start (pid ${stack.pid}) serves ${settings.dataDir} but its DynamoDB Local does not answer on ${endpoint} yet; try again when it prints "API ready".`,
      );
    say(
      `admin: the running stack's store: npm start (pid ${stack.pid}, ${stack.apiUrl}), DynamoDB Local on ${endpoint}, table ${tableName}, data in ${settings.dataDir}`,
    );
  } else if (await answers(`http://127.0.0.1:${settings.ddbPort}`)) {
    throw new LocalStoreRefused(
      `something answers on DDB_PORT ${settings.ddbPort}, but no npm start serves ${settings.dataDir}: run the CLI with the DATA_DIR npm start was given, or, to work on a table there, set TABLE_NAME and AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:${settings.ddbPort}.`,
    );
  } else {
    owned = await startDynamoDbLocal({ dataDir: settings.dataDir });
    endpoint = owned.endpoint;
    say(
      `admin: warning: no stack is running (no npm start serves ${settings.dataDir}, nothing answers on DDB_PORT ${settings.ddbPort}).`,
    );
    say(
      `admin: a temporary DynamoDB Local over ${settings.dataDir}, table ${tableName}: the next npm start over that folder sees these changes; a stack running with another DATA_DIR does not.`,
    );
  }
  useLocalEndpoint(endpoint);
  process.env.TABLE_NAME = tableName;
  await ensureTable(endpoint, tableName);
  // The API serving this store: the running stack's, or where the next npm start over DATA_DIR will listen.
  const apiAddress = stack ? new URL(stack.apiUrl).origin : `http://127.0.0.1:${settings.port}`;
  return {
    apiAddress,
    stackRunning: stack !== undefined,
    close: async () => {
      await owned?.stop();
    },
  };
}

/** The local store is not one this tool may touch; the message says what to do instead. */
export class LocalStoreRefused extends Error {}

async function answers(endpoint: string): Promise<boolean> {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
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
