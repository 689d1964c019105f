import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createSocket, type Socket } from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '#shared/store/client';
import { closeInvocationTrace, openInvocationTrace } from '#shared/observability/tracer';
import { eventually } from '../support/processes';

/**
 * The project's tracer as Lambda runs it, over DynamoDB Local: what reaches the X-Ray daemon's
 * UDP port for a sampled invocation (one datagram: the daemon header line, then the invocation's
 * subsegment with its DynamoDB calls), and nothing for an unsampled one or without a daemon.
 */
let daemon: Socket;
const datagrams: string[] = [];
const saved = { address: process.env.AWS_XRAY_DAEMON_ADDRESS, header: process.env._X_AMZN_TRACE_ID };

beforeAll(async () => {
  daemon = createSocket('udp4');
  daemon.on('message', (message) => datagrams.push(message.toString('utf8')));
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise<void>((resolve) => daemon.close(() => resolve())));
afterEach(() => {
  datagrams.length = 0;
  process.env.AWS_XRAY_DAEMON_ADDRESS = saved.address;
  process.env._X_AMZN_TRACE_ID = saved.header;
});

const root = () => `1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`;
const parent = () => randomBytes(8).toString('hex');

/** One invocation as Lambda would start it: its trace header, then the handler's work. */
async function invocation(header: string, work: () => Promise<void>): Promise<void> {
  process.env.AWS_XRAY_DAEMON_ADDRESS = `127.0.0.1:${daemon.address().port}`;
  process.env._X_AMZN_TRACE_ID = header;
  const trace = openInvocationTrace(
    'reserved-tag-keys/create',
    'POST /organizations/{organization_name}/reserved-tag-keys',
  );
  let status = 201;
  try {
    await work();
  } catch {
    status = 409;
  } finally {
    closeInvocationTrace(trace, String(status), status);
  }
}

const secretValue = `secret-${randomBytes(6).toString('hex')}`;
const item = () => ({ PK: `ORG#trace-org-${randomBytes(4).toString('hex')}`, SK: 'TRACE', body: secretValue });

describe('the tracer (shared/observability/tracer.ts) over UDP', () => {
  it("sends one datagram per sampled invocation: the daemon header, then its subsegment under Lambda's, its DynamoDB calls nested", async () => {
    const [traceId, lambdaSegment] = [root(), parent()];
    const written = item();
    await invocation(`Root=${traceId};Parent=${lambdaSegment};Sampled=1;Lineage=a87bd80c:0`, async () => {
      await documentClient.send(new PutCommand({ TableName: tableName(), Item: written }));
      await documentClient.send(
        new GetCommand({ TableName: tableName(), Key: { PK: written.PK, SK: written.SK }, ConsistentRead: true }),
      );
    });
    await eventually(() => datagrams.length === 1, 2_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(datagrams).toHaveLength(1);

    const [header, body] = datagrams[0]!.split('\n') as [string, string];
    expect(JSON.parse(header)).toEqual({ format: 'json', version: 1 });
    const document = JSON.parse(body);
    expect(document).toEqual({
      type: 'subsegment',
      name: '## reserved-tag-keys/create',
      id: expect.stringMatching(/^[0-9a-f]{16}$/),
      trace_id: traceId,
      parent_id: lambdaSegment,
      start_time: expect.any(Number),
      end_time: expect.any(Number),
      annotations: { route: 'POST /organizations/{organization_name}/reserved-tag-keys', outcome: '201' },
      subsegments: [expect.anything(), expect.anything()],
    });
    const [put, get] = document.subsegments;
    for (const [call, operation] of [
      [put, 'PutItem'],
      [get, 'GetItem'],
    ] as const) {
      expect(call).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{16}$/),
        name: 'DynamoDB',
        namespace: 'aws',
        start_time: expect.any(Number),
        end_time: expect.any(Number),
        http: { response: { status: 200 } },
        aws: {
          operation,
          region: expect.any(String),
          table_name: tableName(),
          request_id: expect.any(String),
          retries: 0,
        },
      });
      expect(call.end_time).toBeGreaterThanOrEqual(call.start_time);
      expect(call.start_time).toBeGreaterThanOrEqual(document.start_time);
      expect(call.end_time).toBeLessThanOrEqual(document.end_time);
    }
    expect(Math.abs(document.start_time - Date.now() / 1000)).toBeLessThan(60);
    // Nothing of the items: no value, no key, no organization.
    expect(datagrams[0]).not.toContain(secretValue);
    expect(datagrams[0]).not.toContain(written.PK);
    expect(datagrams[0]).not.toContain('trace-org');
  });

  it("marks a refused call with the error's name only, never its message or the item", async () => {
    const written = item();
    await documentClient.send(new PutCommand({ TableName: tableName(), Item: written }));
    await invocation(`Root=${root()};Parent=${parent()};Sampled=1`, async () => {
      await documentClient.send(
        new PutCommand({
          TableName: tableName(),
          Item: written,
          ConditionExpression: 'attribute_not_exists(PK)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    });
    await eventually(() => datagrams.length === 1, 2_000);
    const document = JSON.parse(datagrams[0]!.split('\n')[1]!);
    expect(document).toMatchObject({ error: true, annotations: { outcome: '409' } }); // as answered: an error, not a fault
    expect(document.fault).toBeUndefined();
    const call = document.subsegments[0];
    expect(call).toMatchObject({
      name: 'DynamoDB',
      error: true,
      http: { response: { status: 400 } },
      cause: { exceptions: [{ id: call.id, type: 'ConditionalCheckFailedException', remote: true }] },
      aws: { operation: 'PutItem', table_name: tableName() },
    });
    expect(call.fault).toBeUndefined();
    expect(datagrams[0]).not.toContain(secretValue);
    expect(datagrams[0]).not.toMatch(/conditional request failed/i);
  });

  it('sends nothing when Lambda did not sample the invocation, or without a daemon address', async () => {
    await invocation(`Root=${root()};Parent=${parent()};Sampled=0`, async () => {
      await documentClient.send(new PutCommand({ TableName: tableName(), Item: item() }));
    });
    process.env.AWS_XRAY_DAEMON_ADDRESS = '';
    process.env._X_AMZN_TRACE_ID = `Root=${root()};Parent=${parent()};Sampled=1`;
    const trace = openInvocationTrace('ping', 'GET /ping');
    expect(trace).toBeUndefined();
    closeInvocationTrace(trace, '200', 200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(datagrams).toEqual([]);
  });
});
