import { beforeAll, describe, expect, it } from '@jest/globals';
import { errorBody, tokenFor, type ApiResponse } from '../support/api';
import { useLocalStack } from '../support/local-stack';
import { expectWith } from '../support/expect-with';
import { registerNewRun } from '#shared/store/runs';
import { commentDocument, keyDocument } from '../support/documents';

/**
 * Reserved tag keys over HTTP through the synthesized stack. The client requests replayed here
 * (go-tfe's create without disable-overrides, its PATCH without data.id, its DELETE with a
 * Content-Type; python-tfe's GET with a Content-Type and page[size]=100) are those of go-tfe
 * v1.110.0 and python-tfe 1.5.0, the versions docs/api.md's client compatibility names.
 */
const { api, roundTrips } = useLocalStack();
const roundTripsOf = (commands: string[]) => commands.join(' ');
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let orgCounter = 0;
/** A fresh organization per test, with an owner, a member, a reader and an outsider. */
async function organization() {
  const org = `org-${++orgCounter}-${Date.now()}`;
  const [owner, member, reader, outsider] = await Promise.all([
    tokenFor({ [org]: 'owner' }, 'user-owner'),
    tokenFor({ [org]: 'member' }),
    tokenFor({ [org]: 'reader' }),
    tokenFor({ 'someone-else': 'owner' }),
  ]);
  const keysPath = `/organizations/${org}/reserved-tag-keys`;
  const create = (key: unknown, extra: Record<string, unknown> = {}, token = owner) =>
    api.post(keysPath, { token, body: keyDocument(key, extra) });
  const list = (query = '', token = owner) => api.get(`${keysPath}${query}`, { token });
  return { org, owner, member, reader, outsider, keysPath, create, list };
}

const created = (response: ApiResponse) => {
  expectWith(response.status, response.text).toBe(201);
  return response.json.data;
};

describe('create', () => {
  it('returns the contract resource (go-tfe sends no disable-overrides)', async () => {
    const { org, create } = await organization();
    const response = await create('environment');
    expect(response.headers.get('content-type')).toBe('application/vnd.api+json');
    const data = created(response);
    expect(data.id).toMatch(/^rtk-[A-Za-z0-9]{16}$/);
    expect(data).toEqual({
      id: data.id,
      type: 'reserved-tag-keys',
      attributes: {
        key: 'environment',
        'disable-overrides': false,
        'is-registry-tag': false,
        'created-at': data.attributes['created-at'],
        'updated-at': data.attributes['created-at'],
      },
      relationships: { organization: { data: { id: org, type: 'organizations' } } },
      links: { self: `/api/v2/reserved-tags/${data.id}` },
    });
    expect(data.attributes['created-at']).toMatch(ISO_MS);
  });

  it('takes disable-overrides and ignores read-only and unknown attributes', async () => {
    const { create } = await organization();
    const data = created(
      await create('cost-center', {
        'disable-overrides': true,
        'is-registry-tag': true,
        'created-at': '2000-01-01T00:00:00Z',
        color: 'red',
      }),
    );
    expect(data.attributes).toMatchObject({ 'disable-overrides': true, 'is-registry-tag': false });
    expect(data.attributes['created-at']).not.toBe('2000-01-01T00:00:00Z');
    expect(data.attributes).not.toHaveProperty('color');
  });

  it.each([
    ['', "Key can't be blank", '/data/attributes/key'],
    [null, "Key can't be blank", '/data/attributes/key'],
    ['bad/key', 'Key is invalid', '/data/attributes/key'],
    [' padded', 'Key is invalid', '/data/attributes/key'],
    ['k'.repeat(129), 'Key is invalid', '/data/attributes/key'],
  ])('refuses key %j with the exact 422', async (key, detail, pointer) => {
    const { create, list } = await organization();
    const response = await create(key);
    expect(response.status).toBe(422);
    expect(response.json).toEqual(errorBody(422, 'invalid attribute', detail, pointer));
    expect((await list()).json.meta.pagination['total-count']).toBe(0);
  });

  it('refuses a missing key and a non-boolean disable-overrides', async () => {
    const { keysPath, owner, create } = await organization();
    const missing = await api.post(keysPath, {
      token: owner,
      body: { data: { type: 'reserved-tag-keys', attributes: {} } },
    });
    expect(missing.json).toEqual(errorBody(422, 'invalid attribute', "Key can't be blank", '/data/attributes/key'));
    const noAttributes = await api.post(keysPath, { token: owner, body: { data: { type: 'reserved-tag-keys' } } });
    expect(noAttributes.status).toBe(422);
    const notBoolean = await create('env', { 'disable-overrides': 'true' });
    expect(notBoolean.json).toEqual(
      errorBody(422, 'invalid attribute', 'Disable overrides must be a boolean', '/data/attributes/disable-overrides'),
    );
  });
});

