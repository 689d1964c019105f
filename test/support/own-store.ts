import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTable, startDynamoDbLocal, type DynamoDbLocal } from '#infra/local/aws/dynamodb-local';
import { startLocalStack, type LocalStack } from '#infra/local/local-stack';

/**
 * A DynamoDB Local of one test file's own (so it can stall or kill it without touching the other
 * files' store), with `table`, and the local stack over it. `store` may be replaced (a restart on
 * the same port); `stop` stops whichever is current, resuming it first if it was stalled.
 */
export interface OwnStore {
  dataDir: string;
  store: DynamoDbLocal;
  stack: LocalStack;
  stop(): Promise<void>;
}

export async function startOwnStore(table: string): Promise<OwnStore> {
  const dataDir = mkdtempSync(join(tmpdir(), `${table}-`));
  const store = await startDynamoDbLocal({ dataDir });
  await ensureTable(store.endpoint, table);
  const stack = await startLocalStack({ dynamoDbEndpoint: store.endpoint, tableName: table, log: () => undefined });
  const own: OwnStore = {
    dataDir,
    store,
    stack,
    async stop() {
      try {
        process.kill(own.store.pid, 'SIGCONT');
      } catch {
        /* gone */
      }
      await own.stack.close();
      await own.store.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return own;
}
