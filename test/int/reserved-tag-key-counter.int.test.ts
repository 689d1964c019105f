import { describe, expect, it } from '@jest/globals';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '#shared/store/client';
import { keys } from '#shared/store/keys';
import { deleteStoredReservedTagKey, insertReservedTagKey, listReservedTagKeys, MAX_COUNTERS_READ } from '#shared/store/reserved-tag-keys';
import { randomAlphanumeric } from '#shared/ids';
import { deleteKey } from '#shared/reserved-tag-keys/service';
import { roundTrips } from '../support/round-trips';
import { written } from '../support/written';

/**
 * The organization's key counter (shared/store/reserved-tag-keys.ts) keeps a count per 100 ms
 * creation window: it must hold only the windows of live keys, or it grows with every key ever
 * created until DynamoDB's 400 KB item limit refuses the organization's next create.
 */
const windowsOf = async (organization: string) => {
  const { Item: counter } = await documentClient.send(new GetCommand({ TableName: tableName(), Key: keys.reservedTagKeyCounter(organization), ConsistentRead: true }));
  return Object.keys(counter ?? {}).filter((name) => /^w\d+$/.test(name)).length;
};
const newOrganization = () => `counter-${randomAlphanumeric(8).toLowerCase()}`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the key counter', () => {
  it('drops a window with its last key: create and delete keys one after the other, the counter ends with none', async () => {
    const organization = newOrganization();
    for (let i = 0; i < 5; i++) {
      const key = written(await insertReservedTagKey(organization, { key: `churn-${i}`, disableOverrides: false }));
      expect(await windowsOf(organization)).toBe(1);
      expect(await deleteStoredReservedTagKey(key)).toBeUndefined();
      expect(await windowsOf(organization)).toBe(0);
      await pause(110); // the next key in another window
    }
    expect(await listReservedTagKeys(organization, { offset: 0, limit: 20 })).toEqual({ items: [], totalCount: 0 });
  });

  it('drops a window when the last two keys in it are deleted at the same moment', async () => {
    for (let round = 0; round < 8; round++) {
      const organization = newOrganization();
      // Created together, so in one 100 ms window (a round whose keys straddle two windows proves less).
      const [a, b] = await Promise.all(['x', 'y'].map((key) => insertReservedTagKey(organization, { key, disableOverrides: false }).then(written)));
      await Promise.all([deleteStoredReservedTagKey(a!), deleteStoredReservedTagKey(b!)]);
      // Each delete could find the other still there and take one from the window, leaving it at 0.
      expect(await windowsOf(organization)).toBe(0);
      expect(await listReservedTagKeys(organization, { offset: 0, limit: 20 })).toEqual({ items: [], totalCount: 0 });
    }
  });

  it('keeps a window while another key created in it lives, and pages stay right', async () => {
    const organization = newOrganization();
    // Created together: most likely in one 100 ms window.
    const [first, second, third] = await Promise.all(['a', 'b', 'c'].map((key) => insertReservedTagKey(organization, { key, disableOverrides: false }).then(written)));
    const windows = await windowsOf(organization);
    expect(await deleteStoredReservedTagKey(first!)).toBeUndefined();
    expect(await windowsOf(organization)).toBeLessThanOrEqual(windows);
    expect(await listReservedTagKeys(organization, { offset: 1, limit: 1 })).toMatchObject({ totalCount: 2, items: [expect.objectContaining({ id: expect.any(String) })] });
    expect(await deleteStoredReservedTagKey(second!)).toBeUndefined();
    expect(await deleteStoredReservedTagKey(third!)).toBeUndefined();
    expect(await windowsOf(organization)).toBe(0);
    expect(await deleteStoredReservedTagKey(third!)).toBe('gone');
  });

  it('deletes keys that share a creation window in 2 calls each for an owner: the key and its counter read together, then one transaction', async () => {
    const organization = newOrganization();
    // Created together: in one window, or two (then the first delete of each finds its count too).
    const keys = await Promise.all(['p', 'q', 'r'].map((key) => insertReservedTagKey(organization, { key, disableOverrides: false }).then(written)));
    const owner = () => 'owner';
    for (const key of keys) {
      const { commands } = await roundTrips(() => deleteKey(key!.id, owner, ['another-org', organization]));
      expect(commands).toEqual(['TransactGetItemsCommand', 'TransactWriteItemsCommand']);
    }
    expect(await windowsOf(organization)).toBe(0);
    expect(await listReservedTagKeys(organization, { offset: 0, limit: 20 })).toEqual({ items: [], totalCount: 0 });
  });

  it('still deletes exactly, in at most 3 calls, for a caller whose organizations were not read (none owned, or too many)', async () => {
    for (const owned of [[], Array.from({ length: MAX_COUNTERS_READ + 1 }, (_, i) => `org-${i}`)]) {
      const organization = newOrganization();
      const keys = await Promise.all(['s', 't'].map((key) => insertReservedTagKey(organization, { key, disableOverrides: false }).then(written)));
      for (const key of keys) {
        const { commands } = await roundTrips(() => deleteKey(key!.id, () => 'owner', owned));
        expect(commands[0]).toBe('GetItemCommand');
        expect(commands.length).toBeLessThanOrEqual(3);
      }
      expect(await windowsOf(organization)).toBe(0);
    }
  });
});
