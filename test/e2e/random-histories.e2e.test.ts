import { describe, expect, it } from '@jest/globals';
import { useLocalStack } from '../support/local-stack';
import { history } from '../support/random-history';

/**
 * Seeded random histories (test/support/random-history.ts) through the local stack, while the
 * local table refuses a fifth of the writes as another Region's conflict.
 */
process.env.LOCAL_REPLICATED_WRITE_CONFLICT_RATE = '0.2';
const { api } = useLocalStack();

describe('seeded random histories, a fifth of writes refused as another Region’s', () => {
  it.each([1, 2, 3])(
    'seed %i: every answer agrees with what the API lists, shows and replays',
    async (seed) => {
      const done = await history(api, seed);
      expect(done.comments + done.keyOps).toBe(80);
    },
    180_000,
  );
});
