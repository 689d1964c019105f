import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, request as httpRequest, type Server } from 'node:http';
import {
  BatchWriteItemCommand,
  DeleteItemCommand,
  DynamoDBClient,
  DynamoDBServiceException,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ReplicatedWriteConflictException,
  TransactGetItemsCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { LOCAL_REGION, localTableArn, Stack } from '#infra/local/aws/cloudformation';
import { IamPolicies, startDynamoDbProxy, type DynamoDbCall, type DynamoDbProxy } from '#infra/local/aws/iam';
import { InFlightWrites, REPLICATED_WRITE_CONFLICT_MESSAGE, type MrscOptions } from '#infra/local/aws/mrsc';
import { fixtureAssembly } from '../support/fixture-assembly';

/**
 * The IAM proxy plays a DynamoDB global table in multi-Region strong consistency (MRSC): what such
 * a replica refuses is refused here, before DynamoDB Local sees it, and the AWS SDK v3 reads each
 * refusal as the error DynamoDB would send. Every proxy below forwards to a relay in front of this
 * run's DynamoDB Local, which counts what reached it and can hold a marked write in flight.
 */
const tableName = process.env.TABLE_NAME!;
const dynamoDbLocal = process.env.AWS_ENDPOINT_URL_DYNAMODB!;
const HOLD = 'hold-me-in-flight';

let assembly: ReturnType<typeof fixtureAssembly>;
let policies: IamPolicies;
let relay: Server;
let relayEndpoint: string;
/** The operations that reached DynamoDB Local through the relay. */
const reached: string[] = [];
/** Held requests wait for this. */
let releaseHeld: () => void = () => undefined;
let held: Promise<void> = Promise.resolve();
let holding = 0;
const direct = new DynamoDBClient({
  endpoint: dynamoDbLocal,
  region: LOCAL_REGION,
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  maxAttempts: 1,
});
const proxies: DynamoDbProxy[] = [];

beforeAll(async () => {
  const code = 'export const handler = async () => ({});';
  assembly = fixtureAssembly({
    functions: {
      Writer: { code, statements: [{ Effect: 'Allow', Action: 'dynamodb:*', Resource: localTableArn(tableName) }] },
      Reader: {
        code,
        statements: [
          { Effect: 'Allow', Action: ['dynamodb:GetItem', 'dynamodb:Query'], Resource: localTableArn(tableName) },
        ],
      },
    },
    methods: [],
  });
  policies = new IamPolicies(new Stack(assembly.directory, assembly.stackName, { ref: { Table: tableName } }));
  const target = new URL(dynamoDbLocal);
  relay = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    reached.push(String(req.headers['x-amz-target']).split('.')[1]!);
    if (body.includes(HOLD)) {
      holding++;
      await held;
      holding--;
    }
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.end(body);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  relayEndpoint = `http://127.0.0.1:${(relay.address() as { port: number }).port}`;
});

afterAll(async () => {
  releaseHeld();
  await Promise.all(proxies.map((p) => p.close()));
  await new Promise((resolve) => {
    relay.closeAllConnections();
    relay.close(resolve);
  });
  direct.destroy();
  assembly.remove();
});

/** A proxy with these MRSC options, and the calls it records. */
async function proxyWith(mrsc: MrscOptions): Promise<{ proxy: DynamoDbProxy; calls: DynamoDbCall[] }> {
  const calls: DynamoDbCall[] = [];
  const proxy = await startDynamoDbProxy({
    policies,
    target: relayEndpoint,
    tableArn: localTableArn,
    partitionKeyOf: () => 'PK',
    onCall: (call) => calls.push(call),
    mrsc,
  });
  proxies.push(proxy);
  return { proxy, calls };
}

/** A client signing with the credentials the proxy gives a role (`WriterRole`, `ReaderRole`), for a Region. */
function clientOf(
  proxy: DynamoDbProxy,
  role: string,
  options: { region?: string; maxAttempts?: number } = {},
): DynamoDBClient {
  const credentials = proxy.credentialsFor(role);
  return new DynamoDBClient({
    endpoint: proxy.endpoint,
    region: options.region ?? LOCAL_REGION,
    maxAttempts: options.maxAttempts ?? 1,
    credentials: {
      accessKeyId: credentials.AWS_ACCESS_KEY_ID!,
      secretAccessKey: credentials.AWS_SECRET_ACCESS_KEY!,
      sessionToken: credentials.AWS_SESSION_TOKEN!,
    },
  });
}

let counter = 0;
/** A fresh partition for each test: `PK` values no other test writes. */
const partition = (name: string) => `MRSC#${name}#${++counter}`;
const key = (pk: string, sk = 'ITEM') => ({ PK: { S: pk }, SK: { S: sk } });
const putItem = (pk: string, sk = 'ITEM', extra: Record<string, { S: string }> = {}) =>
  new PutItemCommand({ TableName: tableName, Item: { ...key(pk, sk), ...extra } });
const stored = async (pk: string, sk = 'ITEM') =>
  (await direct.send(new GetItemCommand({ TableName: tableName, Key: key(pk, sk), ConsistentRead: true }))).Item;
const reachedSince = (mark: number, operation: string) => reached.slice(mark).filter((o) => o === operation).length;

describe('transactions, refused as an MRSC replica refuses them', () => {
  it('answers TransactWriteItems and TransactGetItems with a ValidationException the SDK names, and writes nothing', async () => {
    const { proxy, calls } = await proxyWith({ refuseTransactions: true, replicatedWriteConflictRate: 0 });
    const client = clientOf(proxy, 'WriterRole');
    const pk = partition('transact');
    const mark = reached.length;

    const write = client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName: tableName, Item: key(pk, 'A') } },
          { Put: { TableName: tableName, Item: key(pk, 'B') } },
        ],
      }),
    );
    await expect(write).rejects.toBeInstanceOf(DynamoDBServiceException);
    await expect(write).rejects.toMatchObject({
      name: 'ValidationException',
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
      message:
        'TransactWriteItems is not supported: transactions are not supported on multi-Region strongly consistent (MRSC) global tables',
    });
    await expect(
      client.send(
        new TransactGetItemsCommand({ TransactItems: [{ Get: { TableName: tableName, Key: key(pk, 'A') } }] }),
      ),
    ).rejects.toMatchObject({
      name: 'ValidationException',
      message: expect.stringMatching(/^TransactGetItems is not supported: /),
    });

    expect(reachedSince(mark, 'TransactWriteItems') + reachedSince(mark, 'TransactGetItems')).toBe(0);
    expect(await stored(pk, 'A')).toBeUndefined();
    expect(await stored(pk, 'B')).toBeUndefined();
    expect(calls.map((c) => [c.operation, c.allowed, c.mrsc?.error, c.mrsc?.cause])).toEqual([
      ['TransactWriteItems', true, 'ValidationException', 'transaction'],
      ['TransactGetItems', true, 'ValidationException', 'transaction'],
    ]);
    // The ordinary calls are untouched.
    await client.send(putItem(pk, 'A'));
    expect(await stored(pk, 'A')).toBeDefined();
  });

  it('forwards them when refuseTransactions is off', async () => {
    const { proxy, calls } = await proxyWith({ refuseTransactions: false, replicatedWriteConflictRate: 0 });
    const pk = partition('transact-off');
    await clientOf(proxy, 'WriterRole').send(
      new TransactWriteItemsCommand({ TransactItems: [{ Put: { TableName: tableName, Item: key(pk) } }] }),
    );
    expect(await stored(pk)).toBeDefined();
    expect(calls.filter((c) => c.mrsc)).toEqual([]);
  });
});

