import { beforeAll, describe, expect, it } from '@jest/globals';
import { errorBody, tokenFor } from '../support/api';
import { useLocalStack } from '../support/local-stack';
import { keyDocument } from '../support/documents';

/**
 * Headers that say two things are refused, never judged by their order. Two different
 * Authorization headers on one request are ambiguous credentials: refused with 401
 * whatever their order and spelling. The authorizer judges the one value API Gateway keys its
 * cache on (a refusal of it says the token is not accepted); the function refuses the pair when
 * that value is allowed, cached or not (saying why). Two different Idempotency-Key or Content-Type
 * headers on a create are a 400 that writes nothing.
 */
const { api } = useLocalStack();
const ORG = 'ambiguous-org';
const ambiguous = errorBody(
  401,
  'unauthorized',
  'more than one Authorization header: send exactly one Authorization: Bearer <token>',
);
const refused = [ambiguous, errorBody(401, 'unauthorized', 'token not accepted: it is unknown, revoked or expired')];

const getWithLines = (path: string, lines: string[][]) => api.requestWithLines('GET', path, lines);

let good: string, other: string;
beforeAll(async () => {
  [good, other] = await Promise.all([tokenFor({ [ORG]: 'reader' }), tokenFor({ 'elsewhere-org': 'owner' })]);
});
const keys = `/organizations/${ORG}/reserved-tag-keys`;

describe('two different Authorization headers', () => {
  it.each<[string, (good: string, other: string) => string[][]]>([
    [
      'good then another',
      (g, o) => [
        ['Authorization', `Bearer ${g}`],
        ['Authorization', `Bearer ${o}`],
      ],
    ],
    [
      'another then good',
      (g, o) => [
        ['Authorization', `Bearer ${o}`],
        ['Authorization', `Bearer ${g}`],
      ],
    ],
    [
      'good then garbage, spelled differently',
      (g) => [
        ['Authorization', `Bearer ${g}`],
        ['authorization', 'Bearer nope'],
      ],
    ],
    [
      'garbage then good, spelled differently',
      (g) => [
        ['authorization', 'Bearer nope'],
        ['Authorization', `Bearer ${g}`],
      ],
    ],
  ])("%s: 401, never the good token's answer", async (_case, lines) => {
    const answer = await getWithLines(keys, lines(good, other));
    expect(answer.status).toBe(401);
    expect(refused).toContainEqual(answer.json);
  });

  it('are refused even when API Gateway holds an Allow cached for one of them', async () => {
    const token = await tokenFor({ [ORG]: 'reader' });
    expect((await getWithLines(keys, [['Authorization', `Bearer ${token}`]])).status).toBe(200); // the Allow is cached now
    for (const lines of [
      [
        ['Authorization', `Bearer ${token}`],
        ['Authorization', 'Bearer nope'],
      ],
      [
        ['Authorization', 'Bearer nope'],
        ['Authorization', `Bearer ${token}`],
      ],
    ]) {
      const answer = await getWithLines(keys, lines);
      expect(answer.status).toBe(401);
      expect(refused).toContainEqual(answer.json);
    }
  });

  it('leave no cached answer that refuses the good token alone afterwards', async () => {
    await getWithLines(keys, [
      ['Authorization', `Bearer ${good}`],
      ['Authorization', `Bearer ${other}`],
    ]);
    await getWithLines(keys, [
      ['Authorization', `Bearer ${other}`],
      ['Authorization', `Bearer ${good}`],
    ]);
    expect((await getWithLines(keys, [['Authorization', `Bearer ${good}`]])).status).toBe(200);
  });

  it('the same header twice is not ambiguous', async () => {
    const answer = await getWithLines(keys, [
      ['Authorization', `Bearer ${good}`],
      ['Authorization', `Bearer ${good}`],
    ]);
    expect([answer.status, answer.json]).toEqual([200, expect.anything()]);
  });
});

describe('two different Idempotency-Key or Content-Type headers on a create', () => {
  const JSON_API = ['Content-Type', 'application/vnd.api+json'];
  const create = async (key: string, lines: string[][]) => {
    const owner = await tokenFor({ [ORG]: 'owner' });
    return api.requestWithLines(
      'POST',
      keys,
      [['Authorization', `Bearer ${owner}`], ...lines],
      JSON.stringify(keyDocument(key)),
    );
  };
  const listed = async (key: string) => {
    const reader = await tokenFor({ [ORG]: 'reader' });
    const answer = await getWithLines(`${keys}?page[size]=100`, [['Authorization', `Bearer ${reader}`]]);
    return answer.json.data.filter((k: { attributes: { key: string } }) => k.attributes.key === key).length;
  };

  it.each<[string, string[][], string]>([
    ['two keys', [JSON_API, ['Idempotency-Key', 'job-42-a'], ['Idempotency-Key', 'job-42-b']], 'Idempotency-Key'],
    [
      'two keys, spelled differently',
      [JSON_API, ['idempotency-key', 'job-43-b'], ['Idempotency-Key', 'job-43-a']],
      'Idempotency-Key',
    ],
    ['another media type, then JSON:API', [['Content-Type', 'text/plain'], JSON_API], 'Content-Type'],
    ['JSON:API, then another media type', [JSON_API, ['content-type', 'text/plain']], 'Content-Type'],
  ])('%s: 400 whatever their order, nothing written', async (name, lines, header) => {
    const key = `ambiguous-${name.replace(/[^a-z]+/g, '-')}`;
    const answer = await create(key, lines);
    expect(answer).toEqual({
      status: 400,
      json: errorBody(400, 'bad request', `more than one ${header} header: send exactly one`),
    });
    expect(await listed(key)).toBe(0);
  });

  it('the same header sent twice is one header', async () => {
    const answer = await create('sent-twice', [
      JSON_API,
      JSON_API,
      ['Idempotency-Key', 'job-44'],
      ['Idempotency-Key', 'job-44'],
    ]);
    expect(answer.status).toBe(201);
    expect(await listed('sent-twice')).toBe(1);
  });
});
