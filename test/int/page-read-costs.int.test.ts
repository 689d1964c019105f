import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Principal } from '#shared/auth/principal';
import { registerNewRun } from '#shared/store/runs';
import { insertComment } from '#shared/store/comments';
import {
  deleteStoredReservedTagKey,
  findReservedTagKey,
  insertReservedTagKey,
  WINDOW_CAPACITY,
} from '#shared/store/reserved-tag-keys';
import type { ReservedTagKey } from '#shared/reserved-tag-keys/reserved-tag-key';
import { callRoute } from '../support/call-route';
import { itemsRead, recordReads } from '../support/read-costs';

/**
 * What a page costs at any depth, through the real list handlers over DynamoDB Local: DynamoDB
 * calls and the items they read (ScannedCount), as DynamoDB reports them.
 */
const organization = 'paging-org';
const reader: Principal = { subject: 'user-reader', tokenId: 'at-reader', grants: { [organization]: 'reader' } };
const stranger: Principal = { subject: 'user-stranger', tokenId: 'at-stranger', grants: { 'other-org': 'owner' } };
const COMMENTS = 250;
const KEYS = { created: 300, deleted: 60 };

let runId: string;
let commentIds: string[];
let liveKeyIds: string[];

const page = (number: number, size: number) => `page%5Bnumber%5D=${number}&page%5Bsize%5D=${size}`;
const listComments = (query: string, principal = reader) =>
  recordReads(() => callRoute('comments/list', `/runs/${runId}/comments?${query}`, principal));
const listKeys = (query: string) =>
  recordReads(() =>
    callRoute('reserved-tag-keys/list', `/organizations/${organization}/reserved-tag-keys?${query}`, reader),
  );
const ids = (json: any) => json.data.map((resource: { id: string }) => resource.id);

beforeAll(async () => {
  runId = (await registerNewRun(organization)).runId;
  commentIds = [];
  for (let i = 0; i < COMMENTS; i++) {
    const comment = await insertComment({ runId, organization, body: `comment ${i}`, createdBy: 'user-writer' });
    if (typeof comment === 'string') throw new Error(comment);
    commentIds.push(comment.id);
  }
  const keys: ReservedTagKey[] = [];
  for (let i = 0; i < KEYS.created; i++) {
    const key = await insertReservedTagKey(organization, { key: `key-${i}`, disableOverrides: false });
    if (typeof key === 'string') throw new Error(key);
    keys.push(key);
  }
  const deleted = new Set(
    Array.from({ length: KEYS.deleted }, (_, i) => Math.floor((i * KEYS.created) / KEYS.deleted)),
  );
  for (const i of deleted) await deleteStoredReservedTagKey((await findReservedTagKey(keys[i]!.id))!);
  liveKeyIds = keys.filter((_, i) => !deleted.has(i)).map((k) => k.id);
}, 60_000);

describe('comments of a run, at any depth', () => {
  it('page 1 is one Query reading the run record and the page', async () => {
    const { result, calls } = await listComments(page(1, 20));
    expect(ids(result.json)).toEqual(commentIds.slice(0, 20));
    expect(calls.map((c) => c.command)).toEqual(['Query']);
    expect(itemsRead(calls)).toBe(21);
  });

  it('a deep page is the run record and that page alone, read together, in creation order', async () => {
    const { result, calls } = await listComments(page(12, 20));
    expect(result.status).toBe(200);
    expect(ids(result.json)).toEqual(commentIds.slice(220, 240));
    expect(result.json.meta.pagination).toEqual({
      'current-page': 12,
      'page-size': 20,
      'prev-page': 11,
      'next-page': 13,
      'total-pages': 13,
      'total-count': COMMENTS,
    });
    expect(calls.map((c) => c.command).sort()).toEqual(['GetItem', 'Query']);
    expect(itemsRead(calls)).toBe(21);
  });

  it('every comment once, oldest first, across all pages', async () => {
    const seen: string[] = [];
    for (let number = 1; number <= 3; number++) seen.push(...ids((await listComments(page(number, 100))).result.json));
    expect(seen).toEqual(commentIds);
  });

  it('a page past the end reads no comment', async () => {
    const { result, calls } = await listComments(page(14, 20));
    expect(result.json.data).toEqual([]);
    expect(result.json.meta.pagination).toMatchObject({
      'current-page': 14,
      'prev-page': 13,
      'next-page': null,
      'total-pages': 13,
      'total-count': COMMENTS,
    });
    expect(itemsRead(calls)).toBe(1);
  });

  it('a caller who cannot see the run makes at most one page be read before its 404', async () => {
    for (const number of [1, 12, 100]) {
      const { result, calls } = await listComments(page(number, 20), stranger);
      expect(result.status).toBe(404);
      expect(itemsRead(calls)).toBeLessThanOrEqual(21);
    }
  });
});

describe('page numbers', () => {
  it('answers any page up to 2^31 − 1 with a page, empty past the end, and 422 beyond it', async () => {
    for (const number of [21474837, 2147483647]) {
      const { result } = await listComments(page(number, 100));
      expect(result.status).toBe(200);
      expect(result.json.data).toEqual([]);
      expect(result.json.meta.pagination).toEqual({
        'current-page': number,
        'page-size': 100,
        'prev-page': number - 1,
        'next-page': null,
        'total-pages': 3,
        'total-count': COMMENTS,
      });
      expect((await listKeys(page(number, 100))).result.status).toBe(200);
    }
    for (const number of ['2147483648', '99999999999999999999']) {
      const { result } = await listComments(`page%5Bnumber%5D=${number}`);
      expect(result.status).toBe(422);
      expect(result.json.errors[0].detail).toBe('page[number] must be between 1 and 2147483647');
    }
  });
});

describe('reserved tag keys, at any depth', () => {
  it('every live key once, oldest first, across all pages, with exact meta', async () => {
    const seen: string[] = [];
    const size = 20;
    const pages = Math.ceil(liveKeyIds.length / size);
    for (let number = 1; number <= pages; number++) {
      const { result } = await listKeys(page(number, size));
      expect(result.json.meta.pagination).toMatchObject({
        'current-page': number,
        'total-pages': pages,
        'total-count': liveKeyIds.length,
      });
      seen.push(...ids(result.json));
    }
    expect(seen).toEqual(liveKeyIds);
  });

  it('a deep page reads the counter and at most one window of keys more than the page', async () => {
    const { result, calls } = await listKeys(page(12, 20));
    expect(ids(result.json)).toEqual(liveKeyIds.slice(220, 240));
    expect(itemsRead(calls)).toBeLessThanOrEqual(1 + 20 + WINDOW_CAPACITY - 1);
  });

  it('a page past the end reads the counter alone', async () => {
    const { result, calls } = await listKeys(page(13, 20));
    expect(result.json.data).toEqual([]);
    expect(result.json.meta.pagination).toMatchObject({ 'total-count': liveKeyIds.length, 'next-page': null });
    expect(calls.map((c) => c.command)).toEqual(['GetItem']);
  });
});
