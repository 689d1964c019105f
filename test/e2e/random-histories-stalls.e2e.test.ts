import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { useLocalEndpoint } from '#infra/local/aws/dynamodb-local';
import { startOwnStore, type OwnStore } from '../support/own-store';

/**
 * Seeded random histories (test/support/random-history.ts) with the store stalled for 2 s in the
 * middle of each (SIGSTOP, then SIGCONT), on a DynamoDB Local of this file's own: requests then
 * answer 503, some saying their outcome is unknown, and writes sent before the stall land after it.
 * What was acknowledged must still be exactly what the API lists, shows and replays.
 */
const TABLE = 'random-histories-stalls';
let own: OwnStore;
let run: (seed: number, during: () => Promise<void>) => Promise<{ comments: number; keyOps: number }>;

beforeAll(async () => {
  own = await startOwnStore(TABLE);
  // The store modules this file loads from here on (the history's own reads) use this store.
  useLocalEndpoint(own.store.endpoint);
  process.env.TABLE_NAME = TABLE;
  const { TestApi } = await import('../support/api');
  const { history } = await import('../support/random-history');
  const api = new TestApi(own.stack.url);
  run = (seed, during) => history(api, seed, during);
}, 180_000);

afterAll(() => own?.stop());

describe('seeded random histories with the store stalled for 2 s', () => {
  it.each([1, 2])(
    'seed %i: every answer agrees with what the API lists, shows and replays',
    async (seed) => {
      const stall = async () => {
        await sleep(400 + 200 * seed);
        process.kill(own.store.pid, 'SIGSTOP');
        await sleep(2_000);
        process.kill(own.store.pid, 'SIGCONT');
      };
      const done = await run(seed, stall);
      expect(done.comments + done.keyOps).toBe(80);
    },
    180_000,
  );
});