describe('uniqueness per organization', () => {
  it('is case-insensitive and stores the key as sent', async () => {
    const { create } = await organization();
    expect(created(await create('Environment')).attributes.key).toBe('Environment');
    // Other spellings: the identical create would be a replay, answered with the first key (idempotency.e2e.test.ts).
    for (const key of ['environment', 'ENVIRONMENT', 'EnvironmenT']) {
      const response = await create(key);
      expect(response.status).toBe(422);
      expect(response.json).toEqual(
        errorBody(422, 'invalid attribute', 'Key has already been taken', '/data/attributes/key'),
      );
    }
  });

  it('is per organization', async () => {
    const a = await organization();
    const b = await organization();
    created(await a.create('environment'));
    created(await b.create('environment'));
  });

  it('holds under 20 concurrent creates of the same key: one 201, nineteen 422', async () => {
    const { create, list } = await organization();
    // 20 spellings of one key (each letter's case from a bit of i): no two bodies alike, so none is a replay of another.
    const spelling = (i: number) => [...'region'].map((c, bit) => ((i >> bit) & 1 ? c.toUpperCase() : c)).join('');
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => create(spelling(i))));
    const statuses = responses.map((r) => r.status).sort();
    // One 201, the rest 422; on a loaded machine a create that could not get its turn in time
    // answers the contract's 503 with Retry-After, having written nothing (checked by the list below).
    expect(statuses.filter((s) => s === 201)).toEqual([201]);
    for (const r of responses.filter((r) => r.status !== 201 && r.status !== 422)) {
      expect([r.status, Number(r.headers.get('retry-after')) >= 1]).toEqual([503, true]);
      if (r.json?.errors?.[0]?.detail !== undefined)
        expect(r.json.errors[0].detail).toMatch(/wrote nothing|outcome is unknown/);
    }
    for (const r of responses.filter((r) => r.status === 422)) {
      expect(r.json).toEqual(errorBody(422, 'invalid attribute', 'Key has already been taken', '/data/attributes/key'));
    }
    const listed = await list();
    expect(listed.json.data).toHaveLength(1);
    expect(listed.json.meta.pagination['total-count']).toBe(1);
  });

  it('frees the name when the key is deleted', async () => {
    const { create, owner } = await organization();
    const data = created(await create('team'));
    expect((await api.delete(`/reserved-tag-keys/${data.id}`, { token: owner })).status).toBe(204);
    created(await create('TEAM'));
  });
});

