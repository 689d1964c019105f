import { afterAll, describe, expect, it } from '@jest/globals';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  PutItemCommand,
  QueryCommand,
  UpdateTableCommand,
} from '@aws-sdk/client-dynamodb';
import { randomAlphanumeric } from '#shared/ids';
import { EXPIRY_INDEX, expiring } from '#shared/store/expiry';
import { createTableInput } from '#shared/store/table';
import { ensureTable } from '#infra/local/aws/dynamodb-local';

/**
 * `npm start` over a data folder from before the Expiry index: ensureTable adds the index to the
 * table it finds, keeping its items, so an old DATA_DIR keeps working. Against the run's DynamoDB
 * Local (test/support/global-setup.ts), on tables of this file's own.
 */
const endpoint = process.env.TEST_DYNAMODB_ENDPOINT!;
const client = new DynamoDBClient({
  endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
const made: string[] = [];
afterAll(async () => {
  for (const TableName of made) await client.send(new DeleteTableCommand({ TableName })).catch(() => undefined);
  client.destroy();
});

/** The table as createTableInput made it before the index: the same keys, no index, two attributes. */
async function tableFromBefore(): Promise<string> {
  const name = `old-${randomAlphanumeric(12)}`;
  made.push(name);
  const { GlobalSecondaryIndexes: _, AttributeDefinitions, ...rest } = createTableInput(name);
  await client.send(
    new CreateTableCommand({
      ...rest,
      AttributeDefinitions: AttributeDefinitions!.filter((a) => a.AttributeName === 'PK' || a.AttributeName === 'SK'),
    }),
  );
  return name;
}

const describeTable = async (name: string) => (await client.send(new DescribeTableCommand({ TableName: name }))).Table!;

describe('ensureTable', () => {
  it('creates a new table with the Expiry index', async () => {
    const name = `new-${randomAlphanumeric(12)}`;
    made.push(name);
    await ensureTable(endpoint, name);
    const table = await describeTable(name);
    expect(table.GlobalSecondaryIndexes?.map((index) => index.IndexName)).toEqual([EXPIRY_INDEX]);
  });

  it('adds the Expiry index to a table from before it, keeping its items, which the index then lists', async () => {
    const name = await tableFromBefore();
    expect((await describeTable(name)).GlobalSecondaryIndexes).toBeUndefined();
    const expiry = expiring('RECEIPT#r-1', 1_000);
    await client.send(
      new PutItemCommand({
        TableName: name,
        Item: {
          PK: { S: 'RECEIPT#r-1' },
          SK: { S: 'RECEIPT' },
          sweepShard: { S: expiry.sweepShard },
          sweepAt: { N: String(expiry.sweepAt) },
        },
      }),
    );
    await client.send(new PutItemCommand({ TableName: name, Item: { PK: { S: 'ORG#acme' }, SK: { S: 'TAGKEYS' } } }));

    await ensureTable(endpoint, name);

    const table = await describeTable(name);
    expect(table.GlobalSecondaryIndexes).toEqual([
      expect.objectContaining({
        IndexName: EXPIRY_INDEX,
        IndexStatus: 'ACTIVE',
        KeySchema: createTableInput(name).GlobalSecondaryIndexes![0]!.KeySchema,
        Projection: { ProjectionType: 'KEYS_ONLY' },
      }),
    ]);
    expect(table.ItemCount).toBe(2);
    const listed = await client.send(
      new QueryCommand({
        TableName: name,
        IndexName: EXPIRY_INDEX,
        KeyConditionExpression: 'sweepShard = :shard AND sweepAt < :now',
        ExpressionAttributeValues: { ':shard': { S: expiry.sweepShard }, ':now': { N: '2000' } },
      }),
    );
    expect(listed.Items).toEqual([
      { PK: { S: 'RECEIPT#r-1' }, SK: { S: 'RECEIPT' }, sweepShard: { S: expiry.sweepShard }, sweepAt: { N: '1000' } },
    ]);
  });

  it('makes the index again when one of its name has other keys (a data folder from an earlier shape of it)', async () => {
    const name = await tableFromBefore();
    // The Expiry index as it first was: its sort key named expiresAt, which tokens also use (as an ISO time).
    await client.send(
      new UpdateTableCommand({
        TableName: name,
        AttributeDefinitions: [
          { AttributeName: 'sweepShard', AttributeType: 'S' },
          { AttributeName: 'expiresAt', AttributeType: 'N' },
        ],
        GlobalSecondaryIndexUpdates: [
          {
            Create: {
              IndexName: EXPIRY_INDEX,
              KeySchema: [
                { AttributeName: 'sweepShard', KeyType: 'HASH' },
                { AttributeName: 'expiresAt', KeyType: 'RANGE' },
              ],
              Projection: { ProjectionType: 'KEYS_ONLY' },
            },
          },
        ],
      }),
    );
    await ensureTable(endpoint, name);
    const [index] = (await describeTable(name)).GlobalSecondaryIndexes!;
    expect(index).toMatchObject({
      IndexName: EXPIRY_INDEX,
      KeySchema: createTableInput(name).GlobalSecondaryIndexes![0]!.KeySchema,
    });
    // A token's ISO expiresAt is storable again.
    await client.send(
      new PutItemCommand({
        TableName: name,
        Item: { PK: { S: 'TOKENS' }, SK: { S: 'TOKEN#at-1' }, expiresAt: { S: '2030-01-01T00:00:00.000Z' } },
      }),
    );
  });

  it('leaves a table that has the index as it is', async () => {
    const name = await tableFromBefore();
    await ensureTable(endpoint, name);
    const before = await describeTable(name);
    await ensureTable(endpoint, name);
    expect((await describeTable(name)).GlobalSecondaryIndexes).toEqual(before.GlobalSecondaryIndexes);
  });
});