describe('replicated write conflicts at a rate', () => {
  it('at rate 1 refuses every write with ReplicatedWriteConflictException and applies none, while reads pass', async () => {
    const pk = partition('rate-1');
    await direct.send(new PutItemCommand({ TableName: tableName, Item: { ...key(pk), body: { S: 'before' } } }));
    const { proxy, calls } = await proxyWith({ refuseTransactions: true, replicatedWriteConflictRate: 1 });
    const client = clientOf(proxy, 'WriterRole');
    const mark = reached.length;

    const writes = [
      putItem(pk, 'NEW'),
      putItem(pk, 'ITEM', { body: { S: 'replaced' } }),
      new UpdateItemCommand({
        TableName: tableName,
        Key: key(pk),
        UpdateExpression: 'SET body = :b',
        ExpressionAttributeValues: { ':b': { S: 'updated' } },
      }),
      new DeleteItemCommand({ TableName: tableName, Key: key(pk) }),
      new BatchWriteItemCommand({
        RequestItems: {
          [tableName]: [{ PutRequest: { Item: key(pk, 'BATCH') } }, { DeleteRequest: { Key: key(pk) } }],
        },
      }),
    ];
    for (const write of writes) {
      const sent = client.send(write as PutItemCommand);
      await expect(sent).rejects.toBeInstanceOf(ReplicatedWriteConflictException);
      await expect(sent).rejects.toMatchObject({
        name: 'ReplicatedWriteConflictException',
        message: REPLICATED_WRITE_CONFLICT_MESSAGE,
        $metadata: { httpStatusCode: 400 },
      });
    }
    for (const operation of ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem'])
      expect(reachedSince(mark, operation)).toBe(0);

    // Reads pass, and see nothing written.
    expect(
      (await client.send(new GetItemCommand({ TableName: tableName, Key: key(pk), ConsistentRead: true }))).Item?.body,
    ).toEqual({ S: 'before' });
    const query = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': { S: pk } },
      }),
    );
    expect(query.Items?.map((i) => i.SK?.S)).toEqual(['ITEM']);
    expect(calls.map((c) => [c.operation, c.mrsc?.cause])).toEqual([
      ['PutItem', 'injected'],
      ['PutItem', 'injected'],
      ['UpdateItem', 'injected'],
      ['DeleteItem', 'injected'],
      ['BatchWriteItem', 'injected'],
      ['GetItem', undefined],
      ['Query', undefined],
    ]);
  });

  it('is retried by the SDK (the error is retryable), each attempt refused and recorded', async () => {
    const { proxy, calls } = await proxyWith({ replicatedWriteConflictRate: 1 });
    await expect(
      clientOf(proxy, 'WriterRole', { maxAttempts: 3 }).send(putItem(partition('retried'))),
    ).rejects.toMatchObject({ name: 'ReplicatedWriteConflictException', $metadata: { attempts: 3 } });
    expect(calls.filter((c) => c.mrsc?.error === 'ReplicatedWriteConflictException')).toHaveLength(3);
  });

  it("answers what IAM denies with IAM's AccessDeniedException, before any conflict", async () => {
    const { proxy, calls } = await proxyWith({ replicatedWriteConflictRate: 1 });
    await expect(clientOf(proxy, 'ReaderRole').send(putItem(partition('denied')))).rejects.toMatchObject({
      name: 'AccessDeniedException',
    });
    expect(calls.map((c) => [c.allowed, c.mrsc])).toEqual([[false, undefined]]);
  });

  it('takes its rate from LOCAL_REPLICATED_WRITE_CONFLICT_RATE when its options give none (what npm start sets)', async () => {
    const before = process.env.LOCAL_REPLICATED_WRITE_CONFLICT_RATE;
    process.env.LOCAL_REPLICATED_WRITE_CONFLICT_RATE = '1';
    try {
      const { proxy, calls } = await proxyWith({});
      expect(proxy.mrsc.replicatedWriteConflictRate).toBe(1);
      await expect(clientOf(proxy, 'WriterRole').send(putItem(partition('from-env')))).rejects.toBeInstanceOf(
        ReplicatedWriteConflictException,
      );
      expect(calls.map((c) => c.mrsc?.cause)).toEqual(['injected']);
      expect((await proxyWith({ replicatedWriteConflictRate: 0 })).proxy.mrsc.replicatedWriteConflictRate).toBe(0); // the option wins
    } finally {
      if (before === undefined) delete process.env.LOCAL_REPLICATED_WRITE_CONFLICT_RATE;
      else process.env.LOCAL_REPLICATED_WRITE_CONFLICT_RATE = before;
    }
  });

  it('at rate 0 injects nothing', async () => {
    const { proxy, calls } = await proxyWith({ refuseTransactions: true, replicatedWriteConflictRate: 0 });
    const client = clientOf(proxy, 'WriterRole');
    const pk = partition('rate-0');
    for (let i = 0; i < 20; i++) await client.send(putItem(pk, `I#${i}`));
    await client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: key(pk, 'I#0'),
        UpdateExpression: 'SET body = :b',
        ExpressionAttributeValues: { ':b': { S: 'u' } },
      }),
    );
    await client.send(new DeleteItemCommand({ TableName: tableName, Key: key(pk, 'I#1') }));
    await client.send(
      new BatchWriteItemCommand({ RequestItems: { [tableName]: [{ PutRequest: { Item: key(pk, 'B') } }] } }),
    );
    expect(calls).toHaveLength(23);
    expect(calls.filter((c) => c.mrsc)).toEqual([]);
    expect((await stored(pk, 'I#0'))?.body).toEqual({ S: 'u' });
    expect(await stored(pk, 'I#1')).toBeUndefined();
    expect(await stored(pk, 'B')).toBeDefined();
  });
});

