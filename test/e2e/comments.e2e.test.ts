import { beforeAll, describe, expect, it } from '@jest/globals';
import { errorBody, expectContractHeaders, tokenFor } from '../support/api';
import { useLocalStack } from '../support/local-stack';
import { registerNewRun } from '#shared/store/runs';
import { newId } from '#shared/ids';
import { commentDocument } from '../support/documents';

const { api } = useLocalStack();

const ORG = 'acme';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const COMMENT_ID = /^wsc-[A-Za-z0-9]{16}$/;
const notFound = errorBody(404, 'not found');
const invalidBody = (detail: string) => errorBody(422, 'invalid attribute', detail, '/data/attributes/body');

let owner: string, member: string, reader: string, stranger: string;

async function newRun(organization = ORG) {
  return (await registerNewRun(organization, 'networking')).runId;
}

/** A comment as the contract shows it, with the id and time the server chose. */
const expectedComment = (runId: string, body: string, createdBy: string) => ({
  id: expect.stringMatching(COMMENT_ID),
  type: 'comments',
  attributes: { body, 'created-at': expect.stringMatching(ISO) },
  relationships: {
    run: { data: { id: runId, type: 'runs' } },
    'created-by': { data: { id: createdBy, type: 'users' } },
  },
  links: { self: expect.stringMatching(/^\/api\/v2\/comments\/wsc-[A-Za-z0-9]{16}$/) },
});

beforeAll(async () => {
  [owner, member, reader, stranger] = await Promise.all([
    tokenFor({ [ORG]: 'owner' }, 'user-olivia'),
    tokenFor({ [ORG]: 'member' }, 'user-max'),
    tokenFor({ [ORG]: 'reader' }, 'user-rita'),
    tokenFor({ 'other-org': 'owner' }, 'user-stranger'),
  ]);
});

/** The requests of go-tfe v1.110.0 (and python-tfe 1.5.0), the versions docs/api.md's client compatibility names. */
describe("go-tfe v1.110.0's requests", () => {
  it('Comments.Create, Comments.Read and Comments.List round-trip one comment identically', async () => {
    const runId = await newRun();
    // go-tfe's exact POST: JSON:API media type, only `body` in the attributes.
    const created = await api.post(`/runs/${runId}/comments`, {
      token: member,
      body: '{"data":{"type":"comments","attributes":{"body":"Approved after review."}}}',
      headers: { 'Content-Type': 'application/vnd.api+json' },
    });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({ data: expectedComment(runId, 'Approved after review.', 'user-max') });
    const { actual, expected } = expectContractHeaders(created);
    expect(actual).toEqual(expected);
    const comment = created.json.data;
    expect(comment.links.self).toBe(`/api/v2/comments/${comment.id}`);

    const read = await api.get(`/comments/${comment.id}`, { token: member });
    expect(read.status).toBe(200);
    expect(read.json).toEqual({ data: comment });

    // go-tfe's Comments.List sends no page parameters at all.
    const listed = await api.get(`/runs/${runId}/comments`, { token: member });
    expect(listed.status).toBe(200);
    const url = `${api.baseUrl}/api/v2/runs/${runId}/comments?page%5Bnumber%5D=1&page%5Bsize%5D=100`;
    expect(listed.json).toEqual({
      data: [comment],
      links: { self: url, first: url, prev: null, next: null, last: url },
      meta: {
        pagination: {
          'current-page': 1,
          'page-size': 100,
          'prev-page': null,
          'next-page': null,
          'total-pages': 1,
          'total-count': 1,
        },
      },
    });
  });

  it('lists up to 100 comments, oldest first, when no page parameter is sent', async () => {
    const runId = await newRun();
    const bodies = Array.from({ length: 23 }, (_, i) => `comment ${i + 1}`);
    for (const body of bodies)
      expect((await api.post(`/runs/${runId}/comments`, { token: owner, body: commentDocument(body) })).status).toBe(
        201,
      );
    const listed = await api.get(`/runs/${runId}/comments`, { token: reader });
    expect(listed.json.data.map((c: any) => c.attributes.body)).toEqual(bodies);
    expect(listed.json.meta.pagination).toMatchObject({ 'page-size': 100, 'total-count': 23, 'total-pages': 1 });
  });
});

