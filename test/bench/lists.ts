import { cpus } from 'node:os';
import type { Principal } from '#shared/auth/principal';

/**
 * List costs by page depth, in-process over DynamoDB Local: per request the DynamoDB calls, the
 * items they read, the read units DynamoDB reports (ReturnConsumedCapacity, asked by the bench,
 * never by the product) and the handler's latency. The point is the comparison inside one run: a
 * deep page costs what page 1 costs. Measured, never asserted.
 *
 * `npm run bench` runs it after the per-function table; `npx tsx test/bench/lists.ts` runs it
 * alone, with its own DynamoDB Local.
 */
const SAMPLES = Number(process.env.BENCH_LIST_SAMPLES ?? 15);
/** The deep page: 2,000 comments with 16 KiB bodies; and a long run of short ones. */
const BIG_BODIES = { comments: 2_000, bodyBytes: 16 * 1024 };
const LONG_RUN = { comments: 5_000, bodyBytes: 256 };
const KEYS = { created: 2_000, deleted: 400 };
const WRITERS = 4;

// Imported when called: the product's client must see the DynamoDB endpoint first.
const support = async () => ({
  ...(await import('../support/call-route')),
  ...(await import('../support/read-costs')),
});
const store = async () => ({
  ...(await import('#shared/store/runs')),
  ...(await import('#shared/store/comments')),
  ...(await import('#shared/store/reserved-tag-keys')),
});

/** A run of `total` comments, written `WRITERS` at a time through the store's own insert. */
async function seedRun(organization: string, total: number, bodyBytes: number): Promise<string> {
  const { registerNewRun, insertComment } = await store();
  const { runId } = await registerNewRun(organization);
  const body = 'x'.repeat(bodyBytes);
  let next = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (next < total) {
        next++;
        const written = await insertComment({ runId, organization, body, createdBy: 'user-bench' });
        if (typeof written === 'string') throw new Error(`seeding comments: ${written}`);
      }
    }),
  );
  return runId;
}

/** Keys created one by one, then some deleted, spread over the collection, as deletions leave holes. */
async function seedKeys(organization: string): Promise<void> {
  const { insertReservedTagKey, deleteStoredReservedTagKey } = await store();
  const created = [];
  for (let i = 0; i < KEYS.created; i++) {
    const key = await insertReservedTagKey(organization, { key: `bench-key-${i}`, disableOverrides: false });
    if (typeof key === 'string') throw new Error(`seeding key ${i}: ${key}`);
    created.push(key);
  }
  for (let i = 0; i < KEYS.deleted; i++)
    await deleteStoredReservedTagKey(created[Math.floor((i * KEYS.created) / KEYS.deleted)]!);
}

export interface ListRow {
  list: string;
  status: number;
  items: number;
  calls: string;
  itemsRead: number;
  readUnits: number;
  p50: number;
  p99: number;
}

async function measure(list: string, functionName: string, path: string, principal: Principal): Promise<ListRow> {
  const { callRoute, recordReads, itemsRead, readUnits } = await support();
  const samples = [];
  for (let i = 0; i < 2 + SAMPLES; i++) {
    const started = performance.now();
    const { result, calls } = await recordReads(() => callRoute(functionName, path, principal));
    samples.push({ ms: performance.now() - started, result, calls });
  }
  const timed = samples.slice(2);
  const ms = timed.map((s) => s.ms).sort((a, b) => a - b);
  const { result, calls } = timed.at(-1)!;
  const counts = new Map<string, number>();
  for (const c of calls) counts.set(c.command, (counts.get(c.command) ?? 0) + 1);
  return {
    list,
    status: result.status,
    items: result.status === 200 ? result.json.data.length : 0,
    calls:
      [...counts]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([command, n]) => (n === 1 ? command : `${command}×${n}`))
        .join(' + ') || '—',
    itemsRead: itemsRead(calls),
    readUnits: readUnits(calls),
    p50: ms[Math.floor(ms.length / 2)]!,
    p99: ms[Math.min(ms.length - 1, Math.floor(ms.length * 0.99))]!,
  };
}