describe("replicated write conflicts from another Region's write of the same item in flight", () => {
  /** Holds the writes marked HOLD at the relay (after the proxy admitted them) until `release()`. */
  function holdMarkedWrites(): { release(): void; until(count: number): Promise<void> } {
    held = new Promise<void>((resolve) => {
      releaseHeld = resolve;
    });
    return {
      release: () => releaseHeld(),
      until: async (count) => {
        while (holding < count) await new Promise((resolve) => setTimeout(resolve, 5));
      },
    };
  }

  it("refuses another Region's concurrent write of the same item, and lets a write of another item through", async () => {
    const inFlightWrites = new InFlightWrites();
    const { proxy, calls } = await proxyWith({
      refuseTransactions: true,
      replicatedWriteConflictRate: 0,
      inFlightWrites,
    });
    // One proxy, callers labelled by the Region they sign for.
    const east = clientOf(proxy, 'WriterRole', { region: 'us-east-1' });
    const west = clientOf(proxy, 'WriterRole', { region: 'us-west-2' });
    const pk = partition('in-flight');
    const gate = holdMarkedWrites();

    const first = east.send(putItem(pk, 'ITEM', { body: { S: HOLD } }));
    await gate.until(1);
    const conflicting = west.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: key(pk),
        UpdateExpression: 'SET body = :b',
        ExpressionAttributeValues: { ':b': { S: 'west' } },
      }),
    );
    await expect(conflicting).rejects.toBeInstanceOf(ReplicatedWriteConflictException);
    await west.send(putItem(pk, 'OTHER', { body: { S: 'west' } })); // another item: through, while the first is held
    expect((await stored(pk, 'OTHER'))?.body).toEqual({ S: 'west' });

    gate.release();
    await first;
    expect((await stored(pk))?.body).toEqual({ S: HOLD }); // the refused update was not applied
    expect(inFlightWrites.size).toBe(0);
    // Retried once nothing is in flight, it succeeds.
    await west.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: key(pk),
        UpdateExpression: 'SET body = :b',
        ExpressionAttributeValues: { ':b': { S: 'west' } },
      }),
    );
    expect((await stored(pk))?.body).toEqual({ S: 'west' });

    const refused = calls.filter((c) => c.mrsc);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.mrsc).toMatchObject({
      error: 'ReplicatedWriteConflictException',
      cause: 'in-flight',
      region: 'us-west-2',
      conflict: { region: 'us-east-1', item: { table: tableName, key: JSON.stringify(key(pk)) } },
    });
  });

  it('lets the same Region write the item again while its first write is in flight', async () => {
    const { proxy, calls } = await proxyWith({ replicatedWriteConflictRate: 0, inFlightWrites: new InFlightWrites() });
    const east = clientOf(proxy, 'WriterRole', { region: 'us-east-1' });
    const pk = partition('same-region');
    const gate = holdMarkedWrites();
    const first = east.send(putItem(pk, 'ITEM', { body: { S: HOLD } }));
    await gate.until(1);
    await east.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: key(pk),
        UpdateExpression: 'SET n = :n',
        ExpressionAttributeValues: { ':n': { S: '1' } },
      }),
    );
    gate.release();
    await first;
    expect(calls.filter((c) => c.mrsc)).toEqual([]);
  });

  it("works across two Regions' proxies that share one tracker", async () => {
    const inFlightWrites = new InFlightWrites();
    const east = await proxyWith({ replicatedWriteConflictRate: 0, inFlightWrites, region: 'us-east-1' });
    const west = await proxyWith({ replicatedWriteConflictRate: 0, inFlightWrites, region: 'us-east-2' });
    const pk = partition('two-proxies');
    const gate = holdMarkedWrites();
    const first = clientOf(east.proxy, 'WriterRole').send(putItem(pk, 'ITEM', { body: { S: HOLD } }));
    await gate.until(1);
    await expect(
      clientOf(west.proxy, 'WriterRole').send(new DeleteItemCommand({ TableName: tableName, Key: key(pk) })),
    ).rejects.toMatchObject({ name: 'ReplicatedWriteConflictException' });
    expect(west.calls.map((c) => c.mrsc?.conflict?.region)).toEqual(['us-east-1']);
    gate.release();
    await first;
    expect(await stored(pk)).toBeDefined();
    expect(inFlightWrites.size).toBe(0);
  });
});
