import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { ensureTable, startDynamoDbLocal, useLocalEndpoint } from '#infra/local/aws/dynamodb-local';
import { randomAlphanumeric } from '#shared/ids';
import { TSX } from '../support/processes';
import { median } from './report';

/**
 * `npm run store-burst`: N comment creates on one run at the same moment, each in its own process
 * (as N Lambda instances would be), straight on the store over an in-memory DynamoDB Local: the hot
 * spot without the gateway, the authorizer or the Lambda emulator, so what it shows is the store's
 * own contention protocol (docs/design.md, "Hot spots"). For each burst it prints what the store
 * answered each writer (created, the API's 201; Contended, its busy 503; or the error's name) and
 * what the writers sent: DynamoDB calls per writer by kind (puts; commit attempts; tickets, polls
 * of the run's record and give-ups in its queue; other reads; deletes) and each kind's median
 * latency, and how often a create was answered. The writers and DynamoDB Local share the machine,
 * so every call a waiting writer sends delays everyone's commit.
 */
const USAGE = `Usage: npm run store-burst -- [options]

  --writers N   creates at once, one process each (default 60)
  --bursts B    bursts one after the other, each on a new run (default 3)
  --warm-ups W  comments each writer first makes on a run of its own, as a warm Lambda
                instance has served requests before (default 20)
  -h, --help    this text`;

const CHILD = '--child';
/** Each call a writer made in the burst: its kind and how long it took (ms). */
type Call = [kind: string, ms: number];
interface WriterResult {
  outcome: string;
  ms: number;
  calls: Call[];
}

