import { describe, expect, it } from '@jest/globals';
import { crc32 } from 'node:zlib';
import {
  InFlightWrites,
  itemsWritten,
  MrscEmulation,
  mrscErrorResponse,
  REPLICATED_WRITE_CONFLICT_MESSAGE,
  seededRandom,
  transactionsRefusedMessage,
  type ItemRef,
} from '#infra/local/aws/mrsc';
import { replicatedWriteConflictRate } from '#infra/local/settings';

/**
 * The MRSC emulation's decisions, call by call, without a proxy: what an MRSC replica refuses
 * (transactions), and the replicated write conflicts it may answer a write with (at a rate, or
 * because another Region's write of the same item is in flight). test/int/mrsc-proxy.int.test.ts
 * checks the same through the IAM proxy, with the SDK, against DynamoDB Local.
 */
const keys = () => ['PK', 'SK'];
const table = 'tbl';
const put = (pk: string, sk: string) => ({
  TableName: table,
  Item: { PK: { S: pk }, SK: { S: sk }, body: { S: 'x' } },
});
const update = (pk: string, sk: string) => ({
  TableName: table,
  Key: { PK: { S: pk }, SK: { S: sk } },
  UpdateExpression: 'SET a = :a',
});
const item = (pk: string, sk: string): ItemRef => ({ table, key: JSON.stringify({ PK: { S: pk }, SK: { S: sk } }) });

describe('transactions', () => {
  it('are refused with a ValidationException when refuseTransactions is on, whatever they hold', () => {
    const mrsc = new MrscEmulation({ refuseTransactions: true, replicatedWriteConflictRate: 0 });
    for (const operation of ['TransactWriteItems', 'TransactGetItems']) {
      expect(mrsc.admit(operation, { TransactItems: [] }, 'us-east-1').refusal).toEqual({
        error: 'ValidationException',
        cause: 'transaction',
        region: 'us-east-1',
        message: transactionsRefusedMessage(operation),
      });
    }
    expect(transactionsRefusedMessage('TransactWriteItems')).toMatch(
      /not supported on multi-Region strongly consistent \(MRSC\) global tables/,
    );
  });

  it('pass when refuseTransactions is off, and are never counted as conflicting writes', () => {
    const mrsc = new MrscEmulation({ refuseTransactions: false, replicatedWriteConflictRate: 1 });
    expect(mrsc.admit('TransactWriteItems', { TransactItems: [{ Put: put('a', 'b') }] }).refusal).toBeUndefined();
    expect(mrsc.admit('TransactGetItems', { TransactItems: [] }).refusal).toBeUndefined();
  });
});

