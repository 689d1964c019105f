import {
  BatchGetItemCommand,
  ConditionalCheckFailedException,
  DescribeTableCommand,
  DynamoDBClient,
  PutItemCommand,
  ScanCommand,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import { openLocalStore } from './local-store';
import { awsFailureLines, deployedRegion } from './aws';
import { requiredOption, UsageError, type Command, type CommandArgs, type Values } from './command';

/**
 * `table copy` and `table verify`: every item of one table into another, for moving a deployed
 * stage's table into a new MRSC global table (which starts empty), and the item-by-item check after
 * (docs/runbooks.md). Each put is conditioned on no item with its key being there, so a re-run or a
 * resumed copy never overwrites an item or writes one twice; an item there that differs is left
 * and counted. The cursor printed after every page only passes items all in the target. Where: as
 * the other admin commands (TABLE_NAME or AWS_ENDPOINT_URL_DYNAMODB, else the local store).
 */

type Item = Record<string, AttributeValue>;
type Key = Record<string, AttributeValue>;

interface Cursor {
  from: string;
  to: string;
  /** Each segment's position: the last key of its last page copied, null before its first page, 'done' at its end. */
  at: Array<Key | null | 'done'>;
}

const encodeCursor = (cursor: Cursor) => Buffer.from(JSON.stringify(cursor)).toString('base64url');

function decodeCursor(text: string, from: string, to: string): Cursor {
  let cursor: Cursor;
  try {
    cursor = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Cursor;
  } catch {
    throw new UsageError('--resume takes the cursor a copy printed (to resume: --resume …), and this is not one');
  }
  if (
    !cursor ||
    !Array.isArray(cursor.at) ||
    cursor.at.length < 1 ||
    cursor.at.length > 64 ||
    typeof cursor.from !== 'string'
  ) {
    throw new UsageError('--resume takes the cursor a copy printed (to resume: --resume …), and this is not one');
  }
  if (cursor.from !== from || cursor.to !== to)
    throw new UsageError(`that cursor is of a copy from ${cursor.from} to ${cursor.to}, not from ${from} to ${to}`);
  return cursor;
}

function tables(values: Values): { from: string; to: string } {
  const from = requiredOption(values, 'from');
  const to = requiredOption(values, 'to');
  if (from === to) throw new UsageError('--from and --to name the same table');
  return { from, to };
}

function wholeNumber(values: Values, name: string, fallback: number, max: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (typeof raw !== 'string' || !Number.isInteger(n) || n < 1 || n > max)
    throw new UsageError(`--${name} must be a whole number from 1 to ${max}`);
  return n;
}

/** The DynamoDB the command works on, said on stderr; the client and how to let go of it. */
async function openDynamoDb(): Promise<{ client: DynamoDBClient; close(): Promise<void> }> {
  if (process.env.TABLE_NAME || process.env.AWS_ENDPOINT_URL_DYNAMODB) {
    const region = deployedRegion(process.env);
    console.error(
      `admin: DynamoDB in ${region}, endpoint ${process.env.AWS_ENDPOINT_URL_DYNAMODB ?? "DynamoDB's own"}`,
    );
    const client = new DynamoDBClient({});
    return { client, close: async () => client.destroy() };
  }
  const store = await openLocalStore((line) => console.error(line));
  const client = new DynamoDBClient({});
  return {
    client,
    close: async () => {
      client.destroy();
      await store.close();
    },
  };
}

async function keyAttributes(client: DynamoDBClient, table: string): Promise<string[]> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: table }));
  const schema = Table?.KeySchema ?? [];
  return [...schema].sort((a) => (a.KeyType === 'HASH' ? -1 : 1)).map((k) => k.AttributeName!);
}

const keyOf = (item: Item, names: string[]): Key => Object.fromEntries(names.map((n) => [n, item[n]!]));

/** An item in one canonical JSON form: attributes and map members sorted, sets sorted. */
export function canonical(value: unknown): string {
  const walk = (v: any): any => {
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) {
        const member = walk(v[k]);
        out[k] = (k === 'SS' || k === 'NS' || k === 'BS') && Array.isArray(member) ? [...member].sort() : member;
      }
      return out;
    }
    return v;
  };
  return JSON.stringify(walk(value));
}

/** `fn` on each item, at most `limit` at once. */
async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

export interface CopyCounts {
  copied: number;
  alreadyThere: number;
  keptTargets: number;
}