async function main(): Promise<void> {
  const refuse = (why: string) => {
    console.error(`store-burst: ${why}\n\n${USAGE}`);
    process.exit(2);
  };
  let values: { writers: string; bursts: string; 'warm-ups': string; help?: boolean } = {
    writers: '60',
    bursts: '3',
    'warm-ups': '20',
  };
  try {
    ({ values } = parseArgs({
      options: {
        writers: { type: 'string', default: values.writers },
        bursts: { type: 'string', default: values.bursts },
        'warm-ups': { type: 'string', default: values['warm-ups'] },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    return refuse((error as Error).message);
  }
  if (values.help) return console.log(USAGE);
  const [writers, bursts, warmUps] = [Number(values.writers), Number(values.bursts), Number(values['warm-ups'])];
  if (![writers, bursts].every((n) => Number.isInteger(n) && n > 0) || !(Number.isInteger(warmUps) && warmUps >= 0))
    return refuse('--writers and --bursts take positive whole numbers, --warm-ups zero or more');
  const dynamo = await startDynamoDbLocal();
  const children: ChildProcessWithoutNullStreams[] = [];
  try {
    useLocalEndpoint(dynamo.endpoint);
    process.env.TABLE_NAME = `burst-${randomAlphanumeric(8)}`;
    await ensureTable(dynamo.endpoint, process.env.TABLE_NAME);
    const { registerNewRun } = await import('#shared/store/runs');
    for (let burst = 1; burst <= bursts; burst++) {
      const { runId } = await registerNewRun('burst-org');
      const warmUpRuns = await Promise.all(Array.from({ length: writers }, () => registerNewRun('burst-org')));
      children.length = 0;
      const results = await burstOf(
        runId,
        warmUpRuns.map((run) => run.runId),
        warmUps,
        children,
      );
      report(burst, results);
    }
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await dynamo.stop();
  }
}

/** Starts `writers` processes, lets them all go at once when each is ready, and collects what each did. */
async function burstOf(
  runId: string,
  warmUpRuns: string[],
  warmUps: number,
  children: ChildProcessWithoutNullStreams[],
) {
  const ready: Promise<void>[] = [];
  const results: Promise<WriterResult>[] = [];
  for (const [i, warmUp] of warmUpRuns.entries()) {
    const child = spawn(TSX, [new URL(import.meta.url).pathname, CHILD, runId, String(i), warmUp], {
      env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'ERROR', STORE_BURST_WARM_UPS: String(warmUps) },
      stdio: 'pipe',
    });
    children.push(child);
    const lines = createInterface({ input: child.stdout });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // Ready once it says so, or gone (its result then says why).
    ready.push(
      new Promise((resolve) => {
        lines.once('line', () => resolve());
        child.once('exit', () => resolve());
      }),
    );
    results.push(
      new Promise((resolve) => {
        let last = '';
        lines.on('line', (line) => {
          last = line;
        });
        child.once('exit', () => {
          try {
            resolve(JSON.parse(last) as WriterResult);
          } catch {
            const why = stderr.split('\n').find((line) => /Error/.test(line)) ?? stderr.trim().split('\n').at(-1);
            resolve({ outcome: `crashed (${why})`, ms: 0, calls: [] });
          }
        });
      }),
    );
  }
  await Promise.all(ready);
  for (const child of children) child.stdin.end('go\n');
  return Promise.all(results);
}

/** Groups `items` by `key`, in the order each key first comes. */
function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const name = key(item);
    const group = groups.get(name);
    if (group) group.push(item);
    else groups.set(name, [item]);
  }
  return groups;
}

function report(burst: number, results: WriterResult[]): void {
  const byOutcome = groupBy(results, (result) => result.outcome);
  const outcomes = [...byOutcome]
    .map(([outcome, of]) => `${of.length} ${outcome} (median ${median(of.map((r) => r.ms))} ms)`)
    .join(', ');
  console.log(`burst ${burst}: ${outcomes}; last answer at ${Math.max(...results.map((r) => r.ms))} ms`);
  // The run takes one comment at a time: when the first was in, and how often one followed.
  const created = (byOutcome.get('created') ?? []).map((result) => result.ms).sort((a, b) => a - b);
  if (created.length > 1) {
    const every = Math.round((created.at(-1)! - created[0]!) / (created.length - 1));
    const gaps = created.slice(1).map((ms, i) => ms - created[i]!);
    console.log(
      `  creates answered from ${created[0]} ms, one every ${every} ms (median gap ${median(gaps)} ms, longest ${Math.max(...gaps)} ms)`,
    );
  }
  const calls = results.flatMap((result) => result.calls);
  const byKind = groupBy(calls, ([kind]) => kind);
  const kinds = [...byKind]
    .map(([kind, of]) => `${kind} ${(of.length / results.length).toFixed(1)} (${median(of.map(([, ms]) => ms))} ms)`)
    .join(', ');
  console.log(`  calls per writer (median latency): ${kinds}; ${calls.length} in all`);
}

/**
 * One writer: warms up as a Lambda instance that has served requests (comments on a run of its
 * own), says it is ready, creates one comment when told to go, and prints what it did.
 */
async function writer(runId: string, index: string, warmUp: string): Promise<void> {
  const { documentClient } = await import('#shared/store/client');
  const { findRunOrganization, insertComment } = await import('#shared/store/comments');
  const { DEFAULT_BUDGET_MS, withStoreDeadline } = await import('#shared/store/deadline');
  const calls: Call[] = [];
  let started = 0;
  const send = documentClient.send.bind(documentClient) as (command: unknown, options?: unknown) => Promise<unknown>;
  Object.assign(documentClient, {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }, options?: unknown) => {
      const at = Date.now();
      try {
        return await send(command, options);
      } finally {
        if (started) calls.push([kindOf(command), Date.now() - at]);
      }
    },
  });
  // The run's organization, as the function learns it; a read the loaded machine answers too late is sent again.
  let organization: string | undefined;
  for (let tries = 0; !organization && tries < 10; tries++)
    organization = await findRunOrganization(runId).catch(() => undefined);
  if (!organization) throw new Error(`run ${runId} not found`);
  for (let n = 0; n < Number(process.env.STORE_BURST_WARM_UPS); n++) {
    // Warming, not measuring: a create the loaded machine answers too late is not tried again.
    await insertComment({ runId: warmUp, organization, body: `warm-up ${n}`, createdBy: 'store-burst' }).catch(
      () => undefined,
    );
  }
  console.log('ready');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  started = Date.now();
  let outcome = 'created';
  try {
    await withStoreDeadline(started + DEFAULT_BUDGET_MS, () =>
      insertComment({ runId, organization, body: `burst ${index}`, createdBy: 'store-burst' }),
    );
  } catch (error) {
    outcome = (error as Error).name;
  }
  console.log(JSON.stringify({ outcome, ms: Date.now() - started, calls } satisfies WriterResult));
  process.exit(0);
}

function kindOf(command: { constructor: { name: string }; input: Record<string, unknown> }): string {
  const name = command.constructor.name.replace(/Command$/, '');
  const update = String(command.input.UpdateExpression ?? '');
  if (name === 'Update') {
    if (update.startsWith('SET queueNext')) return 'ticket';
    return update.startsWith('ADD queueGone') ? 'leave' : 'commit';
  }
  if (name === 'Put') return 'put';
  if (name === 'Get') return (command.input.Key as { SK?: string }).SK === 'COMMENTS' ? 'poll' : 'read';
  return name.toLowerCase();
}

if (process.argv[2] === CHILD) await writer(process.argv[3]!, process.argv[4]!, process.argv[5]!);
else await main();
