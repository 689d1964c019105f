import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { errorBody, expectContractHeaders, tokenFor, type ApiResponse } from '../support/api';
import { useLocalStack } from '../support/local-stack';
import { registerNewRun } from '#shared/store/runs';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '#shared/store/client';
import { PYTHON_TFE_LONGEST_RETRY_SECONDS, REPLAYED_HEADER } from '#shared/http/safe-retries';
import { commentDocument, keyDocument } from '../support/documents';

/**
 * Safe retries of creates, over HTTP through the synthesized stack: `Idempotency-Key` (24 h) and,
 * for clients that send none, an identical create by the same token within 10 minutes. The
 * keyless replays are python-tfe 1.5.0's; go-tfe v1.110.0 replays a POST the same way on a 429
 * (and on a 5xx or a lost connection with RetryServerErrors on).
 */
const { api, roundTrips } = useLocalStack();

let member: string;
let otherMember: string;
let owner: string;
beforeAll(async () => {
  [member, otherMember, owner] = await Promise.all([
    tokenFor({ acme: 'member' }),
    tokenFor({ acme: 'member' }, 'user-other'),
    tokenFor({ acme: 'owner' }),
  ]);
});

const newRun = async () => (await registerNewRun('acme')).runId;
const commentsOf = async (runId: string) =>
  (await api.get(`/runs/${runId}/comments`, { token: member })).json.data as Array<{ id: string }>;
const keyed = (key: string) => ({ 'Idempotency-Key': key });

const replayedHeader = (response: ApiResponse) => response.headers.get('idempotent-replayed');