describe('update', () => {
  it("is partial, accepts go-tfe's PATCH without data.id, and serializes like create and list", async () => {
    const { create, owner, list } = await organization();
    const original = created(await create('environment'));
    await new Promise((r) => setTimeout(r, 5));
    const response = await api.patch(`/reserved-tag-keys/${original.id}`, {
      token: owner,
      body: { data: { type: 'reserved-tag-keys', attributes: { 'disable-overrides': true } } },
    });
    expect(response.status).toBe(200);
    const updated = response.json.data;
    expect(updated.attributes).toMatchObject({
      key: 'environment',
      'disable-overrides': true,
      'created-at': original.attributes['created-at'],
    });
    expect(updated.attributes['updated-at'] > original.attributes['updated-at']).toBe(true);
    expect((await list()).json.data).toEqual([updated]);
  });

  it('renames through either path, with data.id matching', async () => {
    const { create, owner } = await organization();
    const original = created(await create('env'));
    const response = await api.patch(`/reserved-tags/${original.id}`, {
      token: owner,
      body: { data: { id: original.id, type: 'reserved-tag-keys', attributes: { key: 'environment' } } },
    });
    expect(response.status).toBe(200);
    expect(response.json.data.attributes.key).toBe('environment');
    created(await create('env')); // the old name is free again
    expect((await create('Environment')).status).toBe(422); // the new one is taken
  });

  it('changes nothing for a body without attributes or with the same values: 200, updated-at unchanged', async () => {
    const { create, owner } = await organization();
    const original = created(await create('Environment'));
    await new Promise((r) => setTimeout(r, 5));
    for (const attributes of [
      undefined,
      {},
      { key: 'Environment' },
      { 'disable-overrides': false, 'updated-at': '2030-01-01T00:00:00.000Z' },
    ]) {
      const response = await api.patch(`/reserved-tag-keys/${original.id}`, {
        token: owner,
        body: { data: { type: 'reserved-tag-keys', ...(attributes ? { attributes } : {}) } },
      });
      expect(response.status).toBe(200);
      expect(response.json.data).toEqual(original);
    }
  });

  it('renaming to a taken key is a 422; to a new casing of its own key is a 200', async () => {
    const { create, owner } = await organization();
    const first = created(await create('environment'));
    const second = created(await create('region'));
    const taken = await api.patch(`/reserved-tag-keys/${second.id}`, {
      token: owner,
      body: keyDocument('ENVIRONMENT'),
    });
    expect(taken.status).toBe(422);
    expect(taken.json).toEqual(
      errorBody(422, 'invalid attribute', 'Key has already been taken', '/data/attributes/key'),
    );
    const recased = await api.patch(`/reserved-tag-keys/${first.id}`, {
      token: owner,
      body: keyDocument('Environment'),
    });
    expect(recased.status).toBe(200);
    expect(recased.json.data.attributes.key).toBe('Environment');
  });

  it('refuses a mismatched data.id (409), a wrong type (409) and invalid attributes (422), changing nothing', async () => {
    const { create, owner, list } = await organization();
    const original = created(await create('environment'));
    const path = `/reserved-tag-keys/${original.id}`;
    const mismatch = await api.patch(path, {
      token: owner,
      body: { data: { id: 'rtk-AAAAAAAAAAAAAAAA', type: 'reserved-tag-keys', attributes: { key: 'x' } } },
    });
    expect(mismatch.json).toEqual(errorBody(409, 'conflict', 'data.id does not match the id in the path'));
    const wrongType = await api.patch(path, {
      token: owner,
      body: { data: { type: 'tags', attributes: { key: 'x' } } },
    });
    expect(wrongType.json).toEqual(errorBody(409, 'conflict', 'data.type must be "reserved-tag-keys"'));
    const invalid = await api.patch(path, { token: owner, body: keyDocument('ok', { 'disable-overrides': 'yes' }) });
    expect(invalid.json).toEqual(
      errorBody(422, 'invalid attribute', 'Disable overrides must be a boolean', '/data/attributes/disable-overrides'),
    );
    const blank = await api.patch(path, { token: owner, body: keyDocument('') });
    expect(blank.json).toEqual(errorBody(422, 'invalid attribute', "Key can't be blank", '/data/attributes/key'));
    expect((await list()).json.data).toEqual([original]);
  });
});

