import { describe, expect, it } from '@jest/globals';
import {
  BatchWriteItemCommand,
  DeleteItemCommand,
  DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { randomAlphanumeric } from '#shared/ids';
import { ensureTable } from '#infra/local/aws/dynamodb-local';
import { admin as runAdmin, startAdmin } from '../support/admin-cli';
import { expectWith } from '../support/expect-with';

/**
 * `npm run admin -- table copy` and `table verify` against DynamoDB Local, two tables of the
 * project's design: a copy killed mid-way and resumed from its last printed cursor, a re-run that
 * changes nothing, and verifications that find nothing, then exactly the differences planted.
 */
const endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB!;
const client = new DynamoDBClient({
  endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
const env = {
  AWS_ENDPOINT_URL_DYNAMODB: endpoint,
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
  TABLE_NAME: undefined,
  AWS_PROFILE: undefined,
};
const admin = (args: string[]) => runAdmin(args, env);

const ITEMS = 600;
/** Items shaped as the store's: PK/SK, an entity, strings, numbers, a map, a list, a set. */
const item = (i: number) => ({
  PK: { S: `RUN#run-${String(i % 40).padStart(16, '0')}` },
  SK: { S: `COMMENT#${String(i).padStart(8, '0')}` },
  entity: { S: 'Comment' },
  body: { S: `comment ${i} ${'x'.repeat(i % 200)}` },
  n: { N: String(i) },
  meta: { M: { by: { S: `user-${i % 7}` }, tags: { SS: ['b', 'a', `t${i % 3}`] } } },
  list: { L: [{ S: 'one' }, { N: '2' }] },
});

async function newTables() {
  const [source, target] = [`copy-src-${randomAlphanumeric(8)}`, `copy-dst-${randomAlphanumeric(8)}`];
  await ensureTable(endpoint, source);
  await ensureTable(endpoint, target);
  for (let i = 0; i < ITEMS; i += 25) {
    const requests = Array.from({ length: Math.min(25, ITEMS - i) }, (_, k) => ({ PutRequest: { Item: item(i + k) } }));
    let unprocessed: any = { [source]: requests };
    while (unprocessed && Object.keys(unprocessed).length > 0) {
      unprocessed = (await client.send(new BatchWriteItemCommand({ RequestItems: unprocessed }))).UnprocessedItems;
    }
  }
  return { source, target };
}

describe('npm run admin -- table copy, table verify', () => {
  it('a copy killed mid-way resumes from its last cursor; a re-run writes nothing; verify finds no difference', async () => {
    const { source, target } = await newTables();
    // The CLI's own process (tsx's wrapper would pass the signal on, not be the copy): node with tsx's loader.
    const copy = ['table', 'copy', '--from', source, '--to', target, '--segments', '3', '--page-size', '25'];
    const first = startAdmin(copy, env);
    // Killed without warning, after a few pages: what a lost terminal or a crash leaves.
    await first.waitFor(/(?:to resume: --resume \S+\n[\s\S]*){4}/, 60_000);
    first.child.kill('SIGKILL');
    await first.exited;
    const cursors = [...first.output().matchAll(/to resume: --resume (\S+)/g)].map((m) => m[1]!);
    const cursor = cursors.at(-1)!;
    const copiedBefore = Number([...first.output().matchAll(/admin: (\d+) copied/g)].at(-1)![1]);
    expect(copiedBefore).toBeLessThan(ITEMS);

    const resumed = await admin(['table', 'copy', '--from', source, '--to', target, '--resume', cursor, '--json']);
    expectWith(resumed.code, resumed.output).toBe(0);
    const summary = JSON.parse(resumed.output.trim().split('\n').at(-1)!);
    expect(summary).toMatchObject({ from: source, to: target, done: true, keptTargets: 0, cursor: null });
    // Resumed where it was: at most the pages in flight when it was killed are met again, none written twice.
    expect(summary.copied + summary.alreadyThere).toBeLessThanOrEqual(ITEMS);
    expect(summary.copied).toBeGreaterThanOrEqual(ITEMS - copiedBefore - 3 * 25);

    const again = await admin(['table', 'copy', '--from', source, '--to', target, '--json']);
    expectWith(again.code, again.output).toBe(0);
    expect(JSON.parse(again.output.trim().split('\n').at(-1)!)).toMatchObject({
      copied: 0,
      alreadyThere: ITEMS,
      keptTargets: 0,
    });

    const verified = await admin(['table', 'verify', '--from', source, '--to', target]);
    expectWith(verified.code, verified.output).toBe(0);
    expect(verified.output).toContain(`${source} (${ITEMS} items) and ${target} (${ITEMS} items) hold the same items.`);
  }, 120_000);

  it('verify lists each planted difference and exits 1; a re-run of the copy fills what is missing and keeps what differs', async () => {
    const { source, target } = await newTables();
    const copied = await admin(['table', 'copy', '--from', source, '--to', target]);
    expectWith(copied.code, copied.output).toBe(0);
    expect(copied.output).toContain(`${ITEMS} items copied, 0 already there, 0 different in ${target} and kept.`);

    const key = (i: number) => ({ PK: item(i).PK, SK: item(i).SK });
    await client.send(new DeleteItemCommand({ TableName: target, Key: key(7) }));
    await client.send(
      new UpdateItemCommand({
        TableName: target,
        Key: key(8),
        UpdateExpression: 'SET body = :b',
        ExpressionAttributeValues: { ':b': { S: 'edited' } },
      }),
    );
    await client.send(
      new PutItemCommand({ TableName: target, Item: { ...item(ITEMS + 1), PK: { S: 'RUN#only-in-target' } } }),
    );

    const verified = await admin(['table', 'verify', '--from', source, '--to', target]);
    expectWith(verified.code, verified.output).toBe(1);
    const lines = verified.output
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('admin:'));
    expect(lines[0]).toBe(`3 differences between ${source} (${ITEMS} items) and ${target} (${ITEMS} items):`);
    expect(lines.slice(1).sort()).toEqual(
      [
        `  different: {"PK":{"S":"${item(8).PK.S}"},"SK":{"S":"${item(8).SK.S}"}}: body`,
        `  missing in ${target}: {"PK":{"S":"${item(7).PK.S}"},"SK":{"S":"${item(7).SK.S}"}}`,
        `  only in ${target}: {"PK":{"S":"RUN#only-in-target"},"SK":{"S":"${item(ITEMS + 1).SK.S}"}}`,
      ].sort(),
    );

    // The copy again: the missing item is back, the edited one (newer in the target) is not overwritten.
    const rerun = await admin(['table', 'copy', '--from', source, '--to', target]);
    expectWith(rerun.code, rerun.output).toBe(0);
    expect(rerun.output).toContain(`1 items copied, ${ITEMS - 2} already there, 1 different in ${target} and kept.`);
    const after = await admin(['table', 'verify', '--from', source, '--to', target, '--json']);
    expect(after.code).toBe(1);
    expect(
      JSON.parse(after.output.trim().split('\n').at(-1)!)
        .differences.map((d: { kind: string }) => d.kind)
        .sort(),
    ).toEqual(['different', 'extra']);
  }, 120_000);

  it('refuses a cursor of another copy, and the same table twice, before touching DynamoDB', async () => {
    expect((await admin(['table', 'copy', '--from', 'a', '--to', 'a'])).output).toContain(
      'admin: --from and --to name the same table',
    );
    const other = Buffer.from(JSON.stringify({ from: 'x', to: 'y', at: [null] })).toString('base64url');
    const refused = await admin(['table', 'copy', '--from', 'a', '--to', 'b', '--resume', other]);
    expect(refused.code).toBe(2);
    expect(refused.output).toContain('admin: that cursor is of a copy from x to y, not from a to b');
  }, 60_000);
});