describe('Idempotency-Key on a comment create', () => {
  it('returns the first response to a retry with the same key and body, and makes no second comment', async () => {
    const runId = await newRun();
    const first = await api.post(`/runs/${runId}/comments`, {
      token: member,
      body: commentDocument('Approved'),
      headers: keyed('k-1'),
    });
    const retry = await api.post(`/runs/${runId}/comments`, {
      token: member,
      body: commentDocument('Approved'),
      headers: keyed('k-1'),
    });
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.json).toEqual(first.json);
    expect(await commentsOf(runId)).toEqual([expect.objectContaining({ id: first.json.data.id })]);
  });

  it('says a replayed answer is one (Idempotent-Replayed: true, as Stripe); a first answer carries no such header', async () => {
    const runId = await newRun();
    const first = await api.post(`/runs/${runId}/comments`, {
      token: member,
      body: commentDocument('plan approved'),
      headers: keyed('k-replayed'),
    });
    const retry = await api.post(`/runs/${runId}/comments`, {
      token: member,
      body: commentDocument('plan approved'),
      headers: keyed('k-replayed'),
    });
    expect([first.status, replayedHeader(first)]).toEqual([201, null]);
    expect([retry.status, replayedHeader(retry)]).toEqual([201, 'true']);
    const { actual, expected } = expectContractHeaders(retry);
    expect(actual).toEqual(expected);
    // As docs/api.md's Safe retries says it.
    expect(readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8')).toContain(
      `\`${REPLAYED_HEADER}: true\``,
    );
  });

  it('judges a create with its own new key by that key alone: the same text twice on purpose makes two comments', async () => {
    const runId = await newRun();
    const keyless = await api.post(`/runs/${runId}/comments`, {
      token: member,
      body: commentDocument('plan approved'),
    });
    const a = await api.post(`/runs/${runId}/comments`, {
      token: member,
      body: commentDocument('plan approved'),
      headers: keyed('bot-run-1'),
    });
    const b = await api.post(`/runs/${runId}/comments`, {
      token: member,
      body: commentDocument('plan approved'),
      headers: keyed('bot-run-2'),
    });
    expect([keyless, a, b].map((r) => [r.status, replayedHeader(r)])).toEqual([
      [201, null],
      [201, null],
      [201, null],
    ]);
    expect(new Set([keyless, a, b].map((r) => r.json.data.id)).size).toBe(3);
    expect(await commentsOf(runId)).toHaveLength(3);
  });

  it('refuses the same key with another body (422) and writes nothing', async () => {
    const runId = await newRun();
    await api.post(`/runs/${runId}/comments`, { token: member, body: commentDocument('one'), headers: keyed('k-2') });
    const other = await api.post(`/runs/${runId}/comments`, {
      token: member,
      body: commentDocument('two'),
      headers: keyed('k-2'),
    });
    expect(other.status).toBe(422);
    expect(other.json).toEqual(
      errorBody(
        422,
        'invalid attribute',
        'Idempotency-Key has already been used for a different request (another body or path)',
      ),
    );
    expect(await commentsOf(runId)).toHaveLength(1);
  });

  it('scopes a key to its token: another token with the same key makes its own comment', async () => {
    const runId = await newRun();
    const a = await api.post(`/runs/${runId}/comments`, {
      token: member,
      body: commentDocument('same'),
      headers: keyed('shared-key'),
    });
    const b = await api.post(`/runs/${runId}/comments`, {
      token: otherMember,
      body: commentDocument('same'),
      headers: keyed('shared-key'),
    });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.json.data.id).not.toBe(a.json.data.id);
  });

  it('makes one comment of concurrent requests with one key, each answered with it', async () => {
    const runId = await newRun();
    const responses = await Promise.all(
      Array.from({ length: 4 }, () =>
        api.post(`/runs/${runId}/comments`, {
          token: member,
          body: commentDocument('at once'),
          headers: keyed('k-concurrent'),
        }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(responses.map((r) => r.json.data.id)).size).toBe(1);
    expect(await commentsOf(runId)).toHaveLength(1);
  });

  it('does not remember a refused create: the corrected retry with the same key runs', async () => {
    const runId = await newRun();
    const refused = await api.post(`/runs/${runId}/comments`, {
      token: member,
      body: commentDocument('   '),
      headers: keyed('k-3'),
    });
    expect(refused.status).toBe(422);
    // Another body under the same key: no record was kept, so no mismatch either.
    const corrected = await api.post(`/runs/${runId}/comments`, {
      token: member,
      body: commentDocument('fixed'),
      headers: keyed('k-3'),
    });
    expect(corrected.status).toBe(201);
  });

  it('takes any printable ASCII key, inner spaces included; spaces around it are not part of it (HTTP strips them)', async () => {
    const runId = await newRun();
    const first = await api.post(`/runs/${runId}/comments`, {
      token: member,
      body: commentDocument('spaced'),
      headers: keyed('retry 1 of job 42'),
    });
    expect(first.status).toBe(201);
    const retry = await api.post(`/runs/${runId}/comments`, {
      token: member,
      body: commentDocument('spaced'),
      headers: keyed('  retry 1 of job 42 '),
    });
    expect(retry.status).toBe(201);
    expect(retry.json.data.id).toBe(first.json.data.id);
    const everyCharacter = await api.post(`/runs/${runId}/comments`, {
      token: member,
      body: commentDocument('all'),
      headers: keyed(String.fromCharCode(...Array.from({ length: 95 }, (_, i) => 0x20 + i)).trim()),
    });
    expect(everyCharacter.status).toBe(201);
    expect(await commentsOf(runId)).toHaveLength(2);
  });

  it('refuses a key that is not 1 to 255 printable ASCII characters (400)', async () => {
    const runId = await newRun();
    for (const key of ['k'.repeat(256), 'tab\there', 'clé', '   ']) {
      const response = await api.post(`/runs/${runId}/comments`, {
        token: member,
        body: commentDocument('x'),
        headers: keyed(key),
      });
      expect([JSON.stringify(key), response.json]).toEqual([
        JSON.stringify(key),
        errorBody(400, 'bad request', 'Idempotency-Key must be 1 to 255 printable ASCII characters'),
      ]);
    }
    expect(await commentsOf(runId)).toEqual([]);
  });

  it("costs a first create its receipt's claim beside its items, then its commit; a replay a refused claim, its discarded items and reads", async () => {
    const runId = await newRun();
    const path = `/runs/${runId}/comments`;
    const first = await roundTrips(() =>
      api.post(path, { token: member, body: commentDocument('counted'), headers: keyed('k-4') }),
    );
    // The run (unknown to the function); the receipt's claim, the copy and the member side by side; the commit on the run's record.
    expect(first.commands).toEqual([
      'GetItemCommand',
      'PutItemCommand',
      'PutItemCommand',
      'PutItemCommand',
      'UpdateItemCommand',
    ]);
    const replay = await roundTrips(() =>
      api.post(path, { token: member, body: commentDocument('counted'), headers: keyed('k-4') }),
    );
    expect(replay.result.status).toBe(201);
    expect(replay.result.json).toEqual(first.result.json);
    // The claim refused with the receipt beside the attempt's own items, which it deletes; then the
    // run's record, which holds the comment it names, and that comment's member (written out).
    expect(replay.commands).toEqual([
      'PutItemCommand',
      'PutItemCommand',
      'PutItemCommand',
      'DeleteItemCommand',
      'DeleteItemCommand',
      'GetItemCommand',
      'GetItemCommand',
    ]);
  });
});