describe('concurrent updates', () => {
  it('of different requests to one key all succeed, and both copies stay identical', async () => {
    const { create, owner, list } = await organization();
    const key = created(await create('environment'));
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        api.patch(`/reserved-tag-keys/${key.id}`, {
          token: owner,
          body: { data: { type: 'reserved-tag-keys', attributes: { 'disable-overrides': i % 2 === 0 } } },
        }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(12).fill(200));
    const listed = (await list()).json.data;
    expect(listed).toHaveLength(1);
    // The by-id copy (what PATCH reads) agrees with the listed copy.
    const noop = await api.patch(`/reserved-tag-keys/${key.id}`, {
      token: owner,
      body: { data: { type: 'reserved-tag-keys' } },
    });
    expect(noop.json.data).toEqual(listed[0]);
  });

  it('renaming one key to many names at once leaves exactly one name taken', async () => {
    const { create, owner, list } = await organization();
    const key = created(await create('start'));
    const names = Array.from({ length: 8 }, (_, i) => `name-${i}`);
    const responses = await Promise.all(
      names.map((name) => api.patch(`/reserved-tag-keys/${key.id}`, { token: owner, body: keyDocument(name) })),
    );
    expect(responses.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    const final = (await list()).json.data[0].attributes.key;
    expect(names).toContain(final);
    for (const name of ['start', ...names.filter((n) => n !== final)]) created(await create(name));
    expect((await create(final)).status).toBe(422);
  });
});

describe('delete', () => {
  it('answers 204 on both paths (go-tfe sends Content-Type and no body), then 404', async () => {
    const { create, owner, list } = await organization();
    const a = created(await create('a'));
    const b = created(await create('b'));
    const headers = { 'Content-Type': 'application/vnd.api+json' };
    const first = await api.delete(`/reserved-tag-keys/${a.id}`, { token: owner, headers });
    expect(first.status).toBe(204);
    expect(first.text).toBe('');
    expect((await api.delete(`/reserved-tags/${b.id}`, { token: owner })).status).toBe(204);
    const again = await api.delete(`/reserved-tag-keys/${a.id}`, { token: owner, headers });
    expect(again.status).toBe(404);
    expect(again.json).toEqual(errorBody(404, 'not found'));
    expect((await list()).json.meta.pagination['total-count']).toBe(0);
  });
});

describe('authorization', () => {
  let ctx: Awaited<ReturnType<typeof organization>>;
  let keyId: string;
  beforeAll(async () => {
    ctx = await organization();
    keyId = created(await ctx.create('environment')).id;
  });

  it('members and readers list; they get 403 on create, update and delete', async () => {
    for (const token of [ctx.member, ctx.reader]) {
      const listed = await ctx.list('', token);
      expect(listed.status).toBe(200);
      expect(listed.json.data.map((k: { id: string }) => k.id)).toEqual([keyId]);
      const createResponse = await ctx.create('other', {}, token);
      expect(createResponse.status).toBe(403);
      expect(createResponse.json.errors[0]).toMatchObject({ status: '403', title: 'forbidden' });
      expect(createResponse.json.errors[0].detail).toMatch(/requires the owner role/);
      const update = await api.patch(`/reserved-tag-keys/${keyId}`, { token, body: keyDocument('x') });
      expect(update.status).toBe(403);
      expect((await api.delete(`/reserved-tags/${keyId}`, { token })).status).toBe(403);
    }
    expect((await ctx.list()).json.data[0].attributes.key).toBe('environment');
  });

  it('a member sending an invalid body still gets 403, not 422', async () => {
    expect((await ctx.create('', {}, ctx.member)).status).toBe(403);
  });

  it('a token without the organization gets 404 on all four, as for ids that do not exist', async () => {
    const notFound = errorBody(404, 'not found');
    const body = keyDocument('x');
    const responses = [
      await ctx.list('', ctx.outsider),
      await ctx.create('x', {}, ctx.outsider),
      await api.patch(`/reserved-tag-keys/${keyId}`, { token: ctx.outsider, body }),
      await api.delete(`/reserved-tag-keys/${keyId}`, { token: ctx.outsider }),
      await api.patch('/reserved-tag-keys/nonexistent', { token: ctx.owner, body }),
      await api.delete('/reserved-tags/nonexistent', { token: ctx.owner }),
      await api.patch('/reserved-tags/rtk-AAAAAAAAAAAAAAAA', { token: ctx.owner, body }),
      await api.delete('/reserved-tag-keys/rtk-AAAAAAAAAAAAAAAA', { token: ctx.owner }),
    ];
    for (const response of responses) {
      expect(response.status).toBe(404);
      expect(response.json).toEqual(notFound);
    }
    expect((await ctx.list()).json.data).toHaveLength(1);
  });
});

describe('lists', () => {
  let ctx: Awaited<ReturnType<typeof organization>>;
  let ids: string[];
  beforeAll(async () => {
    ctx = await organization();
    ids = [];
    for (let i = 0; i < 47; i++) ids.push(created(await ctx.create(`key-${String(i).padStart(2, '0')}`)).id);
  });

  it('pages 20 by default, oldest first, with meta and absolute links', async () => {
    const response = await ctx.list();
    expect(response.json.data.map((k: { id: string }) => k.id)).toEqual(ids.slice(0, 20));
    expect(response.json.meta.pagination).toEqual({
      'current-page': 1,
      'page-size': 20,
      'prev-page': null,
      'next-page': 2,
      'total-pages': 3,
      'total-count': 47,
    });
    const base = `${api.baseUrl}/api/v2${ctx.keysPath}`;
    expect(response.json.links).toEqual({
      self: `${base}?page%5Bnumber%5D=1&page%5Bsize%5D=20`,
      first: `${base}?page%5Bnumber%5D=1&page%5Bsize%5D=20`,
      prev: null,
      next: `${base}?page%5Bnumber%5D=2&page%5Bsize%5D=20`,
      last: `${base}?page%5Bnumber%5D=3&page%5Bsize%5D=20`,
    });
  });

  it('walks every page exactly once, with raw and percent-encoded brackets, by following links', async () => {
    const seen: string[] = [];
    let next: string | null = `${api.baseUrl}/api/v2${ctx.keysPath}?page%5Bsize%5D=10`;
    let pages = 0;
    while (next) {
      const body = (await (await fetch(next, { headers: { Authorization: `Bearer ${ctx.owner}` } })).json()) as any;
      seen.push(...body.data.map((k: { id: string }) => k.id));
      expect(body.meta.pagination).toMatchObject({
        'current-page': ++pages,
        'page-size': 10,
        'total-pages': 5,
        'total-count': 47,
      });
      next = body.links.next;
    }
    expect(seen).toEqual(ids);
    const raw = await ctx.list('?page[number]=5&page[size]=10');
    expect(raw.json.data.map((k: { id: string }) => k.id)).toEqual(ids.slice(40));
    expect(raw.json.meta.pagination).toMatchObject({ 'prev-page': 4, 'next-page': null });
    expect(raw.json.links.next).toBeNull();
  });

  it("answers python-tfe's GET with Content-Type and page[size]=100", async () => {
    const response = await api.get(`${ctx.keysPath}?page%5Bnumber%5D=1&page%5Bsize%5D=100`, {
      token: ctx.owner,
      headers: { 'Content-Type': 'application/vnd.api+json', Accept: 'application/vnd.api+json' },
    });
    expect(response.status).toBe(200);
    expect(response.json.data).toHaveLength(47);
    expect(response.json.meta.pagination).toMatchObject({ 'page-size': 100, 'total-pages': 1 });
  });

  it('returns an empty page past the end with correct meta', async () => {
    const response = await ctx.list('?page[number]=9&page[size]=10');
    expect(response.status).toBe(200);
    expect(response.json.data).toEqual([]);
    expect(response.json.meta.pagination).toEqual({
      'current-page': 9,
      'page-size': 10,
      'prev-page': 8,
      'next-page': null,
      'total-pages': 5,
      'total-count': 47,
    });
  });

  it.each([
    ['?page[size]=0', 'page[size] must be between 1 and 100'],
    ['?page%5Bsize%5D=101', 'page[size] must be between 1 and 100'],
    ['?page[size]=abc', 'page[size] must be between 1 and 100'],
    ['?page[number]=0', 'page[number] must be between 1 and 2147483647'],
    ['?page%5Bnumber%5D=-2', 'page[number] must be between 1 and 2147483647'],
  ])('%s is a 422', async (query, detail) => {
    const response = await ctx.list(query);
    expect(response.status).toBe(422);
    expect(response.json).toEqual(errorBody(422, 'invalid attribute', detail));
  });

  it('keeps total-count exact after deletes', async () => {
    const other = await organization();
    const made = [];
    for (const key of ['a', 'b', 'c']) made.push(created(await other.create(key)));
    await api.delete(`/reserved-tags/${made[1].id}`, { token: other.owner });
    const response = await other.list();
    expect(response.json.data.map((k: { id: string }) => k.id)).toEqual([made[0].id, made[2].id]);
    expect(response.json.meta.pagination['total-count']).toBe(2);
  });

  it('an organization without keys lists nothing', async () => {
    const empty = await organization();
    const response = await empty.list();
    expect(response.json).toMatchObject({
      data: [],
      meta: { pagination: { 'total-count': 0, 'total-pages': 1, 'next-page': null } },
    });
  });
});

describe('DynamoDB round trips per request (warm, after the authorizer)', () => {
  it('list 1 Query; create, update and delete one commit each, with their reads and derived writes; no transaction', async () => {
    const { create, owner, list } = await organization();
    await list(); // warms the authorizer cache for this token
    const listed = await roundTrips(() => list());
    expect(listed.commands).toEqual(['QueryCommand']);
    const createdKey = await roundTrips(() => create('environment'));
    // Without an Idempotency-Key, no receipt to claim (the key keeps it): the head (not yet known
    // to this function), the name's guard; the commit on the head; then the guard and the copy
    // together, the member last.
    expect(createdKey.commands).toEqual([
      'GetItemCommand',
      'GetItemCommand',
      'UpdateItemCommand',
      'PutItemCommand',
      'PutItemCommand',
      'PutItemCommand',
    ]);
    const warm = await roundTrips(() => create('team'));
    // The head known to the function now: the guard, the commit, the derived writes.
    expect(warm.commands).toEqual([
      'GetItemCommand',
      'UpdateItemCommand',
      'PutItemCommand',
      'PutItemCommand',
      'PutItemCommand',
    ]);
    const id = createdKey.result.json.data.id;
    const updated = await roundTrips(() =>
      api.patch(`/reserved-tag-keys/${id}`, { token: owner, body: keyDocument('env') }),
    );
    // The copy by id, the head (new to this function; it holds this key's create, so the copy need
    // not be read again); then together the member of the head's prior change (is it written out?)
    // and the new name's guard; the commit; the new guard and the copy; the member and the old
    // guard's release.
    expect(updated.commands.slice(0, 5)).toEqual([...Array(4).fill('GetItemCommand'), 'UpdateItemCommand']);
    const updateDerived = updated.commands.slice(5);
    expect(updateDerived.slice(0, 2).sort()).toEqual(['PutItemCommand', 'UpdateItemCommand']);
    expect(updateDerived.slice(2).sort()).toEqual(['DeleteItemCommand', 'UpdateItemCommand']);
    expect(updated.commands.filter((c) => c === 'UpdateItemCommand')).toHaveLength(3);
    const unchanged = await roundTrips(() =>
      api.patch(`/reserved-tag-keys/${id}`, { token: owner, body: { data: { type: 'reserved-tag-keys' } } }),
    );
    expect(unchanged.commands).toEqual(['GetItemCommand']);
    const deleted = await roundTrips(() => api.delete(`/reserved-tag-keys/${id}`, { token: owner }));
    // The copy by id, the head (new to this function, its latest change this key's: the copy read is
    // the key at it), the member of that change (is it written out?); the commit; the guard's
    // release and the copy's tombstone, the member's last.
    expect(deleted.commands.slice(0, 4)).toEqual([
      'GetItemCommand',
      'GetItemCommand',
      'GetItemCommand',
      'UpdateItemCommand',
    ]);
    expect(deleted.commands.slice(4, 6).sort()).toEqual(['DeleteItemCommand', 'UpdateItemCommand']);
    expect(deleted.commands.slice(6)).toEqual(['UpdateItemCommand']);
    expect(
      roundTripsOf([...listed.commands, ...warm.commands, ...updated.commands, ...deleted.commands]),
    ).not.toContain('Transact');
  });
});

describe('timestamps, as HCP Terraform sends them', () => {
  /** Every member name in a JSON document, at any depth. */
  const memberNames = (value: unknown): string[] =>
    Array.isArray(value)
      ? value.flatMap(memberNames)
      : typeof value === 'object' && value !== null
        ? Object.entries(value).flatMap(([name, v]) => [name, ...memberNames(v)])
        : [];

  it('are only created-at and updated-at: no answer ever has an attribute or member named with an underscore (created_at)', async () => {
    const { owner, org, create, list } = await organization();
    const key = created(await create('timestamps'));
    const updated = await api.patch(`/reserved-tag-keys/${key.id}`, {
      token: owner,
      body: keyDocument('timestamps-2'),
    });
    const { runId } = await registerNewRun(org);
    const comment = await api.post(`/runs/${runId}/comments`, { token: owner, body: commentDocument('when?') });
    const answers = [
      await create('timestamps-3'),
      updated,
      await list(),
      comment,
      await api.get(`/comments/${comment.json.data.id}`, { token: owner }),
      await api.get(`/runs/${runId}/comments`, { token: owner }),
    ];
    expect(answers.map((a) => a.status)).toEqual([201, 200, 200, 201, 200, 200]);
    const names = new Set(answers.flatMap((a) => memberNames(a.json)));
    expect([...names].filter((name) => name.includes('_'))).toEqual([]);
    expect([...names]).toEqual(expect.arrayContaining(['created-at', 'updated-at']));
    expect(updated.json.data.attributes['updated-at']).toMatch(ISO_MS);
  });
});