/** A Ctrl-C during a copy: finish the pages in flight, print the cursor, exit 130. */
let interrupted = false;

async function copy(args: CommandArgs) {
  const { from, to } = tables(args.values);
  const segments = wholeNumber(args.values, 'segments', 4, 64);
  const pageSize = wholeNumber(args.values, 'page-size', 500, 1000);
  const resume = typeof args.values.resume === 'string' ? decodeCursor(args.values.resume, from, to) : undefined;
  const cursor: Cursor = resume ?? { from, to, at: Array.from({ length: segments }, () => null) };
  const { client, close } = await openDynamoDb();
  const onInterrupt = () => {
    interrupted = true;
    console.error('admin: interrupted: finishing the pages in flight, then the cursor to resume from');
  };
  process.once('SIGINT', onInterrupt);
  const counts: CopyCounts = { copied: 0, alreadyThere: 0, keptTargets: 0 };
  const kept: string[] = [];
  try {
    const names = await keyAttributes(client, from);
    const targetNames = await keyAttributes(client, to);
    if (canonical(names) !== canonical(targetNames))
      throw new UsageError(
        `${from} is keyed on ${names.join(', ')} and ${to} on ${targetNames.join(', ')}: not the same table design`,
      );
    const condition = `attribute_not_exists(#k)`;
    const putOne = async (item: Item) => {
      try {
        await client.send(
          new PutItemCommand({
            TableName: to,
            Item: item,
            ConditionExpression: condition,
            ExpressionAttributeNames: { '#k': names[0]! },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        counts.copied++;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        if (error.Item && canonical(error.Item) === canonical(item)) counts.alreadyThere++;
        else {
          counts.keptTargets++;
          if (kept.length < 20) kept.push(canonical(keyOf(item, names)));
        }
      }
    };
    await Promise.all(
      cursor.at.map(async (_, segment) => {
        while (cursor.at[segment] !== 'done' && !interrupted) {
          const position = cursor.at[segment];
          const page = await client.send(
            new ScanCommand({
              TableName: from,
              Segment: segment,
              TotalSegments: cursor.at.length,
              Limit: pageSize,
              ConsistentRead: true,
              ...(position ? { ExclusiveStartKey: position } : {}),
            }),
          );
          await eachLimited(page.Items ?? [], 16, putOne);
          cursor.at[segment] = page.LastEvaluatedKey ?? 'done';
          console.error(
            `admin: ${counts.copied} copied, ${counts.alreadyThere} already there, ${counts.keptTargets} different in ${to} (kept); to resume: --resume ${encodeCursor(cursor)}`,
          );
        }
      }),
    );
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    await close();
  }
  const done = cursor.at.every((p) => p === 'done');
  const text = [
    done
      ? `Copied ${from} into ${to}: ${counts.copied} items copied, ${counts.alreadyThere} already there, ${counts.keptTargets} different in ${to} and kept.`
      : `Interrupted: ${counts.copied} items copied so far, ${counts.alreadyThere} already there, ${counts.keptTargets} different in ${to} and kept.`,
    ...(kept.length > 0
      ? [
          `Kept as they are in ${to} (npm run admin -- table verify lists every difference):`,
          ...kept.map((k) => `  ${k}`),
        ]
      : []),
    done
      ? `Next: npm run admin -- table verify --from ${from} --to ${to}`
      : `To resume: npm run admin -- table copy --from ${from} --to ${to} --resume ${encodeCursor(cursor)}`,
  ];
  return {
    json: { from, to, done, ...counts, cursor: done ? null : encodeCursor(cursor) },
    text,
    exitCode: done ? 0 : 130,
  };
}

export interface Difference {
  kind: 'missing' | 'different' | 'extra';
  key: string;
  /** `different`: the attributes whose values differ (or are on one side only). */
  attributes?: string[];
}

/** Every item of `scanned` looked up in `other` by key, a page at a time: what is not there, or differs. */
async function compareInto(
  client: DynamoDBClient,
  scanned: string,
  other: string,
  names: string[],
  compare: boolean,
  found: (d: Difference) => void,
): Promise<number> {
  let count = 0;
  let position: Key | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: scanned,
        Limit: 100,
        ConsistentRead: true,
        ...(position ? { ExclusiveStartKey: position } : {}),
      }),
    );
    const items = page.Items ?? [];
    count += items.length;
    const there = new Map<string, Item>();
    let keys: Key[] = items.map((item) => keyOf(item, names));
    while (keys.length > 0) {
      const answer = await client.send(
        new BatchGetItemCommand({ RequestItems: { [other]: { Keys: keys, ConsistentRead: true } } }),
      );
      for (const item of answer.Responses?.[other] ?? []) there.set(canonical(keyOf(item, names)), item);
      keys = (answer.UnprocessedKeys?.[other]?.Keys ?? []) as Key[];
    }
    for (const item of items) {
      const key = canonical(keyOf(item, names));
      const match = there.get(key);
      if (!match) {
        found({ kind: compare ? 'missing' : 'extra', key });
        continue;
      }
      if (!compare || canonical(match) === canonical(item)) continue;
      const attributes = [...new Set([...Object.keys(item), ...Object.keys(match)])]
        .filter((a) => canonical(item[a]) !== canonical(match[a]))
        .sort();
      found({ kind: 'different', key, attributes });
    }
    position = page.LastEvaluatedKey;
  } while (position);
  return count;
}