describe('Idempotency-Key on a reserved tag key create', () => {
  it('returns the first 201 instead of a false "Key has already been taken"', async () => {
    const first = await api.post('/organizations/acme/reserved-tag-keys', {
      token: owner,
      body: keyDocument('cost-center'),
      headers: keyed('rtk-1'),
    });
    const retry = await api.post('/organizations/acme/reserved-tag-keys', {
      token: owner,
      body: keyDocument('cost-center'),
      headers: keyed('rtk-1'),
    });
    expect([first.status, retry.status]).toEqual([201, 201]);
    expect(retry.json.data.id).toBe(first.json.data.id);
    expect([replayedHeader(first), replayedHeader(retry)]).toEqual([null, 'true']);
  });

  it('judges a create with its own new key by that key alone: a new key for a taken name is a 422, not a replay', async () => {
    const path = '/organizations/acme/reserved-tag-keys';
    const first = await api.post(path, { token: owner, body: keyDocument('keyed-once'), headers: keyed('rtk-new-1') });
    const other = await api.post(path, { token: owner, body: keyDocument('keyed-once'), headers: keyed('rtk-new-2') });
    expect(first.status).toBe(201);
    expect(other.json).toEqual(
      errorBody(422, 'invalid attribute', 'Key has already been taken', '/data/attributes/key'),
    );
    expect(replayedHeader(other)).toBeNull();
  });

  it('answers a retry after the key was deleted with the first answer, the deleted key (the receipt is the first answer, as Stripe)', async () => {
    const path = '/organizations/acme/reserved-tag-keys';
    const first = await api.post(path, {
      token: owner,
      body: keyDocument('keyed-then-deleted'),
      headers: keyed('rtk-deleted'),
    });
    expect((await api.delete(`/reserved-tag-keys/${first.json.data.id}`, { token: owner })).status).toBe(204);
    const retry = await api.post(path, {
      token: owner,
      body: keyDocument('keyed-then-deleted'),
      headers: keyed('rtk-deleted'),
    });
    expect([retry.status, replayedHeader(retry)]).toEqual([201, 'true']);
    expect(retry.json).toEqual(first.json);
    const listed = (await api.get(`${path}?page%5Bsize%5D=100`, { token: owner })).json.data as Array<{
      attributes: { key: string };
    }>;
    expect(listed.map((k) => k.attributes.key)).not.toContain('keyed-then-deleted');
  });
});

