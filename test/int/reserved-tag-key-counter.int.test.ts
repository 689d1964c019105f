import { describe, expect, it } from '@jest/globals';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '#shared/store/client';
import { currentTurn, whileContended } from '#shared/store/contention';
import { keys } from '#shared/store/keys';
import {
  deleteStoredReservedTagKey,
  findReservedTagKey,
  insertReservedTagKey,
  listReservedTagKeys,
} from '#shared/store/reserved-tag-keys';
import type { ReservedTagKey } from '#shared/reserved-tag-keys/reserved-tag-key';
import { randomAlphanumeric } from '#shared/ids';
import { deleteKey } from '#shared/reserved-tag-keys/operations';
import { roundTrips } from '../support/round-trips';
import { written } from '../support/written';

/**
 * The organization's key counter (shared/store/tag-key-commits.ts) keeps a count per 100 ms
 * creation window: it must hold only the windows of live keys, or it grows with every key ever
 * created until DynamoDB's 400 KB item limit refuses the organization's next create.
 */
const windowsOf = async (organization: string) => {
  const { Item: counter } = await documentClient.send(
    new GetCommand({ TableName: tableName(), Key: keys.reservedTagKeyCounter(organization), ConsistentRead: true }),
  );
  return Object.keys(counter ?? {}).filter((name) => /^w\d+$/.test(name)).length;
};
const newOrganization = () => `counter-${randomAlphanumeric(8).toLowerCase()}`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Deletes a key as the API does: read by id, then deleted at the head it was read after. */
const remove = async (key: ReservedTagKey) => {
  const found = await findReservedTagKey(key.id);
  return found ? deleteStoredReservedTagKey(found) : 'gone';
};

describe('the key counter', () => {
  it("lets the writer whose turn it is delete its window's last key: one commit moves the queue's head, clears the ticket it passes and drops the window", async () => {
    const organization = newOrganization();
    const key = written(await insertReservedTagKey(organization, { key: 'last', disableOverrides: false }));
    await whileContended('organization', { organization }, async () => {
      // This request took ticket 1 in an earlier round (turn-queue.ts); ticket 0 gave up.
      await documentClient.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.reservedTagKeyCounter(organization),
          UpdateExpression: 'SET queueNext = :next, queueHead = :head, queueGone = :gone',
          ExpressionAttributeValues: { ':next': 2, ':head': 0, ':gone': new Set([0]) },
        }),
      );
      Object.assign(currentTurn(), { ticket: 1, head: 0, gone: [0] });
      expect(await remove(key)).toBeUndefined();
      return true;
    });
    const { Item: head } = await documentClient.send(
      new GetCommand({ TableName: tableName(), Key: keys.reservedTagKeyCounter(organization), ConsistentRead: true }),
    );
    expect([head?.queueHead, head?.queueNext, head?.queueGone, head?.itemCount]).toEqual([2, 2, undefined, 0]);
    expect(await windowsOf(organization)).toBe(0);
  });

  it('drops a window with its last key: create and delete keys one after the other, the counter ends with none', async () => {
    const organization = newOrganization();
    for (let i = 0; i < 5; i++) {
      const key = written(await insertReservedTagKey(organization, { key: `churn-${i}`, disableOverrides: false }));
      expect(await windowsOf(organization)).toBe(1);
      expect(await remove(key)).toBeUndefined();
      expect(await windowsOf(organization)).toBe(0);
      await pause(110); // the next key in another window
    }
    expect(await listReservedTagKeys(organization, { offset: 0, limit: 20 })).toEqual({ items: [], totalCount: 0 });
  });

  it('drops a window when the last two keys in it are deleted at the same moment', async () => {
    for (let round = 0; round < 8; round++) {
      const organization = newOrganization();
      // Created together, so in one 100 ms window (a round whose keys straddle two windows proves less).
      const [a, b] = await Promise.all(
        ['x', 'y'].map((key) => insertReservedTagKey(organization, { key, disableOverrides: false }).then(written)),
      );
      await Promise.all([deleteKey(a!.id, () => 'owner'), deleteKey(b!.id, () => 'owner')]);
      // Each delete could find the other still there and take one from the window, leaving it at 0.
      expect(await windowsOf(organization)).toBe(0);
      expect(await listReservedTagKeys(organization, { offset: 0, limit: 20 })).toEqual({ items: [], totalCount: 0 });
    }
  });

  it('keeps a window while another key created in it lives, and pages stay right', async () => {
    const organization = newOrganization();
    // Created together: most likely in one 100 ms window.
    const [first, second, third] = await Promise.all(
      ['a', 'b', 'c'].map((key) => insertReservedTagKey(organization, { key, disableOverrides: false }).then(written)),
    );
    const windows = await windowsOf(organization);
    expect(await remove(first!)).toBeUndefined();
    expect(await windowsOf(organization)).toBeLessThanOrEqual(windows);
    expect(await listReservedTagKeys(organization, { offset: 1, limit: 1 })).toMatchObject({
      totalCount: 2,
      items: [expect.objectContaining({ id: expect.any(String) })],
    });
    expect(await remove(second!)).toBeUndefined();
    expect(await remove(third!)).toBeUndefined();
    expect(await windowsOf(organization)).toBe(0);
    expect(await remove(third!)).toBe('gone');
  });

  it('deletes a key in one read and one commit, then its derived writes: no transaction', async () => {
    const organization = newOrganization();
    // Created together: in one window, or two.
    const created = await Promise.all(
      ['p', 'q', 'r'].map((key) => insertReservedTagKey(organization, { key, disableOverrides: false }).then(written)),
    );
    const owner = () => 'owner';
    for (const key of created) {
      const { commands } = await roundTrips(() => deleteKey(key!.id, owner));
      // The copy by id, the head's commit; then the guard's release and the copy's tombstone together, the member's last.
      expect(commands.slice(0, 2)).toEqual(['GetItemCommand', 'UpdateItemCommand']);
      expect(commands.slice(2, 4).sort()).toEqual(['DeleteItemCommand', 'UpdateItemCommand']);
      expect(commands.slice(4)).toEqual(['UpdateItemCommand']);
    }
    expect(await windowsOf(organization)).toBe(0);
    expect(await listReservedTagKeys(organization, { offset: 0, limit: 20 })).toEqual({ items: [], totalCount: 0 });
  });
});
