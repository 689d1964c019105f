import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { startLocalStack, type LocalStack } from '#infra/local/local-stack';
import type { ScheduledRun } from '#infra/local/aws/eventbridge';
import { expiring, nowSeconds } from '#shared/store/expiry';
import { randomAlphanumeric } from '#shared/ids';
import { eventually } from '../support/processes';
import { expectWith } from '../support/expect-with';

/**
 * The sweeper as the local stack runs it: the template's EventBridge rule (run every second here
 * instead of every 15 minutes) invokes the synthesized sweeper bundle through the local Lambda,
 * with the credentials of its role, so that the IAM proxy decides each of its DynamoDB calls by the
 * role's policy in the template. Against this file's table.
 */
const tableName = process.env.TABLE_NAME!;
const client = new DynamoDBClient({
  endpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB,
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
let stack: LocalStack;
const runs: ScheduledRun[] = [];
const logs: string[] = [];

async function put(PK: string, expiresIn: number | undefined): Promise<{ PK: { S: string }; SK: { S: string } }> {
  const key = { PK: { S: PK }, SK: { S: 'ITEM' } };
  const expiry = expiresIn === undefined ? undefined : expiring(PK, nowSeconds() + expiresIn);
  await client.send(
    new PutItemCommand({
      TableName: tableName,
      Item: {
        ...key,
        ...(expiry ? { sweepShard: { S: expiry.sweepShard }, sweepAt: { N: String(expiry.sweepAt) } } : {}),
      },
    }),
  );
  return key;
}
const exists = async (key: Record<string, { S: string }>) =>
  (await client.send(new GetItemCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item !== undefined;

/** The role of the template's sweeper function (its logical id starts with SweeperFunction). */
const sweeperRole = () => {
  const [, fn] = [...stack.lambda.functions].find(([id]) => id.startsWith('SweeperFunction'))!;
  return fn.roleLogicalId;
};

let expired: Array<Record<string, { S: string }>>;
let live: Array<Record<string, { S: string }>>;
beforeAll(async () => {
  // In place before the stack starts: its first run, a second after the start, finds them.
  expired = [
    await put(`RECEIPT#${randomAlphanumeric(12)}`, -60), // a create's receipt
    await put(`ORG#org-${randomAlphanumeric(6)}`, -1), // a tombstone in an organization's partition
    await put(`RTK#rtk-${randomAlphanumeric(16)}`, -3_600), // a tombstone in a reserved tag key's own
  ];
  live = [
    await put(`RECEIPT#${randomAlphanumeric(12)}`, 3_600),
    await put(`ORG#org-${randomAlphanumeric(6)}`, undefined),
  ];
  stack = await startLocalStack({
    dynamoDbEndpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB!,
    tableName,
    scheduleEveryMs: 1_000,
    onScheduledRun: (run) => {
      runs.push(run);
    },
    log: (name, line) => {
      logs.push(`[${name}] ${line}`);
    },
  });
}, 120_000);
afterAll(async () => {
  await stack?.close();
  client.destroy();
});

describe('the local stack’s schedule', () => {
  it('reads the sweeper’s rule from the template', () => {
    expect(stack.schedules.rules).toEqual([
      expect.objectContaining({
        expression: 'rate(15 minutes)',
        periodMs: 15 * 60_000,
        enabled: true,
        arn: expect.stringMatching(/^arn:aws:events:us-east-1:000000000000:rule\/SweeperSchedule/),
        targets: [
          expect.objectContaining({ function: expect.stringMatching(/^SweeperFunction/), maximumRetryAttempts: 0 }),
        ],
      }),
    ]);
  });

  it('invokes the sweeper through the local Lambda, whose role’s calls IAM allows, and the expired items are gone', async () => {
    // Runs a second apart may overlap (a cold start takes longer): together they delete each item once.
    const deleted = () => runs.reduce((n, run) => n + ((run.result as any)?.total?.deleted ?? 0), 0);
    expect(await eventually(() => deleted() >= 3, 30_000)).toBe(true);
    for (const key of expired) expectWith(await exists(key), JSON.stringify(key)).toBe(false);
    for (const key of live) expectWith(await exists(key), JSON.stringify(key)).toBe(true);
    expect(deleted()).toBe(3);

    const run = runs.find((r) => r.ok && (r.result as any).total.deleted > 0)!;
    expect(run).toMatchObject({
      expression: 'rate(15 minutes)',
      function: expect.stringMatching(/^SweeperFunction/),
      attempt: 1,
    });
    // The bundle ran in the local Lambda (unqualified: EventBridge names the function, not an alias).
    expect(stack.lambda.invocations).toContainEqual({
      function: run.function,
      qualifier: '$LATEST',
      version: '$LATEST',
    });
    // Every DynamoDB call the sweeper made was signed with its role's credentials and allowed by its policy.
    const calls = stack.dynamoDbCalls.filter((call) => call.role === sweeperRole());
    expect(new Set(calls.map((call) => call.operation))).toEqual(new Set(['Query', 'DeleteItem']));
    expect(calls.every((call) => call.allowed)).toBe(true);
    const queries = calls.filter((call) => call.operation === 'Query').flatMap((call) => call.requests);
    expect(queries.every((request) => request.resource.endsWith(`:table/${tableName}/index/Expiry`))).toBe(true);
    // One log line per run, with its counts (a line may reach the log just after the run's result).
    const lines = () =>
      logs
        .filter((l) => l.startsWith(`[${run.function}] `) && l.includes('"message":"swept expired items"'))
        .map((l) => JSON.parse(l.slice(l.indexOf(' ') + 1)));
    expect(await eventually(() => lines().reduce((n, l) => n + l.total.deleted, 0) === 3, 5_000)).toBe(true);
    expect(lines().every((l) => l.queries === 16)).toBe(true);
  }, 60_000);

  it('is refused by IAM an expired item in a partition it may not delete from, and the run fails', async () => {
    const before = runs.length;
    const elsewhere = await put(`RUN#run-${randomAlphanumeric(16)}`, -60);
    expect(await eventually(() => runs.slice(before).some((run) => !run.ok), 30_000)).toBe(true);
    const failed = runs.slice(before).find((run) => !run.ok)!;
    expect(failed.error?.errorMessage).toMatch(/^sweep stopped: AccessDeniedException: .*dynamodb:DeleteItem/);
    expect(await exists(elsewhere)).toBe(true);
    expect(
      stack.dynamoDbCalls.some(
        (call) => call.role === sweeperRole() && call.operation === 'DeleteItem' && !call.allowed,
      ),
    ).toBe(true);
  }, 60_000);
});