describe('a client that sends no key (python-tfe 1.5.0 replays POSTs on 429, 502, 503, 504 and lost connections)', () => {
  it('gets the first comment back for an identical create by the same token on the same run', async () => {
    const runId = await newRun();
    const first = await api.post(`/runs/${runId}/comments`, { token: member, body: commentDocument('replayed') });
    const replay = await api.post(`/runs/${runId}/comments`, { token: member, body: commentDocument('replayed') });
    expect(replay.status).toBe(201);
    expect(replay.json.data.id).toBe(first.json.data.id);
    expect([replayedHeader(first), replayedHeader(replay)]).toEqual([null, 'true']);
    expect(await commentsOf(runId)).toHaveLength(1);
  });

  it("keeps the first result for python-tfe's whole retry schedule, 429 waits included (8 minutes at its defaults)", async () => {
    const runId = await newRun();
    const first = await api.post(`/runs/${runId}/comments`, { token: member, body: commentDocument('replayed late') });
    const receipts =
      (
        await documentClient.send(
          new ScanCommand({
            TableName: tableName(),
            FilterExpression: 'entity = :receipt',
            ExpressionAttributeValues: { ':receipt': 'Receipt' },
          }),
        )
      ).Items ?? [];
    const receipt = receipts.find((item) => item.recordId === first.json.data.id)!;
    const createdAt = Date.parse(first.json.data.attributes['created-at']) / 1000;
    expect(receipt.sweepAt - createdAt).toBeGreaterThanOrEqual(PYTHON_TFE_LONGEST_RETRY_SECONDS);
    // It expires on its own: listed by the sweeper's index, not by DynamoDB's TTL.
    expect(receipt.sweepShard).toMatch(/^SWEEP#\d+$/);
    expect(receipt.ttl).toBeUndefined();
  });

  it('still makes a comment for another body, another token or another run', async () => {
    const [runId, otherRun] = [await newRun(), await newRun()];
    const ids = new Set<string>();
    for (const [token, run, text] of [
      [member, runId, 'a'],
      [member, runId, 'b'],
      [otherMember, runId, 'a'],
      [member, otherRun, 'a'],
    ] as const) {
      const response = await api.post(`/runs/${run}/comments`, { token, body: commentDocument(text) });
      expect(response.status).toBe(201);
      ids.add(response.json.data.id);
    }
    expect(ids.size).toBe(4);
  });

  it('gets the first reserved tag key back instead of a false 422, and a real duplicate is still a 422', async () => {
    const first = await api.post('/organizations/acme/reserved-tag-keys', {
      token: owner,
      body: keyDocument('environment'),
    });
    const replay = await api.post('/organizations/acme/reserved-tag-keys', {
      token: owner,
      body: keyDocument('environment'),
    });
    expect(replay.status).toBe(201);
    expect(replay.json.data.id).toBe(first.json.data.id);
    expect([replayedHeader(first), replayedHeader(replay)]).toEqual([null, 'true']);
    const otherOwner = await tokenFor({ acme: 'owner' }, 'user-other-owner');
    const duplicate = await api.post('/organizations/acme/reserved-tag-keys', {
      token: otherOwner,
      body: keyDocument('Environment'),
    });
    expect(duplicate.json).toEqual(
      errorBody(422, 'invalid attribute', 'Key has already been taken', '/data/attributes/key'),
    );
  });

  it('creates the key again after it was deleted (Terraform replacing a key: destroy, then create within seconds)', async () => {
    const path = '/organizations/acme/reserved-tag-keys';
    const first = await api.post(path, { token: owner, body: keyDocument('replaced') });
    expect((await api.delete(`/reserved-tag-keys/${first.json.data.id}`, { token: owner })).status).toBe(204);
    const again = await api.post(path, { token: owner, body: keyDocument('replaced') });
    expect([again.status, replayedHeader(again)]).toEqual([201, null]);
    expect(again.json.data.id).not.toBe(first.json.data.id);
    // And a replay of that second create is answered with it.
    const replay = await api.post(path, { token: owner, body: keyDocument('replaced') });
    expect([replay.status, replayedHeader(replay), replay.json.data.id]).toEqual([201, 'true', again.json.data.id]);
    const listed = (await api.get(`${path}?page%5Bsize%5D=100`, { token: owner })).json.data as Array<{ id: string }>;
    expect(listed.map((k) => k.id)).toContain(again.json.data.id);
  });

  it('makes one key of identical creates sent at once, and answers each with it', async () => {
    const path = '/organizations/acme/reserved-tag-keys';
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => api.post(path, { token: owner, body: keyDocument('sent-at-once') })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(201));
    expect(new Set(answers.map((a) => a.json.data.id)).size).toBe(1);
    expect(answers.filter((a) => replayedHeader(a) === null)).toHaveLength(1);
    const listed = (await api.get(`${path}?page%5Bsize%5D=100`, { token: owner })).json.data as Array<{
      attributes: { key: string };
    }>;
    expect(listed.filter((k) => k.attributes.key === 'sent-at-once')).toHaveLength(1);
  });

  it('answers a replay whose key another owner renamed meanwhile with a new key as asked: a replay answers only while the key is what it asks for', async () => {
    const path = '/organizations/acme/reserved-tag-keys';
    // python-tfe creates a key and its answer is lost; another owner renames the key; python-tfe replays.
    const first = await api.post(path, { token: owner, body: keyDocument('renamed-later') });
    const otherOwner = await tokenFor({ acme: 'owner' }, 'user-renamer');
    const renamed = await api.patch(`/reserved-tag-keys/${first.json.data.id}`, {
      token: otherOwner,
      body: keyDocument('renamed-now'),
    });
    expect(renamed.status).toBe(200);
    const again = await api.post(path, { token: owner, body: keyDocument('renamed-later') });
    // HCP Terraform would create the key asked for, and Terraform reads back the key it asked for.
    expect([again.status, replayedHeader(again), again.json.data.attributes.key]).toEqual([201, null, 'renamed-later']);
    expect(again.json.data.id).not.toBe(first.json.data.id);
    const listed = (await api.get(`${path}?page%5Bsize%5D=100`, { token: owner })).json.data as Array<{
      attributes: { key: string };
    }>;
    expect(
      listed
        .map((k) => k.attributes.key)
        .filter((key) => key.startsWith('renamed-'))
        .sort(),
    ).toEqual(['renamed-later', 'renamed-now']);
    // The receipt names the new key now: a further replay answers with it.
    const replay = await api.post(path, { token: owner, body: keyDocument('renamed-later') });
    expect([replay.status, replayedHeader(replay), replay.json.data.id]).toEqual([201, 'true', again.json.data.id]);
  });
});