describe('comment body', () => {
  it('comes back byte for byte: emoji, accents, CJK, whitespace at the ends, tabs and CRLF', async () => {
    const runId = await newRun();
    const body = '  Zoë & François: ✅ déployé 🚀🇫🇷👩🏽‍💻\r\n承認しました。变更已批准。\t한국어  ';
    const created = await api.post(`/runs/${runId}/comments`, { token: owner, body: commentDocument(body) });
    expect(created.status).toBe(201);
    const id = created.json.data.id;
    const shown = await api.get(`/comments/${id}`, { token: reader });
    const listed = await api.get(`/runs/${runId}/comments`, { token: reader });
    for (const returned of [
      created.json.data.attributes.body,
      shown.json.data.attributes.body,
      listed.json.data[0].attributes.body,
    ]) {
      expect(Buffer.from(returned, 'utf8').equals(Buffer.from(body, 'utf8'))).toBe(true);
    }
  });

  it('accepts exactly 16,384 UTF-8 bytes', async () => {
    const runId = await newRun();
    const body = `${'€'.repeat(5461)}x`; // 3 bytes each: 16,383 + 1
    const created = await api.post(`/runs/${runId}/comments`, { token: owner, body: commentDocument(body) });
    expect(created.status).toBe(201);
    expect(created.json.data.attributes.body).toBe(body);
  });

  it.each([
    ['missing', { data: { type: 'comments', attributes: {} } }, "Body can't be blank"],
    ['without attributes', { data: { type: 'comments' } }, "Body can't be blank"],
    ['null', commentDocument(null), "Body can't be blank"],
    ['empty', commentDocument(''), "Body can't be blank"],
    ['blank after trimming', commentDocument(' \n\t\r '), "Body can't be blank"],
    ['not a string', commentDocument(42), 'Body must be a string'],
    ['over 16,384 bytes', commentDocument(`${'€'.repeat(5461)}xy`), 'Body is too long (maximum is 16384 bytes)'],
    ['with a NUL', commentDocument('before\u0000after'), 'Body contains invalid characters'],
    ['with an escape sequence', commentDocument('\u001b[31mred'), 'Body contains invalid characters'],
    [
      'with a lone surrogate',
      '{"data":{"type":"comments","attributes":{"body":"half \\ud83d emoji"}}}',
      'Body contains invalid characters',
    ],
  ])('is refused when %s, and nothing is written', async (_case, document, detail) => {
    const runId = await newRun();
    const response = await api.post(`/runs/${runId}/comments`, { token: owner, body: document });
    expect(response.status).toBe(422);
    expect(response.json).toEqual(invalidBody(detail));
    const listed = await api.get(`/runs/${runId}/comments`, { token: owner });
    expect(listed.json.meta.pagination['total-count']).toBe(0);
  });

  it('ignores read-only and unknown attributes, and a run relationship (the path names the run)', async () => {
    const runId = await newRun();
    const created = await api.post(`/runs/${runId}/comments`, {
      token: owner,
      body: {
        data: {
          type: 'comments',
          attributes: { body: 'hi', 'created-at': '2000-01-01T00:00:00.000Z', 'created-by': 'user-eve', color: 'red' },
          // go-tfe's CommentCreateOptions may carry it.
          relationships: { run: { data: { type: 'runs', id: newId('run') } } },
        },
      },
    });
    expect(created.status).toBe(201);
    expect(created.json.data).toEqual(expectedComment(runId, 'hi', 'user-olivia'));
    expect(created.json.data.attributes['created-at']).not.toBe('2000-01-01T00:00:00.000Z');
  });

  // A body of another media type (415) is refused by the chain: test/unit/handler-chain.test.ts.
  it('accepts application/json; refuses another data.type (409) and broken JSON (400)', async () => {
    const runId = await newRun();
    const path = `/runs/${runId}/comments`;
    const asJson = await api.post(path, {
      token: owner,
      body: commentDocument('plain json'),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(asJson.status).toBe(201);
    const wrongType = await api.post(path, {
      token: owner,
      body: { data: { type: 'runs', attributes: { body: 'x' } } },
    });
    expect(wrongType.json).toEqual(errorBody(409, 'conflict', 'data.type must be "comments"'));
    const broken = await api.post(path, { token: owner, body: '{"data":' });
    expect(broken.json).toEqual(errorBody(400, 'bad request', 'request body is not valid JSON'));
    expect((await api.get(path, { token: owner })).json.meta.pagination['total-count']).toBe(1);
  });
});

describe('authorization through the run’s organization', () => {
  let runId: string;
  let commentId: string;
  beforeAll(async () => {
    runId = await newRun();
    commentId = (await api.post(`/runs/${runId}/comments`, { token: owner, body: commentDocument('by the owner') }))
      .json.data.id;
  });

  it('lets owner and member create, and records who wrote it', async () => {
    for (const [token, subject] of [
      [owner, 'user-olivia'],
      [member, 'user-max'],
    ] as const) {
      const created = await api.post(`/runs/${runId}/comments`, { token, body: commentDocument(`from ${subject}`) });
      expect(created.status).toBe(201);
      expect(created.json.data.relationships['created-by']).toEqual({ data: { id: subject, type: 'users' } });
    }
  });

  it('lets a reader list and show, but not create (403, nothing written)', async () => {
    const before = (await api.get(`/runs/${runId}/comments`, { token: reader })).json.meta.pagination['total-count'];
    expect((await api.get(`/comments/${commentId}`, { token: reader })).status).toBe(200);
    const refused = await api.post(`/runs/${runId}/comments`, { token: reader, body: commentDocument('let me in') });
    expect(refused.status).toBe(403);
    expect(refused.json).toEqual(
      errorBody(403, 'forbidden', `this action requires the member role in organization ${ORG}; the token has reader`),
    );
    const after = await api.get(`/runs/${runId}/comments`, { token: reader });
    expect(after.json.meta.pagination['total-count']).toBe(before);
  });

  it('answers a token outside the organization with 404 on all three, exactly as for what does not exist', async () => {
    const unknownRun = newId('run');
    const unknownComment = newId('wsc');
    const request = (method: 'GET' | 'POST', path: string, token: string) =>
      api.request(method, path, { token, body: method === 'POST' ? commentDocument('x') : undefined });
    const answers = async (token: string, cases: Array<['GET' | 'POST', string]>) =>
      Promise.all(
        cases.map(async ([method, path]) => {
          const response = await request(method, path, token);
          return { method, path, status: response.status, body: response.json };
        }),
      );
    const allNotFound = (cases: Array<['GET' | 'POST', string]>) =>
      cases.map(([method, path]) => ({ method, path, status: 404, body: notFound }));

    const existing: Array<['GET' | 'POST', string]> = [
      ['GET', `/runs/${runId}/comments`],
      ['POST', `/runs/${runId}/comments`],
      ['GET', `/comments/${commentId}`],
    ];
    const missing: Array<['GET' | 'POST', string]> = [
      ['GET', `/runs/${unknownRun}/comments`],
      ['POST', `/runs/${unknownRun}/comments`],
      ['GET', `/comments/${unknownComment}`],
      ['GET', '/runs/nonexistent/comments'],
      ['POST', '/runs/nonexistent/comments'],
      ['GET', '/comments/nonexistent'],
      // A real id of the other kind is still the wrong shape.
      ['GET', `/comments/${runId}`],
      ['GET', `/runs/${commentId}/comments`],
    ];
    expect(await answers(stranger, existing)).toEqual(allNotFound(existing));
    expect(await answers(stranger, missing)).toEqual(allNotFound(missing));
    expect(await answers(owner, missing)).toEqual(allNotFound(missing));
  });

  it('answers 404, not 422, to a stranger posting an invalid body', async () => {
    const response = await api.post(`/runs/${runId}/comments`, { token: stranger, body: commentDocument('') });
    expect(response.json).toEqual(notFound);
  });

  it('answers 401 without a token', async () => {
    const response = await api.get(`/runs/${runId}/comments`);
    expect(response.status).toBe(401);
  });
});

describe('pagination', () => {
  let runId: string;
  let all: any[];
  beforeAll(async () => {
    runId = await newRun();
    for (let i = 1; i <= 5; i++)
      await api.post(`/runs/${runId}/comments`, { token: owner, body: commentDocument(`#${i}`) });
    all = (await api.get(`/runs/${runId}/comments`, { token: owner })).json.data;
  });

  const link = (number: number, size: number) =>
    `${api.baseUrl}/api/v2/runs/${runId}/comments?page%5Bnumber%5D=${number}&page%5Bsize%5D=${size}`;

  it('pages with meta and absolute links, brackets encoded or not', async () => {
    for (const query of ['page%5Bnumber%5D=2&page%5Bsize%5D=2', 'page[number]=2&page[size]=2']) {
      const response = await api.get(`/runs/${runId}/comments?${query}`, { token: reader });
      expect(response.json).toEqual({
        data: all.slice(2, 4),
        links: { self: link(2, 2), first: link(1, 2), prev: link(1, 2), next: link(3, 2), last: link(3, 2) },
        meta: {
          pagination: {
            'current-page': 2,
            'page-size': 2,
            'prev-page': 1,
            'next-page': 3,
            'total-pages': 3,
            'total-count': 5,
          },
        },
      });
    }
  });

  it('uses the contract default of 20 once any page parameter is sent', async () => {
    const response = await api.get(`/runs/${runId}/comments?page[number]=1`, { token: reader });
    expect(response.json.meta.pagination).toEqual({
      'current-page': 1,
      'page-size': 20,
      'prev-page': null,
      'next-page': null,
      'total-pages': 1,
      'total-count': 5,
    });
  });

  it('returns an empty page past the end with correct meta', async () => {
    const response = await api.get(`/runs/${runId}/comments?page[number]=9&page[size]=2`, { token: reader });
    expect(response.json.data).toEqual([]);
    expect(response.json.meta.pagination).toEqual({
      'current-page': 9,
      'page-size': 2,
      'prev-page': 8,
      'next-page': null,
      'total-pages': 3,
      'total-count': 5,
    });
  });

  it('refuses bad page parameters with 422', async () => {
    const tooBig = await api.get(`/runs/${runId}/comments?page[size]=101`, { token: reader });
    expect(tooBig.json).toEqual(errorBody(422, 'invalid attribute', 'page[size] must be between 1 and 100'));
    const notNumber = await api.get(`/runs/${runId}/comments?page[number]=first`, { token: reader });
    expect(notNumber.status).toBe(422);
  });
});