async function verify(args: CommandArgs) {
  const { from, to } = tables(args.values);
  const shown = wholeNumber(args.values, 'show', 50, 100_000);
  const { client, close } = await openDynamoDb();
  const differences: Difference[] = [];
  let counts: { source: number; target: number };
  try {
    const names = await keyAttributes(client, from);
    counts = {
      source: await compareInto(client, from, to, names, true, (d) => differences.push(d)),
      target: await compareInto(client, to, from, names, false, (d) => differences.push(d)),
    };
  } finally {
    await close();
  }
  const line = (d: Difference) =>
    d.kind === 'missing'
      ? `  missing in ${to}: ${d.key}`
      : d.kind === 'extra'
        ? `  only in ${to}: ${d.key}`
        : `  different: ${d.key}: ${d.attributes!.join(', ')}`;
  const text =
    differences.length === 0
      ? [`${from} (${counts.source} items) and ${to} (${counts.target} items) hold the same items.`]
      : [
          `${differences.length} difference${differences.length === 1 ? '' : 's'} between ${from} (${counts.source} items) and ${to} (${counts.target} items):`,
          ...differences.slice(0, shown).map(line),
          ...(differences.length > shown ? [`  … and ${differences.length - shown} more (--show N lists more)`] : []),
        ];
  return { json: { from, to, ...counts, differences }, text, exitCode: differences.length === 0 ? 0 : 1 };
}

/** What DynamoDB refused, in one line each (exit 1), not a stack trace: a table that is not there, credentials, the network. */
const answeringFailures =
  (run: Command['run']): Command['run'] =>
  async (args, store) => {
    try {
      return await run(args, store);
    } catch (error) {
      const { name, message } = (error ?? {}) as { name?: string; message?: string };
      const lines =
        name === 'ResourceNotFoundException'
          ? [`no such table (${message}): check --from and --to, and AWS_REGION or AWS_ENDPOINT_URL_DYNAMODB`]
          : awsFailureLines(error, `${args.values.from} or ${args.values.to}`, process.env);
      if (!lines) throw error;
      for (const line of lines) console.error(`admin: ${line}`);
      return { json: { error: lines.join(' ') }, text: [], exitCode: 1 };
    }
  };

export const tableCommands: Record<string, Command> = {
  copy: {
    usage: 'table copy --from SOURCE --to TARGET [--resume CURSOR] [--segments 4] [--page-size 500]',
    options: {
      from: { type: 'string' },
      to: { type: 'string' },
      resume: { type: 'string' },
      segments: { type: 'string' },
      'page-size': { type: 'string' },
    },
    usesStore: false,
    check({ values }) {
      const { from, to } = tables(values);
      wholeNumber(values, 'segments', 4, 64);
      wholeNumber(values, 'page-size', 500, 1000);
      if (values.resume !== undefined) {
        decodeCursor(String(values.resume), from, to);
        if (values.segments !== undefined)
          throw new UsageError("--segments cannot change on --resume: the cursor keeps the copy's own");
      }
    },
    run: answeringFailures(copy),
  },
  verify: {
    usage: 'table verify --from SOURCE --to TARGET [--show 50]',
    options: { from: { type: 'string' }, to: { type: 'string' }, show: { type: 'string' } },
    usesStore: false,
    check({ values }) {
      tables(values);
      wholeNumber(values, 'show', 50, 100_000);
    },
    run: answeringFailures(verify),
  },
};