/** Seeds the lists, measures them and returns the rows with their printed table. */
export async function benchLists(log: (line: string) => void = () => {}): Promise<{ rows: ListRow[]; table: string }> {
  const organization = 'bench-lists';
  const reader: Principal = { subject: 'user-bench', tokenId: 'at-bench-reader', grants: { [organization]: 'reader' } };
  const stranger: Principal = {
    subject: 'user-stranger',
    tokenId: 'at-bench-stranger',
    grants: { 'another-org': 'owner' },
  };
  let started = performance.now();
  const [bigRun, longRun] = await Promise.all([
    seedRun(organization, BIG_BODIES.comments, BIG_BODIES.bodyBytes),
    seedRun(organization, LONG_RUN.comments, LONG_RUN.bodyBytes),
    seedKeys(organization),
  ]);
  log(
    `lists: seeded ${BIG_BODIES.comments} + ${LONG_RUN.comments} comments and ${KEYS.created} keys (${KEYS.deleted} deleted) in ${Math.round(performance.now() - started)} ms`,
  );
  started = performance.now();
  const page = (number: number, size: number) => `?page%5Bnumber%5D=${number}&page%5Bsize%5D=${size}`;
  const comments = (runId: string) => `/runs/${runId}/comments`;
  const tagKeys = `/organizations/${organization}/reserved-tag-keys`;
  const live = KEYS.created - KEYS.deleted;
  const long = `comments ${LONG_RUN.comments}×${LONG_RUN.bodyBytes} B`;
  const big = `comments ${BIG_BODIES.comments}×16 KiB`;
  const keyList = `keys ${live} of ${KEYS.created} left`;
  const scenarios: [string, string, string, Principal][] = [
    [`${long}, page 1 size 20`, 'comments/list', comments(longRun) + page(1, 20), reader],
    [`${long}, page 1 size 100`, 'comments/list', comments(longRun) + page(1, 100), reader],
    [`${long}, page 50 size 100`, 'comments/list', comments(longRun) + page(50, 100), reader],
    [`${long}, page 51 size 100 (past the end)`, 'comments/list', comments(longRun) + page(51, 100), reader],
    [`${long}, page 50 size 100, stranger (404)`, 'comments/list', comments(longRun) + page(50, 100), stranger],
    [`${long}, page 21474837 size 100`, 'comments/list', comments(longRun) + page(21474837, 100), reader],
    [`${big}, page 1 size 20`, 'comments/list', comments(bigRun) + page(1, 20), reader],
    [`${big}, page 100 size 20`, 'comments/list', comments(bigRun) + page(100, 20), reader],
    [`${big}, page 100 size 20, stranger (404)`, 'comments/list', comments(bigRun) + page(100, 20), stranger],
    [`${keyList}, page 1 size 20`, 'reserved-tag-keys/list', tagKeys + page(1, 20), reader],
    [`${keyList}, page 1 size 100`, 'reserved-tag-keys/list', tagKeys + page(1, 100), reader],
    [`${keyList}, page ${live / 20} size 20`, 'reserved-tag-keys/list', tagKeys + page(live / 20, 20), reader],
    [`${keyList}, page ${live / 100} size 100`, 'reserved-tag-keys/list', tagKeys + page(live / 100, 100), reader],
    [
      `${keyList}, page ${live / 100 + 1} size 100 (past the end)`,
      'reserved-tag-keys/list',
      tagKeys + page(live / 100 + 1, 100),
      reader,
    ],
  ];
  const rows: ListRow[] = [];
  for (const [list, functionName, path, principal] of scenarios)
    rows.push(await measure(list, functionName, path, principal));
  log(`lists: measured ${scenarios.length} lists × ${SAMPLES} in ${Math.round(performance.now() - started)} ms`);

  const header = ['list', 'status', 'items', 'DynamoDB calls', 'items read', 'read units', 'p50 ms', 'p99 ms'];
  const cells = rows.map((r) => [
    r.list,
    String(r.status),
    String(r.items),
    r.calls,
    String(r.itemsRead),
    r.readUnits.toFixed(1),
    r.p50.toFixed(1),
    r.p99.toFixed(1),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c.map((v, i) => (i === 0 || i === 3 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  const table = [
    `Lists: ${SAMPLES} requests each after 2 warm-ups, handlers in-process over DynamoDB Local; items read and read units as DynamoDB reports them`,
    line(header),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...cells.map(line),
  ].join('\n');
  return { rows, table };
}

// Run alone: its own DynamoDB Local and table.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { ensureTable, startDynamoDbLocal, useLocalEndpoint } = await import('#infra/local/aws/dynamodb-local');
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  process.env.TABLE_NAME = 'bench-lists';
  const dynamo = await startDynamoDbLocal();
  try {
    useLocalEndpoint(dynamo.endpoint);
    await ensureTable(dynamo.endpoint, process.env.TABLE_NAME);
    const { table } = await benchLists((line) => process.stderr.write(`${line}\n`));
    console.log(`\nBench on ${cpus().length}× ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}\n${table}`);
  } finally {
    await dynamo.stop();
  }
}
