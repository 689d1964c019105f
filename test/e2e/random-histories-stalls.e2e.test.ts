import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureTable, startDynamoDbLocal, useLocalEndpoint, type DynamoDbLocal } from '#infra/local/aws/dynamodb-local';
import { startLocalStack, type LocalStack } from '#infra/local/local-stack';

/**
 * Seeded random histories (test/support/random-history.ts) with the store stalled for 2 s in the
 * middle of each (SIGSTOP, then SIGCONT), on a DynamoDB Local of this file's own: requests then
 * answer 503, some saying their outcome is unknown, and writes sent before the stall land after it.
 * What was acknowledged must still be exactly what the API lists, shows and replays.
 */
const TABLE = 'random-histories-stalls';
let dataDir: string;
let store: DynamoDbLocal;
let stack: LocalStack;
let run: (seed: number, during: () => Promise<void>) => Promise<{ comments: number; keyOps: number }>;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'random-histories-'));
  store = await startDynamoDbLocal({ dataDir });
  // The store modules this file loads from here on (the history's own reads) use this store.
  useLocalEndpoint(store.endpoint);
  process.env.TABLE_NAME = TABLE;
  await ensureTable(store.endpoint, TABLE);
  stack = await startLocalStack({ dynamoDbEndpoint: store.endpoint, tableName: TABLE, log: () => undefined });
  const { TestApi } = await import('../support/api');
  const { history } = await import('../support/random-history');
  const api = new TestApi(stack.url);
  run = (seed, during) => history(api, seed, during);
}, 180_000);

afterAll(async () => {
  try {
    process.kill(store.pid, 'SIGCONT');
  } catch {
    /* gone */
  }
  await stack?.close();
  await store?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('seeded random histories with the store stalled for 2 s', () => {
  it.each([1, 2])(
    'seed %i: every answer agrees with what the API lists, shows and replays',
    async (seed) => {
      const stall = async () => {
        await sleep(400 + 200 * seed);
        process.kill(store.pid, 'SIGSTOP');
        await sleep(2_000);
        process.kill(store.pid, 'SIGCONT');
      };
      const done = await run(seed, stall);
      expect(done.comments + done.keyOps).toBe(80);
    },
    180_000,
  );
});