describe('replicated write conflicts at a rate', () => {
  it('refuse every write at rate 1, and never a read', () => {
    const mrsc = new MrscEmulation({ refuseTransactions: false, replicatedWriteConflictRate: 1 });
    for (const [operation, body] of [
      ['PutItem', put('a', 'b')],
      ['UpdateItem', update('a', 'b')],
      ['DeleteItem', update('a', 'b')],
      ['BatchWriteItem', { RequestItems: { [table]: [{ PutRequest: put('a', 'b') }] } }],
    ] as const) {
      expect(mrsc.admit(operation, body, 'eu-west-1').refusal).toEqual({
        error: 'ReplicatedWriteConflictException',
        cause: 'injected',
        region: 'eu-west-1',
        message: REPLICATED_WRITE_CONFLICT_MESSAGE,
      });
    }
    for (const operation of ['GetItem', 'Query', 'BatchGetItem', 'Scan', 'DescribeTable']) {
      expect(mrsc.admit(operation, { TableName: table }).refusal).toBeUndefined();
    }
  });

  it('refuse nothing at rate 0', () => {
    const mrsc = new MrscEmulation({ refuseTransactions: false, replicatedWriteConflictRate: 0 });
    for (let i = 0; i < 1_000; i++) expect(mrsc.admit('PutItem', put(`a${i}`, 'b')).refusal).toBeUndefined();
  });

  it('refuse about the rate, the same writes for the same seed', () => {
    const refusedOf = (seed: number) => {
      const mrsc = new MrscEmulation({ replicatedWriteConflictRate: 0.2, seed });
      return Array.from(
        { length: 5_000 },
        (_, i) => mrsc.admit('UpdateItem', update(`a${i}`, 'b')).refusal !== undefined,
      );
    };
    const first = refusedOf(42);
    expect(refusedOf(42)).toEqual(first);
    expect(refusedOf(43)).not.toEqual(first);
    const share = first.filter(Boolean).length / first.length;
    expect(share).toBeGreaterThan(0.18);
    expect(share).toBeLessThan(0.22);
  });

  it('refuse a rate outside 0..1', () => {
    for (const rate of [-0.1, 1.5, Number.NaN])
      expect(() => new MrscEmulation({ replicatedWriteConflictRate: rate })).toThrow(/not a rate/);
  });

  it('take LOCAL_REPLICATED_WRITE_CONFLICT_RATE as a number from 0 to 1, 0 when unset', () => {
    expect(replicatedWriteConflictRate({})).toBe(0);
    expect(replicatedWriteConflictRate({ LOCAL_REPLICATED_WRITE_CONFLICT_RATE: '' })).toBe(0);
    expect(replicatedWriteConflictRate({ LOCAL_REPLICATED_WRITE_CONFLICT_RATE: '0.05' })).toBe(0.05);
    expect(replicatedWriteConflictRate({ LOCAL_REPLICATED_WRITE_CONFLICT_RATE: '1' })).toBe(1);
    for (const bad of ['abc', '-1', '1.01', '5%']) {
      expect(() => replicatedWriteConflictRate({ LOCAL_REPLICATED_WRITE_CONFLICT_RATE: bad })).toThrow(
        `LOCAL_REPLICATED_WRITE_CONFLICT_RATE=${bad} is not a rate`,
      );
    }
  });

  it('draw reproducibly in [0, 1)', () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const draws = Array.from({ length: 1_000 }, () => a());
    expect(draws).toEqual(Array.from({ length: 1_000 }, () => b()));
    expect(draws.every((d) => d >= 0 && d < 1)).toBe(true);
  });
});

