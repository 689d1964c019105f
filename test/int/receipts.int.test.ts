import { describe, expect, it } from '@jest/globals';
import { insertComment, listStoredComments } from '#shared/store/comments';
import {
  deleteStoredReservedTagKey,
  findReservedTagKey,
  insertReservedTagKey,
  listReservedTagKeys,
  updateStoredReservedTagKey,
} from '#shared/store/reserved-tag-keys';
import type { ReservedTagKey } from '#shared/reserved-tag-keys/reserved-tag-key';
import { registerNewRun } from '#shared/store/runs';
import type { Receipt } from '#shared/store/receipts';
import { newId, randomAlphanumeric } from '#shared/ids';

/** Create receipts (shared/store/receipts.ts) against DynamoDB Local: what makes a retried create safe. */
const receipt = (expiresInSeconds = 60): Receipt => ({
  id: randomAlphanumeric(20),
  fingerprint: 'asked-once',
  expiresAt: Math.floor(Date.now() / 1000) + expiresInSeconds,
  keyed: true,
});
const firstPage = { offset: 0, limit: 100 };

describe('a create with a receipt', () => {
  it('writes once: the same receipt again answers with the first comment and writes nothing', async () => {
    const { runId } = await registerNewRun('acme');
    const once = receipt();
    const first = await insertComment({ runId, organization: 'acme', body: 'only once', createdBy: 'user-a' }, once);
    const again = await insertComment({ runId, organization: 'acme', body: 'only once', createdBy: 'user-a' }, once);
    expect(again).toEqual({ replayOf: { fingerprint: 'asked-once', record: first } });
    expect((await listStoredComments(runId, firstPage))?.page).toEqual({ items: [first], totalCount: 1 });
  });

  it('counts an expired receipt as absent (DynamoDB deletes expired items only eventually)', async () => {
    const { runId } = await registerNewRun('acme');
    const expired = receipt(-1);
    await insertComment({ runId, organization: 'acme', body: 'then', createdBy: 'user-a' }, expired);
    const later = await insertComment({ runId, organization: 'acme', body: 'then', createdBy: 'user-a' }, expired);
    expect(later).toMatchObject({ body: 'then', id: expect.stringMatching(/^wsc-/) });
    expect((await listStoredComments(runId, firstPage))?.page.totalCount).toBe(2);
  });

  it('leaves no receipt when the create is refused, so a corrected retry runs', async () => {
    const once = receipt();
    expect(
      await insertComment({ runId: newId('run'), organization: 'acme', body: 'x', createdBy: 'user-a' }, once),
    ).toBe('run-not-found');
    const { runId } = await registerNewRun('acme');
    expect(await insertComment({ runId, organization: 'acme', body: 'x', createdBy: 'user-a' }, once)).toMatchObject({
      runId,
    });
  });

  it('makes one reserved tag key of concurrent creates with one receipt, the others answered with it', async () => {
    const organization = `org-${randomAlphanumeric(8).toLowerCase()}`;
    const once = receipt();
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, () =>
        insertReservedTagKey(organization, { key: 'team', disableOverrides: false }, once),
      ),
    );
    const created = outcomes.filter((o) => typeof o === 'object' && 'id' in o);
    expect(created).toHaveLength(1);
    for (const outcome of outcomes)
      if (outcome !== created[0])
        expect(outcome).toEqual({ replayOf: { fingerprint: 'asked-once', record: created[0] } });
    expect((await listReservedTagKeys(organization, firstPage)).totalCount).toBe(1);
  });

  it('replays a replay-window receipt only while its key is what was asked: after a rename the identical create makes the key asked for', async () => {
    const organization = `org-${randomAlphanumeric(8).toLowerCase()}`;
    const replayWindow = { ...receipt(), keyed: false };
    const first = (await insertReservedTagKey(
      organization,
      { key: 'before', disableOverrides: false },
      replayWindow,
    )) as ReservedTagKey;
    expect(await insertReservedTagKey(organization, { key: 'before', disableOverrides: false }, replayWindow)).toEqual({
      replayOf: { fingerprint: 'asked-once', record: first },
    });
    const renamed = (await updateStoredReservedTagKey((await findReservedTagKey(first.id))!, {
      key: 'after',
    })) as ReservedTagKey;
    const again = (await insertReservedTagKey(
      organization,
      { key: 'before', disableOverrides: false },
      replayWindow,
    )) as ReservedTagKey;
    expect(again).toMatchObject({ key: 'before', organization });
    expect(again.id).not.toBe(first.id);
    // The receipt now names the new key: a further retry replays it.
    expect(await insertReservedTagKey(organization, { key: 'before', disableOverrides: false }, replayWindow)).toEqual({
      replayOf: { fingerprint: 'asked-once', record: again },
    });
    expect((await listReservedTagKeys(organization, firstPage)).items).toEqual([renamed, again]);
  });

  it('makes one new key of concurrent replays after the receipt’s key was deleted, the others answered with it', async () => {
    const organization = `org-${randomAlphanumeric(8).toLowerCase()}`;
    const replayWindow = { ...receipt(), keyed: false };
    const first = (await insertReservedTagKey(
      organization,
      { key: 'replaced', disableOverrides: false },
      replayWindow,
    )) as ReservedTagKey;
    await deleteStoredReservedTagKey((await findReservedTagKey(first.id))!);
    const outcomes = await Promise.all(
      Array.from({ length: 4 }, () =>
        insertReservedTagKey(organization, { key: 'replaced', disableOverrides: false }, replayWindow),
      ),
    );
    const created = outcomes.filter((o) => typeof o === 'object' && 'id' in o) as ReservedTagKey[];
    expect(created).toHaveLength(1);
    expect(created[0]!.id).not.toBe(first.id);
    for (const outcome of outcomes)
      if (outcome !== created[0])
        expect(outcome).toEqual({ replayOf: { fingerprint: 'asked-once', record: created[0] } });
    expect((await listReservedTagKeys(organization, firstPage)).items).toEqual(created);
  });

  it('still refuses another request’s duplicate name (no receipt of its own)', async () => {
    const organization = `org-${randomAlphanumeric(8).toLowerCase()}`;
    await insertReservedTagKey(organization, { key: 'owner', disableOverrides: false }, receipt());
    expect(await insertReservedTagKey(organization, { key: 'OWNER', disableOverrides: false }, receipt())).toBe(
      'name-taken',
    );
  });
});
