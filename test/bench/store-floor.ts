import * as ddb from '@aws-sdk/client-dynamodb';
import { cpus, loadavg } from 'node:os';
import { ensureTable, startDynamoDbLocal, useLocalEndpoint } from '#infra/local/aws/dynamodb-local';
import { percentile } from './stats';

/**
 * `npx tsx test/bench/store-floor.ts`: what a create's DynamoDB calls cost against DynamoDB Local
 * through the bare low-level client, with no handler around them, beside the one transaction of
 * the same items that the store used before issue 35 (which a global table in multi-Region strong
 * consistency refuses). It is the floor under `npm run bench`'s create p50s on this store: each
 * shape is the calls of docs/design.md's round-trip budgets, sent as the store sends them (side by
 * side where it sends them together), on items of about 250 bytes. Rounds alternate the shapes, so
 * a busy machine slows them alike: read the ratios.
 */
const ROUNDS = 8;
const PER_ROUND = 75;
const TABLE = 'floor';

const dynamo = await startDynamoDbLocal();
useLocalEndpoint(dynamo.endpoint);
await ensureTable(dynamo.endpoint, TABLE);
const client = new ddb.DynamoDBClient({});

let sequence = 0;
const key = (PK: string, SK = `item-${sequence++}`) => ({ PK: { S: PK }, SK: { S: SK } });
const newItem = (PK: string) => ({ ...key(PK), entity: { S: 'floor' }, body: { S: 'x'.repeat(200) }, v: { N: '1' } });
const NEW = 'attribute_not_exists(PK)';
const commit = (PK: string) => ({
  TableName: TABLE,
  Key: key(PK, 'head'),
  UpdateExpression: 'ADD version :one',
  ExpressionAttributeValues: { ':one': { N: '1' } },
});

const put = (PK: string) =>
  client.send(new ddb.PutItemCommand({ TableName: TABLE, Item: newItem(PK), ConditionExpression: NEW }));
const read = (PK: string) =>
  client.send(new ddb.GetItemCommand({ TableName: TABLE, Key: key(PK, 'head'), ConsistentRead: true }));
const update = (PK: string) => client.send(new ddb.UpdateItemCommand(commit(PK)));
/** One transaction: the commit and `puts` new items, each conditioned as a create's were. */
const transaction = (PK: string, puts: number) =>
  client.send(
    new ddb.TransactWriteItemsCommand({
      TransactItems: [
        { Update: commit(PK) },
        ...Array.from({ length: puts }, (_, i) => ({
          Put: { TableName: TABLE, Item: newItem(`${PK}-${i}`), ConditionExpression: NEW },
        })),
      ],
    }),
  );

const COMMENT_CALLS = 'comment create: PutItem ×3 side by side, then UpdateItem';
const COMMENT_TRANSACTION = 'comment create as one transaction (4 items)';
const KEY_CALLS = 'key create: GetItem, UpdateItem, PutItem ×2 side by side, PutItem';
const KEY_TRANSACTION = 'key create as one transaction (5 items)';

/** The shapes, each on partitions of its own (a run's or an organization's among seven). */
const SHAPES: Record<string, (n: number) => Promise<unknown>> = {
  PutItem: (n) => put(`put-${n}`),
  GetItem: (n) => read(`get-${n % 7}`),
  UpdateItem: (n) => update(`update-${n % 7}`),
  [COMMENT_CALLS]: async (n) => {
    await Promise.all([put(`receipt-${n}`), put(`copy-${n}`), put(`member-${n}`)]);
    await update(`run-${n % 7}`);
  },
  [COMMENT_TRANSACTION]: (n) => transaction(`run-tx-${n % 7}`, 3),
  [KEY_CALLS]: async (n) => {
    await read(`org-${n % 7}`);
    await update(`org-${n % 7}`);
    await Promise.all([put(`guard-${n}`), put(`copy-${n}`)]);
    await put(`member-${n}`);
  },
  [KEY_TRANSACTION]: (n) => transaction(`org-tx-${n % 7}`, 4),
};

const times = new Map(Object.keys(SHAPES).map((name) => [name, [] as number[]]));
const loadAtStart = loadavg()[0]!;
// Round 0 warms the JVM and the connections up, unmeasured.
for (let round = 0; round <= ROUNDS; round++) {
  for (const [name, shape] of Object.entries(SHAPES)) {
    for (let i = 0; i < PER_ROUND; i++) {
      const started = performance.now();
      await shape(round * PER_ROUND + i);
      if (round > 0) times.get(name)!.push(performance.now() - started);
    }
  }
}
await dynamo.stop();

const p50 = (name: string) => percentile(times.get(name)!, 50);
console.log(
  `Store floor on ${cpus().length}× ${cpus()[0]?.model ?? 'CPU'}, DynamoDB Local in memory, load average ${loadAtStart.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}, ${ROUNDS * PER_ROUND} of each, p50 in ms\n`,
);
for (const name of times.keys()) console.log(`${p50(name).toFixed(2).padStart(6)}  ${name}`);
const ratio = (calls: string, tx: string) => (p50(calls) / p50(tx)).toFixed(2);
console.log(
  `\nsingle-item calls / one transaction: comment create ${ratio(COMMENT_CALLS, COMMENT_TRANSACTION)}×, key create ${ratio(KEY_CALLS, KEY_TRANSACTION)}×`,
);
process.exit(0);