describe("replicated write conflicts from another Region's write in flight", () => {
  it('refuse a write of the same item from another Region until the first is done, and let other items through', () => {
    const inFlightWrites = new InFlightWrites();
    const mrsc = new MrscEmulation({ replicatedWriteConflictRate: 0, inFlightWrites });
    const first = mrsc.admit('PutItem', put('ORG#a', 'K#1'), 'us-east-1');
    expect(first.refusal).toBeUndefined();
    expect(inFlightWrites.size).toBe(1);

    expect(mrsc.admit('UpdateItem', update('ORG#a', 'K#1'), 'us-west-2').refusal).toEqual({
      error: 'ReplicatedWriteConflictException',
      cause: 'in-flight',
      region: 'us-west-2',
      message: REPLICATED_WRITE_CONFLICT_MESSAGE,
      conflict: { region: 'us-east-1', item: item('ORG#a', 'K#1') },
    });
    // Another item, another table, or the same Region: not a conflict.
    const other = mrsc.admit('PutItem', put('ORG#a', 'K#2'), 'us-west-2');
    expect(other.refusal).toBeUndefined();
    expect(mrsc.admit('PutItem', { ...put('ORG#a', 'K#1'), TableName: 'other' }, 'us-west-2').refusal).toBeUndefined();
    const sameRegion = mrsc.admit('DeleteItem', update('ORG#a', 'K#1'), 'us-east-1');
    expect(sameRegion.refusal).toBeUndefined();
    // A batch with one such item is refused as a whole.
    const batch = {
      RequestItems: {
        [table]: [
          { PutRequest: put('ORG#b', 'K#9') },
          { DeleteRequest: { Key: { PK: { S: 'ORG#a' }, SK: { S: 'K#1' } } } },
        ],
      },
    };
    expect(mrsc.admit('BatchWriteItem', batch, 'us-west-2').refusal?.cause).toBe('in-flight');

    first.done!();
    first.done!(); // ending twice counts once
    expect(mrsc.admit('PutItem', put('ORG#a', 'K#1'), 'us-west-2').refusal?.cause).toBe('in-flight'); // the same Region's second write is still in flight
    sameRegion.done!();
    expect(mrsc.admit('PutItem', put('ORG#a', 'K#1'), 'us-west-2').refusal).toBeUndefined();
  });

  it('is one tracker shared by the emulations of two Regions (one proxy each)', () => {
    const inFlightWrites = new InFlightWrites();
    const east = new MrscEmulation({ replicatedWriteConflictRate: 0, inFlightWrites, region: 'us-east-1' });
    const west = new MrscEmulation({ replicatedWriteConflictRate: 0, inFlightWrites, region: 'us-west-2' });
    // The proxy's own Region wins over the Region a request was signed for.
    const write = east.admit('PutItem', put('p', 's'), 'us-west-2');
    expect(west.admit('PutItem', put('p', 's'), 'us-east-1').refusal?.conflict?.region).toBe('us-east-1');
    write.done!();
    expect(inFlightWrites.size).toBe(0);
    const next = west.admit('PutItem', put('p', 's'));
    expect(next.refusal).toBeUndefined();
    next.done!();
    expect(inFlightWrites.size).toBe(0);
  });

  it('counts a refused write as never in flight', () => {
    const inFlightWrites = new InFlightWrites();
    const mrsc = new MrscEmulation({ replicatedWriteConflictRate: 1, inFlightWrites });
    expect(mrsc.admit('PutItem', put('p', 's'), 'us-east-1').refusal?.cause).toBe('injected');
    expect(inFlightWrites.size).toBe(0);
  });
});

describe('the items a write names', () => {
  it('keys each by its table and key attributes only', () => {
    expect(itemsWritten('PutItem', put('p', 's'), keys)).toEqual([item('p', 's')]);
    expect(itemsWritten('UpdateItem', update('p', 's'), keys)).toEqual([item('p', 's')]);
    expect(itemsWritten('DeleteItem', update('p', 's'), keys)).toEqual([item('p', 's')]);
    const batch = {
      RequestItems: {
        [table]: [{ PutRequest: put('p', '1') }, { DeleteRequest: { Key: update('p', '2').Key } }],
        t2: [{ PutRequest: put('p', '1') }],
      },
    };
    expect(itemsWritten('BatchWriteItem', batch, keys)).toEqual([
      item('p', '1'),
      item('p', '2'),
      { ...item('p', '1'), table: 't2' },
    ]);
    expect(itemsWritten('GetItem', update('p', 's'), keys)).toEqual([]);
  });
});

describe('the answer to a refused call', () => {
  it("is DynamoDB's error shape: HTTP 400, __type in DynamoDB's namespace, a message, a request id and the CRC32 of the body", () => {
    const answer = mrscErrorResponse({
      error: 'ReplicatedWriteConflictException',
      message: REPLICATED_WRITE_CONFLICT_MESSAGE,
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({
      __type: 'com.amazonaws.dynamodb.v20120810#ReplicatedWriteConflictException',
      message: REPLICATED_WRITE_CONFLICT_MESSAGE,
    });
    expect(answer.headers).toMatchObject({
      'Content-Type': 'application/x-amz-json-1.0',
      'Content-Length': String(Buffer.byteLength(answer.body)),
      'x-amz-crc32': String(crc32(answer.body)),
    });
    expect(answer.headers['x-amzn-RequestId']).toMatch(/^[0-9A-F]{32}$/);
    expect(JSON.parse(mrscErrorResponse({ error: 'ValidationException', message: 'm' }).body).__type).toBe(
      'com.amazonaws.dynamodb.v20120810#ValidationException',
    );
  });
});
