import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Principal } from '#shared/auth/principal';
import { findReservedTagKey, insertReservedTagKey } from '#shared/store/reserved-tag-keys';
import { callRoute } from '../support/call-route';
import { keyDocument } from '../support/documents';

/**
 * Races between requests on one key, through the real handlers over DynamoDB Local. Each round
 * starts the two requests together, so their reads and transactions interleave as concurrent
 * requests' do; every round must end as some order of the two would.
 */
const ROUNDS = 100;
const organization = 'race-org';
const owner: Principal = { subject: 'user-owner', tokenId: 'at-owner', grants: { [organization]: 'owner' } };

async function createKey(key: string): Promise<string> {
  const created = await insertReservedTagKey(organization, { key, disableOverrides: false });
  if (typeof created === 'string') throw new Error(`${key}: ${created}`);
  return created.id;
}
const rename = (id: string, key: string) =>
  callRoute('reserved-tag-keys/update', `/reserved-tag-keys/${id}`, owner, keyDocument(key));
const remove = (id: string) => callRoute('reserved-tag-keys/delete', `/reserved-tag-keys/${id}`, owner);

// A fresh DynamoDB Local compiles its transaction path on first use, which can outlast the store's request timeout.
beforeAll(async () => {
  await createKey('warm-up').catch(() => createKey('warm-up-again'));
});

describe(`${ROUNDS} rounds of concurrent requests on one key`, () => {
  it('a DELETE racing a rename deletes the key (204, and it is gone)', async () => {
    const outcomes = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round++) {
      const id = await createKey(`doomed-${round}`);
      const [renamed, deleted] = await Promise.all([rename(id, `renamed-${round}`), remove(id)]);
      expect(deleted.status).toBe(204);
      expect([200, 404]).toContain(renamed.status);
      expect(await findReservedTagKey(id)).toBeUndefined();
      const key = `rename ${renamed.status}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    }
    // Both orders happened, or the race was not raced.
    console.log('DELETE vs rename outcomes:', Object.fromEntries(outcomes));
  }, 120_000);

  it('two renames to casings of one name both succeed, as one after the other would', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const id = await createKey(`bar-${round}`);
      const [first, second] = await Promise.all([rename(id, `Foo-${round}`), rename(id, `FOO-${round}`)]);
      expect([first.status, second.status]).toEqual([200, 200]);
      const final = (await findReservedTagKey(id))?.key;
      expect([`Foo-${round}`, `FOO-${round}`]).toContain(final);
      // The name stays reserved for this key alone, in any casing.
      expect(await insertReservedTagKey(organization, { key: `foo-${round}`, disableOverrides: false })).toBe(
        'name-taken',
      );
    }
  }, 120_000);
});
