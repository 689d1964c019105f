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
import { windowOf } from '#shared/store/tag-key-windows';
import { updateStoredReservedTagKey } from '#shared/store/reserved-tag-keys';
import { recordCapacity } from '../bench/capacity';
import { organizationState } from '../support/organization-state';
import { roundTrips } from '../support/round-trips';
import { written } from '../support/written';

/**
 * The organization's key counter (shared/store/tag-key-commits.ts) keeps a count per span of
 * creation time (shared/store/tag-key-windows.ts): it must hold only the spans of live keys, and
 * about one per 100 keys, or it grows with every key until DynamoDB's 400 KB item limit refuses
 * the organization's next create, and every change of a key writes it whole.
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

  it('counts keys created in windows far apart in one span: the head stays small, and a create writes 1 unit on it', async () => {
    const organization = newOrganization();
    const created: ReservedTagKey[] = [];
    for (let i = 0; i < 12; i++) {
      created.push(written(await insertReservedTagKey(organization, { key: `apart-${i}`, disableOverrides: false })));
      await pause(110); // the next key in another window
    }
    expect(new Set(created.map((key) => windowOf(key.createdAt))).size).toBe(12);
    expect(await windowsOf(organization)).toBe(1);
    const { capacity } = await recordCapacity(() =>
      insertReservedTagKey(organization, { key: 'apart-last', disableOverrides: false }),
    );
    expect(capacity.perCall.find((call) => call.command === 'UpdateItem')?.write).toBe(1);
    expect((await organizationState(organization)).problems).toEqual([]);
  });

  it('merges the spans of a head written before spans (a window per key) as its next commits go; pages stay right', async () => {
    const organization = newOrganization();
    const created: ReservedTagKey[] = [];
    for (let i = 0; i < 30; i++) {
      created.push(written(await insertReservedTagKey(organization, { key: `old-${i}`, disableOverrides: false })));
      await pause(110);
    }
    // The head as the store before spans left it: a count per window of a live key, no lastWindow,
    // and a commit on it this process has not seen (a no-op update of the last key, as yet unwritten).
    const head = keys.reservedTagKeyCounter(organization);
    const { Item: before } = await documentClient.send(new GetCommand({ TableName: tableName(), Key: head }));
    const spanNames = Object.keys(before!).filter((name) => /^w\d+$/.test(name));
    const windows = created.map((key) => `w${windowOf(key.createdAt)}`);
    const removed = spanNames.filter((name) => !windows.includes(name));
    const version = before!.version as number;
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: head,
        UpdateExpression: `SET version = :next, #prior = latest, latest = :change, ${windows.map((_, i) => `#n${i} = :one`).join(', ')} REMOVE lastWindow${removed.map((name) => `, ${name}`).join('')}`,
        ConditionExpression: 'version = :version',
        ExpressionAttributeNames: {
          '#prior': 'prior',
          ...Object.fromEntries(windows.map((name, i) => [`#n${i}`, name])),
        },
        ExpressionAttributeValues: {
          ':one': 1,
          ':version': version,
          ':next': version + 1,
          ':change': { version: version + 1, at: Date.now(), kind: 'update', record: created.at(-1) },
        },
      }),
    );
    expect(await windowsOf(organization)).toBe(30);
    const everyPage = async () => {
      const ids: string[] = [];
      for (let offset = 0; offset < 35; offset += 7)
        ids.push(...(await listReservedTagKeys(organization, { offset, limit: 7 })).items.map((key) => key.id));
      return ids;
    };
    const order = created.map((key) => key.id);
    expect(await everyPage()).toEqual(order);
    expect((await organizationState(organization)).problems).toEqual([]);
    // Each commit merges up to 20 spans, never into the newest: an update (after a refusal: this
    // process knew an older head), then a create, which the newest span takes.
    written(await updateStoredReservedTagKey(created[0]!, { disableOverrides: true }));
    expect(await windowsOf(organization)).toBe(10);
    expect(await everyPage()).toEqual(order);
    const late = written(await insertReservedTagKey(organization, { key: 'new', disableOverrides: false }));
    expect(await windowsOf(organization)).toBe(2);
    expect(await everyPage()).toEqual([...order, late.id]);
    expect((await organizationState(organization)).problems).toEqual([]);
  });
});
