import { describe, expect, it } from '@jest/globals';
import { registerNewRun } from '#shared/store/runs';
import { randomAlphanumeric } from '#shared/ids';
import type { Principal } from '#shared/auth/principal';
import { callRoute } from '../support/call-route';
import { indexUnitsOf, recordCapacity, writeUnitsOf } from '../bench/capacity';
import { WRITE_UNIT_GOALS } from '../bench/goals';

/**
 * Issue 35 item 7: write units per create, for items under 1 KB, as DynamoDB Local reports them
 * (ReturnConsumedCapacity: INDEXES on every call, test/bench/capacity.ts), through the real
 * create handlers. DynamoDB Local reports the table's units and, with INDEXES, the Expiry index's
 * entry for the receipt apart; the entry counted from the items written (indexUnitsOf, which the
 * bench falls back on where a store reports no index) agrees.
 */
const organization = () => `wu-${randomAlphanumeric(8).toLowerCase()}`;
const owner = (org: string): Principal => ({ subject: 'user-wu', tokenId: 'at-wu', grants: { [org]: 'owner' } });

const unitsOf = writeUnitsOf;

describe('write units per create (DynamoDB Local consumed capacity)', () => {
  it(`a comment create: at most ${WRITE_UNIT_GOALS['comments/create']} write units, the receipt's index entry included`, async () => {
    const org = organization();
    const { runId } = await registerNewRun(org);
    const create = (body: string) =>
      callRoute('comments/create', `/runs/${runId}/comments`, owner(org), {
        data: { type: 'comments', attributes: { body } },
      });
    expect((await create('first: the function learns the run')).status).toBe(201);
    const { result, capacity } = await recordCapacity(() => create('second, as a warm function makes it'));
    expect(result.status).toBe(201);
    // The receipt's claim, the copy and the member side by side, then the run's record (the
    // commit): one unit each.
    expect(capacity.perCall.map((c) => [c.command, c.write])).toEqual([
      ['PutItem', 1],
      ['PutItem', 1],
      ['PutItem', 1],
      ['UpdateItem', 1],
    ]);
    expect(capacity.tableWrite).toBe(4);
    expect({ reported: capacity.indexWrite, fromItems: indexUnitsOf(capacity) }).toEqual({
      reported: { Expiry: 1 },
      fromItems: 1,
    });
    expect(unitsOf(capacity)).toBe(5);
    expect(unitsOf(capacity)).toBeLessThanOrEqual(WRITE_UNIT_GOALS['comments/create']!);
  });

  it(`a reserved tag key create: at most ${WRITE_UNIT_GOALS['reserved-tag-keys/create']} write units, the receipt's index entry included`, async () => {
    const org = organization();
    const create = (key: string, headers: Record<string, string> = {}) =>
      callRoute(
        'reserved-tag-keys/create',
        `/organizations/${org}/reserved-tag-keys`,
        owner(org),
        { data: { type: 'reserved-tag-keys', attributes: { key } } },
        headers,
      );
    expect((await create('first')).status).toBe(201);
    // Without an Idempotency-Key (as the official clients send it): no receipt of its own, the key
    // keeps it. The head (the commit), the guard, the copy, the member: one unit each.
    const plain = await recordCapacity(() => create('second'));
    expect(plain.result.status).toBe(201);
    expect(plain.capacity.perCall.filter((c) => c.write > 0).map((c) => c.write)).toEqual([1, 1, 1, 1]);
    expect(indexUnitsOf(plain.capacity)).toBe(0);
    expect(unitsOf(plain.capacity)).toBe(4);
    // With one: its receipt's claim and its index entry too.
    const keyed = await recordCapacity(() => create('third', { 'Idempotency-Key': 'wu-third' }));
    expect(keyed.result.status).toBe(201);
    expect(keyed.capacity.perCall.filter((c) => c.write > 0).map((c) => c.write)).toEqual([1, 1, 1, 1, 1]);
    expect(keyed.capacity.tableWrite).toBe(5);
    expect({ reported: keyed.capacity.indexWrite, fromItems: indexUnitsOf(keyed.capacity) }).toEqual({
      reported: { Expiry: 1 },
      fromItems: 1,
    });
    expect(unitsOf(keyed.capacity)).toBe(6);
    expect(unitsOf(keyed.capacity)).toBeLessThanOrEqual(WRITE_UNIT_GOALS['reserved-tag-keys/create']!);
  });
});
