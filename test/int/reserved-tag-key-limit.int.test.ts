import { describe, expect, it } from '@jest/globals';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Principal } from '#shared/auth/principal';
import { randomAlphanumeric } from '#shared/ids';
import { KEYS_PER_ORGANIZATION } from '#shared/reserved-tag-keys/key-rule';
import { documentClient, tableName } from '#shared/store/client';
import { keys } from '#shared/store/keys';
import { errorBody } from '../support/api';
import { callRoute } from '../support/call-route';
import { keyDocument } from '../support/documents';

/**
 * An organization holds at most KEYS_PER_ORGANIZATION live keys. Every change of a key writes the
 * organization's head whole, and the head grows with its live keys (a count per span of creation
 * time; before spans, one per key, and a create past about 29,000 keys met DynamoDB's 400 KB item
 * limit and answered 500). Through the real handlers over DynamoDB Local; the head is given the count of a full
 * organization directly, as creating 10,000 keys would take minutes.
 */
const organization = () => `limit-${randomAlphanumeric(8).toLowerCase()}`;
const ownerOf = (org: string): Principal => ({
  subject: 'user-owner',
  tokenId: 'at-owner',
  grants: { [org]: 'owner' },
});
const full = errorBody(
  422,
  'invalid attribute',
  `Organization has reached its limit of ${KEYS_PER_ORGANIZATION.toLocaleString('en')} reserved tag keys: delete one to add another`,
);

function api(org: string) {
  const owner = ownerOf(org);
  return {
    create: (key: string, headers: Record<string, string> = {}) =>
      callRoute(
        'reserved-tag-keys/create',
        `/organizations/${org}/reserved-tag-keys`,
        owner,
        keyDocument(key),
        headers,
      ),
    remove: (id: string) => callRoute('reserved-tag-keys/delete', `/reserved-tag-keys/${id}`, owner),
    list: () => callRoute('reserved-tag-keys/list', `/organizations/${org}/reserved-tag-keys?page[size]=100`, owner),
  };
}
/**
 * Counts `more` live keys on a new organization's head, before its first create: the head's count
 * moves only with its version, which a function's memory of the head relies on.
 */
const countMore = (org: string, more: number) =>
  documentClient.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.reservedTagKeyCounter(org),
      UpdateExpression: 'ADD itemCount :more',
      ExpressionAttributeValues: { ':more': more },
    }),
  );
const headOf = async (org: string) =>
  (
    await documentClient.send(
      new GetCommand({ TableName: tableName(), Key: keys.reservedTagKeyCounter(org), ConsistentRead: true }),
    )
  ).Item;

describe(`an organization with ${KEYS_PER_ORGANIZATION.toLocaleString('en')} reserved tag keys`, () => {
  it('refuses another create with a 422 that says why, writes nothing, and takes one again once a key is deleted', async () => {
    const org = organization();
    const { create, remove, list } = api(org);
    await countMore(org, KEYS_PER_ORGANIZATION - 1);
    const first = await create('first');
    expect(first.status).toBe(201);
    const before = await headOf(org);

    const refused = await create('one-too-many');
    expect([refused.status, refused.json]).toEqual([422, full]);
    const keyed = await create('keyed', { 'Idempotency-Key': 'limit-keyed' });
    expect([keyed.status, keyed.json]).toEqual([422, full]);
    expect(await headOf(org)).toEqual(before); // no commit: the same version, count and spans
    expect((await list()).json.data.map((k: { id: string }) => k.id)).toEqual([first.json.data.id]);

    // A delete makes room; the keyed create, retried, creates its key (its refusal kept no receipt).
    expect((await remove(first.json.data.id)).status).toBe(204);
    const retried = await create('keyed', { 'Idempotency-Key': 'limit-keyed' });
    expect(retried.status).toBe(201);
    expect(retried.json.data.attributes.key).toBe('keyed');
    expect([(await create('one-too-many')).status, (await headOf(org))?.itemCount]).toEqual([
      422,
      KEYS_PER_ORGANIZATION,
    ]);
  });

  it('gives the last place to one of several creates racing for it: one 201, the others 422', async () => {
    const org = organization();
    const { create, list } = api(org);
    await countMore(org, KEYS_PER_ORGANIZATION - 2);
    expect((await create('first')).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => create(`racer-${i}`)));
    const created = answers.filter((a) => a.status === 201);
    expect(created).toHaveLength(1);
    for (const answer of answers.filter((a) => a.status !== 201))
      expect([answer.status, answer.json]).toEqual([422, full]);
    const listed = (await list()).json.data.map((k: { attributes: { key: string } }) => k.attributes.key);
    expect(listed.sort()).toEqual(['first', created[0]!.json.data.attributes.key].sort());
    expect((await headOf(org))?.itemCount).toBe(KEYS_PER_ORGANIZATION);
  });
});
