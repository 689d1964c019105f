// First: the bench's temp files go to the project's .tmp/, removed on exit.
import '../support/scratch-temp';
import * as ddb from '@aws-sdk/client-dynamodb';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureTable, startDynamoDbLocal, useLocalEndpoint } from '#infra/local/aws/dynamodb-local';
import { AUTHORIZER_FUNCTION, functionNames, routes } from '#shared/routes';
import { ensureAssembly } from '#infra/local/assembly';
import type { Principal } from '#shared/auth/principal';
import { createToken } from '#shared/store/tokens';
import { API_BASE_PATH } from '#shared/config';
import { randomAlphanumeric } from '#shared/ids';
import { keys } from '#shared/store/keys';
import { bodyText, scenarios, type Fixture } from '../load/scenarios';
import { written } from '../support/written';
import { bundle, coldStartCost, deployedFunctions, initCost, type InitCost } from './bundles';
import { benchColdStarts, type ColdStartFloor } from './cold-start';
import { EXTRA_MEASUREMENTS } from './extras';
import { TRACER_CANDIDATES, tracerSwap } from './tracers/candidates';
import { benchTracersWarm, type WarmRow } from './tracers-warm';
import { WarmSandbox } from './warm';
import type { DynamoDbCall } from '../support/round-trips';
import { GOALS, WRITE_UNIT_GOALS, kb, missedGoals, type ExtraFigure, type Figures } from './goals';
import { indexUnitsOf, recordCapacity, writeUnitsOf, type Capacity } from './capacity';
import { median, percentile } from './stats';

/**
 * `npm run bench`: per function, in one process and one run —
 *   DynamoDB round trips per request, against the budget in docs/design.md;
 *   warm handler latency (p50, p99) against a baseline that sends the same DynamoDB requests
 *   through the bare SDK client and does nothing else;
 *   cold starts as a user feels them: bundle size, module initialization and the first invocation,
 *   each in a fresh process, against a floor that only creates the client and makes one GetItem
 *   (cold-start.ts), built as esbuild builds it by default and as the stack builds its bundles;
 *   the tracers compared (docs/design.md "Tracing"): each function bundled with each candidate,
 *   its size and init, and its warm cost in a Lambda-like sandbox, sampled and unsampled.
 * Plain `npm run bench` reports; `npm run bench -- --check` also judges the goals and exits 1 when
 * one is missed. These machines are shared: read the ratios of one run.
 */
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 300);
const WARMUP = 30;
/** Rounds the warm invocations are spread over, every function in turn in each. */
const WARM_ROUNDS = Number(process.env.BENCH_WARM_ROUNDS ?? 6);
/**
 * The warm CPU goal is judged as the median of three runs in one process (issue 37 item 12): the
 * rounds are split into three runs in order (rounds 1–2, 3–4 and 5–6 by default).
 */
const CPU_RUNS = 3;
const runOfRound = (round: number) => Math.min(CPU_RUNS - 1, Math.floor(((round - 1) * CPU_RUNS) / WARM_ROUNDS));
/** Warm-up invocations of each function (unmeasured) that also record the capacity units they consume. */
const CAPACITY_SAMPLES = 10;
const WARM_MODE = process.env.BENCH_WARM_MODE ?? 'in-process';
const INIT_SAMPLES = Number(process.env.BENCH_INIT_SAMPLES ?? 15);
const COLD_SAMPLES = Number(process.env.BENCH_COLD_SAMPLES ?? 25);
const WARM_ITERATIONS = Number(process.env.BENCH_WARM_ITERATIONS ?? 200);
/** The functions whose warm cost each tracer candidate is measured on: one read, one write. */
const WARM_FUNCTIONS = ['reserved-tag-keys/list', 'comments/create'];
const CHECK = process.argv.includes('--check');
const WARM_ONLY = process.argv.includes('--warm-only');

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(`Usage: npm run bench [-- --check] [-- --warm-only]
Per function: DynamoDB calls against the budget, warm handler p50/p99 against the bare SDK client;
its cold start in fresh processes (bundle size, import, first invocation) against a floor that
only creates the client and makes one GetItem, built as esbuild builds it by default and as the
stack builds its bundles (elapsed and CPU); then each tracer candidate (none, the project's
emitter, OpenTelemetry, Powertools Tracer): bundle sizes, init, and warm cost per request in a
Lambda-like sandbox, sampled and unsampled, with the datagrams and bytes sent; then list costs by
page depth. Writes reports/bench-*.json.
  --check   also judge the goals (calls within budget; the handler's CPU per request at most
            ${GOALS.warmCpuOverMs} ms above the bare SDK's, median of ${CPU_RUNS} runs, the elapsed p50 ratio printed only;
            write units per create: ${Object.entries(WRITE_UNIT_GOALS)
              .map(([name, units]) => `${name} ≤ ${units}`)
              .join(', ')}; import + first
            invocation ≤ ${GOALS.coldStartRatio}× the floor as esbuild builds it, elapsed and CPU; init ≤ ${GOALS.initRatio}× elapsed
            and ≤ ${GOALS.initCpuRatio}× CPU the floor built alike; bundles ≤ ${GOALS.bundleBytes / 1024} KB) and exit 1 when one is missed.
  --warm-only  stop after the warm measurement (calls, elapsed and CPU, capacity units; about a minute):
            no lists, cold starts or tracers; with --check, only its goals are judged.
Environment: BENCH_ITERATIONS (300) warm invocations per function, spread over BENCH_WARM_ROUNDS
(6, at least ${CPU_RUNS}) rounds of every function in turn, BENCH_COLD_SAMPLES (25) cold starts per bundle,
BENCH_INIT_SAMPLES (15) cold imports per bundle and tracer, BENCH_WARM_ITERATIONS (200)
Lambda-like invocations per tracer, function and mode. BENCH_WARM_MODE=sandbox runs the warm
invocations in sandboxes instead: each deployed bundle in a process of its own, the bare SDK
bundled alike beside it (reported, not judged: the warm goal is judged in-process).`);
  process.exit(0);
}
if (!(WARM_ROUNDS >= CPU_RUNS)) {
  console.error(
    `BENCH_WARM_ROUNDS is at least ${CPU_RUNS} (the warm CPU goal is the median of ${CPU_RUNS} runs), not ${process.env.BENCH_WARM_ROUNDS}`,
  );
  process.exit(2);
}
if (WARM_MODE !== 'in-process' && WARM_MODE !== 'sandbox') {
  console.error(`BENCH_WARM_MODE is in-process (the default) or sandbox, not ${WARM_MODE}`);
  process.exit(2);
}
const startLoad = loadavg()[0]!;
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
/**
 * The handlers write their metrics to stdout as EMF lines, as in Lambda (formatting them is part
 * of what is measured); here they would bury the tables, so they are counted instead of shown.
 */
let metricLines = 0;
const writeStdout = process.stdout.write.bind(process.stdout) as (chunk: unknown, ...rest: unknown[]) => boolean;
process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
  if (typeof chunk === 'string' && chunk.startsWith('{"_aws"')) return ++metricLines > 0;
  return writeStdout(chunk, ...rest);
}) as typeof process.stdout.write;
process.env.TABLE_NAME = 'bench';
const dynamo = await startDynamoDbLocal();
useLocalEndpoint(dynamo.endpoint);
await ensureTable(dynamo.endpoint, 'bench');
// Imported only now: the handlers' client must see the local endpoint.
const { authorizerContext, handlerOf, lambdaContext, proxyEvent } = await import('../support/lambda-events');
const { recordDynamoDbCalls } = await import('../support/round-trips');
type Call = DynamoDbCall;
const { registerRun } = await import('#shared/store/runs');
const { WINDOW_MS } = await import('#shared/store/reserved-tag-keys');
const { createNotificationSecret } = await import('#shared/store/notification-secrets');

const bareClient = new ddb.DynamoDBClient({});

const organization = 'bench-org';
const principal: Principal = { subject: 'user-bench', tokenId: 'at-bench', grants: { [organization]: 'owner' } };
const fixture: Fixture = {
  organization,
  runId: 'run-BenchBenchBench0',
  commentRunIds: ['run-BenchBenchBench0'],
  keyIds: [],
  deletable: [],
  commentId: '',
  notificationSecret: written(await createNotificationSecret(organization)).current.secret,
};
await registerRun({ runId: fixture.runId, organization, workspace: 'bench' });

/** Each route with its path's pattern (to find the route a scenario's request reaches) and its handler. */
const compiled = await Promise.all(
  routes.map(async (route) => {
    const names: string[] = [];
    const source = `${API_BASE_PATH}${route.path}`.replace(/\{(\w+)\}/g, (_, name: string) => {
      names.push(name);
      return '([^/]+)';
    });
    return { route, names, pattern: new RegExp(`^${source}/?$`), handler: await handlerOf(route.function) };
  }),
);

interface Invocation {
  ms: number;
  cpuMs?: number;
  calls: Call[];
  body: string;
}

/** CPU time of this process (user and system, every thread) in ms. */
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** Request `n` of a function's scenario, as API Gateway hands it over after the authorizer. */
function eventFor(name: string, n: number) {
  const request = scenarios[name]!.request(fixture, n, 'bench');
  const url = new URL(`http://bench.local${API_BASE_PATH}${request.path}`);
  const route = compiled.find((c) => c.route.method === request.method && c.pattern.test(url.pathname));
  if (route?.route.function !== name) throw new Error(`${request.method} ${request.path} does not reach ${name}`);
  const values = route.pattern.exec(url.pathname)!.slice(1);
  const event = proxyEvent({
    method: request.method,
    path: `${url.pathname}${url.search}`,
    resource: `${API_BASE_PATH}${route.route.path}`,
    pathParameters:
      route.names.length > 0
        ? Object.fromEntries(route.names.map((k, i) => [k, decodeURIComponent(values[i]!)]))
        : null,
    headers: Object.entries({
      host: 'bench.local',
      'content-type': 'application/vnd.api+json',
      accept: 'application/vnd.api+json',
      ...request.headers,
    }),
    body: bodyText(request) ?? null,
    authorizer: authorizerContext(principal),
  });
  return { event, route };
}

async function invoke(name: string, n: number): Promise<Invocation> {
  const { event, route } = eventFor(name, n);
  const context = lambdaContext(name); // made before the clock starts: Lambda hands it over, the handler does not build it
  let ms = 0;
  let cpu = 0;
  const { result: response, calls } = await recordDynamoDbCalls(async () => {
    const cpuStarted = cpuMs();
    const started = performance.now();
    const answer = await route.handler(event, context);
    ms = performance.now() - started;
    cpu = cpuMs() - cpuStarted;
    return answer;
  });
  if (response.statusCode >= 300) throw new Error(`${name} #${n} answered ${response.statusCode}: ${response.body}`);
  return { ms, cpuMs: cpu, calls, body: response.body };
}

/** New ids (and key names) for a replayed create, so its attribute_not_exists conditions hold again. */
function renamed(calls: Call[]): Call[] {
  const ids = new Map<string, string>();
  const fresh = (id: string) =>
    ids.get(id) ??
    ids
      .set(
        id,
        `${id.slice(0, 4)}${Math.random().toString(36).slice(2, 10)}${Math.random().toString(36).slice(2, 10)}`.slice(
          0,
          20,
        ),
      )
      .get(id)!;
  return withFreshReceipts(
    JSON.parse(
      JSON.stringify(calls)
        .replace(/(rtk|wsc)-[A-Za-z0-9]{16}/g, fresh)
        .replace(/load-bench-/g, 'base-bench-'),
    ),
  );
}

/** A run notification's calls on new run ids, so the registration's attribute_not_exists conditions hold again. */
function withFreshRuns(calls: Call[]): Call[] {
  const ids = new Map<string, string>();
  const fresh = (id: string) => ids.get(id) ?? ids.set(id, `run-${randomAlphanumeric(16)}`).get(id)!;
  return JSON.parse(JSON.stringify(calls).replace(/run-[A-Za-z0-9]{16}/g, fresh));
}

/** A create's receipt under a new id: the handler's receipt stays, and the replay's condition that none exists holds again. */
function withFreshReceipts(calls: Call[]): Call[] {
  const prefix = keys.receipt('').PK;
  const ids = new Map<string, string>();
  const fresh = (receipt: string) =>
    ids.get(receipt) ?? ids.set(receipt, `${prefix}${randomAlphanumeric(43)}`).get(receipt)!;
  return JSON.parse(JSON.stringify(calls).replace(new RegExp(`${prefix}[A-Za-z0-9_-]+`, 'g'), fresh));
}

/**
 * Copies of the bench run for the baselines of the next `count` comment creates, the first as the
 * run is now and each later one with one comment more, as the handler will find the run: each
 * replay, aimed at its copy, finds the count the handler found, and its condition holds again.
 * They are written before the creates, so nothing comes between a create and its baseline.
 */
async function twinRuns(count: number): Promise<((calls: Call[]) => Call[])[]> {
  const { PK, SK } = keys.run(fixture.runId);
  const { Item: run } = await bareClient.send(
    new ddb.GetItemCommand({ TableName: 'bench', Key: { PK: { S: PK }, SK: { S: SK } }, ConsistentRead: true }),
  );
  const twins = [];
  for (let i = 0; i < count; i++) {
    const twin = `run-${randomAlphanumeric(16)}`;
    const commentCount = { N: String(Number(run!.commentCount!.N) + i) };
    await bareClient.send(
      new ddb.PutItemCommand({ TableName: 'bench', Item: { ...run, PK: { S: keys.run(twin).PK }, commentCount } }),
    );
    twins.push((calls: Call[]) => JSON.parse(JSON.stringify(calls).replaceAll(fixture.runId, twin)) as Call[]);
  }
  return twins;
}

/**
 * Copies of the organization's key head for the baselines of the next `count` key creates, each at
 * the version the handler will find (every create moves it one on), under an organization of its
 * own with a name as long: each replay, aimed at its copy, commits at the version the handler did,
 * reads a head as large, and writes a guard, a copy and a member as large. Written before the
 * creates, as the run copies are.
 */
async function twinHeads(count: number): Promise<((calls: Call[]) => Call[])[]> {
  const head = keys.reservedTagKeyCounter(organization);
  const { Item } = await bareClient.send(
    new ddb.GetItemCommand({
      TableName: 'bench',
      Key: { PK: { S: head.PK }, SK: { S: head.SK } },
      ConsistentRead: true,
    }),
  );
  if (Item?.version === undefined) return []; // a store whose creates are transactions (before 1955d0c): replayed on new ids alone
  const twins = [];
  for (let i = 0; i < count; i++) {
    const twin = `b${randomAlphanumeric(organization.length - 1).toLowerCase()}`;
    const version = { N: String(Number(Item!.version!.N) + i) };
    await bareClient.send(
      new ddb.PutItemCommand({
        TableName: 'bench',
        Item: { ...Item, PK: { S: keys.reservedTagKeyCounter(twin).PK }, version },
      }),
    );
    twins.push((calls: Call[]) => JSON.parse(JSON.stringify(calls).replaceAll(organization, twin)) as Call[]);
  }
  return twins;
}

/**
 * The calls with every condition made to hold, and otherwise as sent: each ConditionExpression
 * gains `OR attribute_not_exists(benchNeverSet)`, which DynamoDB evaluates with the rest. For a key
 * update's baseline, which writes the very items the handler just wrote, the same values again;
 * and a delete's, after the key's create is replayed so (untimed) to put it back.
 */
function conditionsHold(calls: Call[]): Call[] {
  return calls.map((call) => {
    const input = call.input as { ConditionExpression?: string };
    return input.ConditionExpression === undefined
      ? call
      : {
          ...call,
          input: {
            ...input,
            ConditionExpression: `(${input.ConditionExpression}) OR attribute_not_exists(benchNeverSet)`,
          },
        };
  });
}

/** The baseline: the same requests through the bare low-level client, nothing else; one the handler saw refused may be refused again. */
async function replayInProcess(calls: Call[]): Promise<{ ms: number; cpuMs: number }> {
  const cpuStarted = cpuMs();
  const started = performance.now();
  for (const { command, input, refused } of calls) {
    const Command = (ddb as unknown as Record<string, new (input: unknown) => ddb.GetItemCommand>)[command];
    await bareClient.send(new Command!(input)).catch((error: unknown) => {
      if (!refused) throw error;
    });
  }
  const ms = performance.now() - started;
  return { ms, cpuMs: cpuMs() - cpuStarted };
}

const f = (v: number | null, digits = 2) => (v === null ? '—' : v.toFixed(digits));
function printTable(header: string[], table: string[][], leftColumns = 1): void {
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < leftColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log([line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...table.map(line)].join('\n'));
}

interface Row {
  function: string;
  budget: number;
  roundTrips: number;
  handlerP50: number;
  handlerP99: number;
  baselineP50: number | null;
  baselineP99: number | null;
  latencyRatio: number | null;
  /** CPU per request, p50 over every run, handler and bare SDK; and the handler's above the bare SDK's, per run and their median (judged). */
  handlerCpuP50: number | null;
  baselineCpuP50: number | null;
  cpuOverByRun: number[];
  warmCpuOverMs: number | null;
  /** Capacity units per request, from the warm-up invocations that recorded them: write units (the index's included), their max, read units. */
  writeUnits: number | null;
  writeUnitsMax: number | null;
  readUnits: number | null;
  /** Whether an index entry was written and DynamoDB Local did not report its units (then counted from the items written). */
  indexFromItems: boolean;
}
const rows: Row[] = [];
/** Create calls by key id: the delete baseline recreates each victim (untimed) before deleting it. */
const keyCreations = new Map<string, Call[]>();

// Fixture through the handlers themselves: a first page of keys that stay (the oldest list first:
// without them page 1 would show the keys the delete scenario removes, and read past their
// tombstones, docs/design.md "Round-trip budgets"), keys to update (a few, cycled) and a comment to show.
for (let i = 0; i < 20; i++) await invoke('reserved-tag-keys/create', 2_000_000 + i);
for (let i = 0; i < 4; i++)
  fixture.keyIds.push(JSON.parse((await invoke('reserved-tag-keys/create', 1_000_000 + i)).body).data.id);
fixture.commentId = JSON.parse((await invoke('comments/create', 1_000_000)).body).data.id;

// The deployed bundles (the synthesized local stage's own), and what every process of the bench
// gets beside its template's environment: DynamoDB Local, and credentials as Lambda gives them.
// (--warm-only in-process needs none of them: no synthesis.)
const assembly =
  WARM_ONLY && WARM_MODE === 'in-process'
    ? undefined
    : await ensureAssembly((line) => process.stderr.write(`\n${line}`));
const deployed: ReturnType<typeof deployedFunctions> = assembly ? deployedFunctions(assembly) : new Map();
const localStore = {
  AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
  AWS_SESSION_TOKEN: 'bench',
  TABLE_NAME: 'bench',
};

// Warm latency needs a request to send (test/load/scenarios.ts); a function without one, like the
// authorizer, still has its cold start measured below. It is measured in rounds, every function in
// turn in each (as the cold starts rotate): a stretch of load on a shared machine, or DynamoDB
// Local's own JIT and garbage collection, then falls on every function a little rather than on
// one of them whole. Each invocation is followed by its baseline, and a function's figures are
// those of all its rounds together.
interface WarmSamples {
  handlerMs: number[];
  baselineMs: number[];
  roundTrips: number;
  invoked: number;
  /** CPU per request of the handler and of its baseline, by run (in-process only). */
  handlerCpuMs: number[][];
  baselineCpuMs: number[][];
  capacity: Capacity[];
}
const warmFunctions = functionNames().filter((name) => scenarios[name]);
const warm = new Map<string, WarmSamples>(
  warmFunctions.map((name) => [
    name,
    {
      handlerMs: [],
      baselineMs: [],
      roundTrips: 0,
      invoked: 0,
      handlerCpuMs: Array.from({ length: CPU_RUNS }, () => []),
      baselineCpuMs: Array.from({ length: CPU_RUNS }, () => []),
      capacity: [],
    },
  ]),
);

/**
 * Where the warm invocations run. `in-process` (the goal's): the handlers in this process, back to
 * back with the bare client. `sandbox`: each deployed bundle in a process of its own with the bare
 * SDK bundled alike beside it (warm.ts), so each pair sits idle while the other functions run.
 */
const sandboxed = WARM_MODE === 'sandbox';
const sandboxes = new Map<string, WarmSandbox>();
if (sandboxed) {
  const bareReplay = await bundle(resolve('test/bench/bare-replay.ts'));
  for (const name of warmFunctions) {
    sandboxes.set(
      name,
      await WarmSandbox.start(name, {
        ...deployed.get(name)!.environment,
        ...localStore,
        BENCH_BARE_REPLAY: bareReplay.file,
      }),
    );
  }
}

/** Invocation `n` of a function's scenario, where WARM_MODE runs it. */
async function invokeWarm(name: string, n: number): Promise<Invocation> {
  if (!sandboxed) return invoke(name, n);
  const answer = await sandboxes.get(name)!.invoke(eventFor(name, n).event);
  if (answer.statusCode >= 300) throw new Error(`${name} #${n} answered ${answer.statusCode}: ${answer.body}`);
  return answer;
}

/** The same calls through the bare SDK, where WARM_MODE runs `name`: its time (and CPU, in-process). */
async function replay(name: string, calls: Call[]): Promise<{ ms: number; cpuMs?: number }> {
  if (!sandboxed) return replayInProcess(calls);
  const answer = await sandboxes.get(name)!.replay(calls);
  if (answer.statusCode !== 204) throw new Error(`the bare replay answered ${answer.statusCode}: ${answer.body}`);
  return { ms: answer.ms };
}

/**
 * Invocations of `name` until it has made `until` (its first WARMUP unmeasured), each then replayed
 * through the bare client. The last CAPACITY_SAMPLES warm-up invocations run in-process and record
 * the capacity units they consume (capacity.ts): not timed, so asking for it costs the timed ones nothing.
 */
async function measureWarm(name: string, until: number, round: number): Promise<void> {
  const samples = warm.get(name)!;
  const twins =
    name === 'comments/create'
      ? await twinRuns(until - samples.invoked)
      : name === 'reserved-tag-keys/create'
        ? await twinHeads(until - samples.invoked)
        : [];
  for (; samples.invoked < until; samples.invoked++) {
    const n = samples.invoked;
    const onTwinRun = twins.shift();
    let invocation: Invocation;
    if (n >= WARMUP - CAPACITY_SAMPLES && n < WARMUP) {
      const recorded = await recordCapacity(() => invoke(name, n));
      samples.capacity.push(recorded.capacity);
      invocation = recorded.result;
    } else {
      invocation = await invokeWarm(name, n);
    }
    if (name === 'reserved-tag-keys/create') {
      const id = JSON.parse(invocation.body).data.id as string;
      keyCreations.set(id, invocation.calls);
      fixture.deletable.unshift(id);
    }
    if (n < WARMUP) continue;
    const run = runOfRound(round);
    samples.handlerMs.push(invocation.ms);
    samples.roundTrips = Math.max(samples.roundTrips, invocation.calls.length);
    if (invocation.calls.length === 0) continue;
    let baseline: { ms: number; cpuMs?: number };
    if (name === 'reserved-tag-keys/delete') {
      // A key's head commits at a version: the key's create is put back (untimed) and the delete
      // replayed on the same items, with their conditions made to hold; the head ends as the handler left it.
      const victim = /rtk-[A-Za-z0-9]{16}/.exec(JSON.stringify(invocation.calls[0]!.input))![0];
      await replay(name, conditionsHold(withFreshReceipts(keyCreations.get(victim)!)));
      baseline = await replay(name, conditionsHold(invocation.calls));
    } else if (name === 'reserved-tag-keys/update') {
      baseline = await replay(name, conditionsHold(invocation.calls)); // the same values on the same items, at the same versions
    } else if (name === 'run-notifications/receive') {
      baseline = await replay(name, withFreshRuns(invocation.calls)); // a run is registered once: replay on new run ids
    } else if (onTwinRun) {
      // A run's comments are numbered and an organization's keys versioned: replay on a copy.
      baseline = await replay(name, onTwinRun(renamed(invocation.calls)));
    } else if (name.endsWith('/create')) {
      baseline = await replay(name, renamed(invocation.calls));
    } else {
      baseline = await replay(name, invocation.calls);
    }
    samples.baselineMs.push(baseline.ms);
    if (invocation.cpuMs !== undefined && baseline.cpuMs !== undefined) {
      samples.handlerCpuMs[run]!.push(invocation.cpuMs);
      samples.baselineCpuMs[run]!.push(baseline.cpuMs);
    }
  }
}

process.stderr.write(`warm latency (${WARM_ROUNDS} rounds of every function)`);
for (let round = 1; round <= WARM_ROUNDS; round++) {
  // Creates come before deletes in each round: the deletes take the keys the creates made.
  for (const name of warmFunctions)
    await measureWarm(name, WARMUP + Math.round((ITERATIONS * round) / WARM_ROUNDS), round);
  process.stderr.write('.');
}
process.stderr.write('\n');
for (const sandbox of sandboxes.values()) sandbox.stop();
for (const name of warmFunctions) {
  const { handlerMs, baselineMs, roundTrips, handlerCpuMs, baselineCpuMs, capacity } = warm.get(name)!;
  const handlerP50 = percentile(handlerMs, 50);
  const baselineP50 = baselineMs.length > 0 ? percentile(baselineMs, 50) : null;
  const cpuOverByRun = handlerCpuMs.every((run, i) => run.length > 0 && baselineCpuMs[i]!.length > 0)
    ? handlerCpuMs.map((run, i) => percentile(run, 50) - percentile(baselineCpuMs[i]!, 50))
    : [];
  const units = capacity.map(writeUnitsOf);
  rows.push({
    function: name,
    budget: scenarios[name]!.budget,
    roundTrips,
    handlerP50,
    handlerP99: percentile(handlerMs, 99),
    baselineP50,
    baselineP99: baselineMs.length > 0 ? percentile(baselineMs, 99) : null,
    latencyRatio: baselineP50 === null ? null : handlerP50 / baselineP50,
    handlerCpuP50: handlerCpuMs.flat().length > 0 ? percentile(handlerCpuMs.flat(), 50) : null,
    baselineCpuP50: baselineCpuMs.flat().length > 0 ? percentile(baselineCpuMs.flat(), 50) : null,
    cpuOverByRun,
    warmCpuOverMs: cpuOverByRun.length === CPU_RUNS ? percentile(cpuOverByRun, 50) : null,
    writeUnits: units.length > 0 ? percentile(units, 50) : null,
    writeUnitsMax: units.length > 0 ? Math.max(...units) : null,
    readUnits:
      capacity.length > 0
        ? percentile(
            capacity.map((c) => c.tableRead + Object.values(c.indexRead).reduce((a, b) => a + b, 0)),
            50,
          )
        : null,
    indexFromItems: capacity.some((c) => c.indexReported === 0 && indexUnitsOf(c) > 0),
  });
}
/** The warm table: calls, elapsed and CPU, capacity units; and the write units of the creates against their goals. */
function printWarm(): void {
  console.log(
    `\nBench on ${cpus().length}× ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}, load average ${loadavg()[0]!.toFixed(1)} at the end (${startLoad.toFixed(1)} at the start), ${ITERATIONS} warm invocations per function in ${WARM_ROUNDS} rounds, ${sandboxed ? 'each function in a sandbox of its own with the bare SDK beside it (BENCH_WARM_MODE=sandbox: not judged)' : 'in-process'} (latencies in ms)\n`,
  );
  printTable(
    [
      'function',
      'DDB calls',
      'budget',
      'handler p50',
      'p99',
      'bare SDK p50',
      'p99',
      'p50 ratio',
      'CPU p50',
      'bare CPU p50',
      `CPU over (${CPU_RUNS} runs)`,
      'median',
      'WCU',
      'RCU',
    ],
    rows.map((r) => [
      r.function,
      String(r.roundTrips),
      String(r.budget),
      f(r.handlerP50),
      f(r.handlerP99),
      f(r.baselineP50),
      f(r.baselineP99),
      f(r.latencyRatio),
      f(r.handlerCpuP50, 3),
      f(r.baselineCpuP50, 3),
      r.cpuOverByRun.length > 0 ? r.cpuOverByRun.map((v) => v.toFixed(3)).join(' ') : '—',
      f(r.warmCpuOverMs, 3),
      r.writeUnits === null
        ? '—'
        : `${f(r.writeUnits, 0)}${r.writeUnitsMax !== r.writeUnits ? ` (≤ ${f(r.writeUnitsMax, 0)})` : ''}`,
      f(r.readUnits, 1),
    ]),
  );
  console.log(
    `(CPU: this process's CPU time per request, ms; "CPU over": the handler's p50 above the bare SDK's in each run, judged on their median, goal ≤ ${GOALS.warmCpuOverMs} ms; the elapsed p50 ratio is not judged. WCU and RCU: capacity units per request as DynamoDB Local reports them (ReturnConsumedCapacity: INDEXES) in ${CAPACITY_SAMPLES} warm-up invocations, median (max), write units with the Expiry index's${rows.some((r) => r.indexFromItems) ? ", which DynamoDB Local did not report and are counted from the items written (1 per item with the index's key)" : ', as DynamoDB Local reports them'})`,
  );
  for (const [name, goal] of Object.entries(WRITE_UNIT_GOALS)) {
    const row = rows.find((r) => r.function === name);
    console.log(
      `Write units per ${name}: ${row?.writeUnitsMax ?? '—'} at most in ${CAPACITY_SAMPLES} requests (goal ≤ ${goal})`,
    );
  }
}
const figureOf = (
  r: Row,
): Pick<Figures, 'function' | 'roundTrips' | 'budget' | 'latencyRatio' | 'warmCpuOverMs' | 'writeUnits'> => ({
  function: r.function,
  roundTrips: r.roundTrips,
  budget: r.budget,
  latencyRatio: r.latencyRatio,
  warmCpuOverMs: sandboxed ? null : r.warmCpuOverMs,
  writeUnits: r.writeUnitsMax,
});
if (WARM_ONLY) {
  // The warm measurement alone (--warm-only): its table, and its goals judged with --check.
  await dynamo.stop();
  printWarm();
  const missed = missedGoals(
    rows.map((r) => ({
      ...figureOf(r),
      initRatio: 0,
      initCpuRatio: 0,
      bundleBytes: 0,
      coldStartRatio: 0,
      coldStartCpuRatio: 0,
    })),
  );
  if (CHECK)
    console.log(
      missed.length === 0
        ? '\nEvery warm goal met (calls, CPU, write units).'
        : `\nGoals missed:\n  ${missed.join('\n  ')}`,
    );
  mkdirSync('reports', { recursive: true });
  const file = join('reports', `bench-warm-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        machine: {
          cpus: cpus().length,
          model: cpus()[0]?.model,
          node: process.version,
          loadAverage: { start: startLoad, end: loadavg()[0] },
        },
        iterations: ITERATIONS,
        warmMode: WARM_MODE,
        warmRounds: WARM_ROUNDS,
        cpuRuns: CPU_RUNS,
        goals: GOALS,
        writeUnitGoals: WRITE_UNIT_GOALS,
        rows,
        ...(CHECK ? { missed } : {}),
      },
      null,
      2,
    ),
  );
  console.log(`Report: ${file}`);
  process.exit(CHECK && missed.length > 0 ? 1 : 0);
}
// List pages by depth (test/bench/lists.ts), on the same DynamoDB Local.
const lists = await (await import('./lists')).benchLists((line) => process.stderr.write(`${line}\n`));

// Bundles: the synthesized local stage's own (what deploys), and each function bundled again with
// each other tracer candidate (tracers/candidates.ts); the deployed ones are the project emitter's.
process.stderr.write('bundling');
// The floors: built as the stack builds its bundles, and as esbuild builds one by default.
const minimal = await bundle(resolve('test/bench/minimal-function.ts'));
const minimalDefault = await bundle(resolve('test/bench/minimal-function.ts'), { esbuildDefault: true });
const candidateBundles = new Map<string, Map<string, { file: string; bytes: number }>>();
for (const candidate of TRACER_CANDIDATES) {
  const bundles = new Map<string, { file: string; bytes: number }>();
  for (const [name, fn] of deployed) {
    bundles.set(
      name,
      candidate.module
        ? await bundle(resolve('functions', `${name}.ts`), { alias: candidate.alias, plugins: [tracerSwap(candidate)] })
        : { file: fn.file, bytes: fn.bytes },
    );
  }
  candidateBundles.set(candidate.name, bundles);
  process.stderr.write('.');
}
process.stderr.write('\n');

// Cold starts as a user feels them (cold-start.ts): each deployed bundle imported and invoked once
// in fresh processes against DynamoDB Local, with its template environment, Lambda's runtime
// variables and credentials as Lambda gives them, beside the floors (ping's environment: no table access of their own).
const FLOOR_DEFAULT = 'esbuild default';
const FLOOR_SAME = 'built alike';
const floors: ColdStartFloor[] = [
  {
    name: FLOOR_DEFAULT,
    file: minimalDefault.file,
    environment: { ...deployed.get('ping')!.environment, ...localStore },
  },
  { name: FLOOR_SAME, file: minimal.file, environment: { ...deployed.get('ping')!.environment, ...localStore } },
];
// A delete's first invocation deletes a key of its own, created alone in its 100 ms creation
// window as most keys are: a key that shares its window costs a third call (see
// deleteStoredReservedTagKey). The authorizer's checks a token of the store.
const coldN = 20_000_000;
for (let i = 0; i < COLD_SAMPLES; i++) {
  await sleep(WINDOW_MS - (Date.now() % WINDOW_MS));
  fixture.deletable.push(JSON.parse((await invoke('reserved-tag-keys/create', coldN + 1_000 + i)).body).data.id);
}
const { token } = await createToken({ subject: 'user-bench', grants: { [organization]: 'owner' } });
const authorizerEvent = (sample: number) => ({
  type: 'REQUEST',
  methodArn: 'arn:aws:execute-api:us-east-1:000000000000:bench/local/GET/api/v2/ping',
  headers: { Authorization: `Bearer ${token}` },
  requestContext: { requestId: `bench-cold-${sample}` },
});
process.stderr.write(`cold starts (${COLD_SAMPLES} per bundle, each beside one of each floor)`);
const cold = benchColdStarts({
  subjects: [...deployed]
    .filter(([name]) => name === AUTHORIZER_FUNCTION || scenarios[name])
    .map(([name, fn]) => ({
      name,
      file: fn.file,
      environment: { ...fn.environment, ...localStore },
      event: name === AUTHORIZER_FUNCTION ? authorizerEvent : (sample: number) => eventFor(name, coldN + sample).event,
      expected: name === AUTHORIZER_FUNCTION ? /^Allow$/ : /^2\d\d$/,
    })),
  floors,
  samples: COLD_SAMPLES,
  progress: () => process.stderr.write('.'),
});
process.stderr.write('\n');
const extras: ExtraFigure[] = [];
for (const extra of EXTRA_MEASUREMENTS) {
  const fn = deployed.get(extra.function)!;
  extras.push(
    ...(await extra.measure({
      file: fn.file,
      bytes: fn.bytes,
      environment: { ...fn.environment, ...localStore },
      floors,
      samples: COLD_SAMPLES,
      coldStart: coldStartCost,
    })),
  );
}

// Warm cost of each tracer in a Lambda-like sandbox, sampled and unsampled, on the same DynamoDB Local.
process.stderr.write(
  `tracers, warm in a Lambda-like sandbox (${WARM_ITERATIONS} invocations per tracer, function and mode)\n`,
);
let warmN = 10_000_000;
const warmRows: WarmRow[] = await benchTracersWarm({
  candidates: TRACER_CANDIDATES.map((candidate) => ({
    name: candidate.name,
    ...(candidate.floor ? { floor: true as const } : {}),
    bundles: new Map([...candidateBundles.get(candidate.name)!].map(([name, b]) => [name, b.file])),
  })),
  functions: WARM_FUNCTIONS.map((name) => ({
    name,
    environment: { ...deployed.get(name)!.environment, TABLE_NAME: 'bench' },
    events: (count: number) => Array.from({ length: count }, () => eventFor(name, warmN++).event),
  })),
  environment: {
    PATH: process.env.PATH ?? '',
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
  },
  iterations: WARM_ITERATIONS,
  log: (line) => process.stderr.write(`${line}\n`),
});
await dynamo.stop();

// The tracers' module initialization, each bundle with exactly its template environment plus
// Lambda's runtime variables. Each import is paired with an import of the floor built alike right
// beside it (in turn before and after), and a ratio is the median of the pairs' ratios: a shared
// machine's load moves within a run, and a pair sees the same load.
process.stderr.write("timing each tracer's module initialization");
// The floor runs with the same environment as the deployed functions (ping's), so the ratio is fair.
const minimalEnvironment = deployed.get('ping')!.environment;
const sampleKey = (candidate: string, name: string) => `${candidate}\0${name}`;
const samples = new Map<string, Array<{ cost: InitCost; floor: InitCost }>>();
for (let i = 0; i < INIT_SAMPLES; i++) {
  for (const candidate of TRACER_CANDIDATES) {
    for (const [name, fn] of deployed) {
      const file = candidateBundles.get(candidate.name)!.get(name)!.file;
      const [floor, cost] =
        i % 2 === 0
          ? [initCost(minimal.file, minimalEnvironment), initCost(file, fn.environment)]
          : ([initCost(file, fn.environment), initCost(minimal.file, minimalEnvironment)].reverse() as [
              InitCost,
              InitCost,
            ]);
      const key = sampleKey(candidate.name, name);
      samples.set(key, [...(samples.get(key) ?? []), { cost, floor }]);
    }
  }
  process.stderr.write('.');
}
process.stderr.write('\n');
const nodeOptionsOf = (environment: Record<string, string>) => environment.NODE_OPTIONS ?? '(none)';
const initRow = (name: string, candidate: string) => {
  const pairs = samples.get(sampleKey(candidate, name))!;
  return {
    bundleBytes: candidateBundles.get(candidate)!.get(name)!.bytes,
    initRatio: median(pairs.map((p) => p.cost.wallMs / p.floor.wallMs)),
    initCpuRatio: median(pairs.map((p) => p.cost.cpuMs / p.floor.cpuMs)),
  };
};
const nodeOptions = [...new Set([...deployed.values()].map((fn) => nodeOptionsOf(fn.environment)))].join(', ');

printWarm();
const unscenarioed = [...deployed.keys()].filter((name) => name !== AUTHORIZER_FUNCTION && !scenarios[name]);
if (unscenarioed.length > 0)
  console.log(
    `(no request in test/load/scenarios.ts, so no warm figures and no cold start, only init with the tracers: ${unscenarioed.join(', ')})`,
  );

console.log(
  `\nCold start as a user feels it: each bundle imported, then invoked once, in a fresh process with its deployed environment (NODE_OPTIONS: ${nodeOptions}) against DynamoDB Local; median of ${COLD_SAMPLES} processes per bundle, each beside one process of each floor (a bundle that creates the document client and makes one GetItem); ratios are medians of the ratios to the neighbouring floor, elapsed / CPU; "esbuild default": the floor with esbuild's ESM output as it is, "built alike": with the stack's own bundling (infra/cdk/constructs/bundling.ts)\n`,
);
const ratio = (r: { wall: number; cpu: number }) => `${f(r.wall)} / ${f(r.cpu)}`;
printTable(
  [
    'function',
    'bundle KB',
    'import ms',
    'first call ms',
    'both ms',
    'both CPU ms',
    `× ${FLOOR_DEFAULT}`,
    `× ${FLOOR_SAME}`,
    `import × ${FLOOR_SAME}`,
  ],
  [
    ...cold.rows.map((r) => [
      r.function,
      kb(deployed.get(r.function)!.bytes),
      f(r.initMs, 1),
      f(r.firstMs, 1),
      f(r.coldMs, 1),
      f(r.coldCpuMs, 1),
      ratio(r.cold[FLOOR_DEFAULT]!),
      ratio(r.cold[FLOOR_SAME]!),
      ratio(r.init[FLOOR_SAME]!),
    ]),
    ...cold.floors.map((r) => [
      `(floor, ${r.floor})`,
      kb((r.floor === FLOOR_DEFAULT ? minimalDefault : minimal).bytes),
      f(r.initMs, 1),
      f(r.coldMs - r.initMs, 1),
      f(r.coldMs, 1),
      f(r.coldCpuMs, 1),
      '',
      '',
      '',
    ]),
  ],
);
if (extras.length > 0) {
  console.log('\nMeasurements of one function (test/bench/extras.ts)\n');
  printTable(
    ['function', 'measurement', 'value', 'unit', 'goal'],
    extras.map((e) => [e.function, e.measurement, f(e.value), e.unit, e.goal === undefined ? '' : `≤ ${e.goal}`]),
    2,
  );
}

// The tracers compared: per candidate, over every function's bundle, and warm in the Lambda-like sandbox.
const range = (values: number[], digits: number, format = (v: number) => v.toFixed(digits)) => {
  const [low, high] = [Math.min(...values), Math.max(...values)];
  return format(low) === format(high) ? format(low) : `${format(low)}–${format(high)}`;
};
const warmOf = (candidate: string, mode: string) =>
  warmRows.filter((r) => r.candidate === candidate && r.mode === mode);
const tracers = TRACER_CANDIDATES.map((candidate) => {
  const inits = [...deployed.keys()].map((name) => initRow(name, candidate.name));
  const sampled = warmOf(candidate.name, 'sampled');
  const unsampled = warmOf(candidate.name, 'unsampled');
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  return {
    tracer: candidate.name,
    bundleKb: inits.map((i) => i.bundleBytes / 1024),
    initRatio: inits.map((i) => i.initRatio),
    initCpuRatio: inits.map((i) => i.initCpuRatio),
    sampledMs: mean(sampled.map((r) => r.overheadMs)),
    sampledCpuMs: mean(sampled.map((r) => r.overheadCpuMs)),
    unsampledMs: mean(unsampled.map((r) => r.overheadMs)),
    unsampledCpuMs: mean(unsampled.map((r) => r.overheadCpuMs)),
    datagrams: mean(sampled.map((r) => r.datagramsPerRequest)),
    bytes: mean(sampled.map((r) => r.bytesPerRequest)),
    unsampledDatagrams: mean(unsampled.map((r) => r.datagramsPerRequest)),
  };
});
const signed = (v: number) => `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(2)}`;
console.log(
  `\nTracers (docs/design.md "Tracing"): every function bundled with each; init × the floor built alike (median of ${INIT_SAMPLES} pairs, elapsed and CPU, range over the ${deployed.size} functions); warm overhead per request against no tracing, p50 in a Lambda-like sandbox (${WARM_ITERATIONS} invocations per function and mode; ${WARM_FUNCTIONS.join(', ')}; ms, elapsed / CPU); datagrams and bytes sent per sampled request (none unsampled unless said)\n`,
);
printTable(
  [
    'tracer',
    'bundle KB',
    'init ratio',
    'init CPU ratio',
    'sampled ms',
    'sampled CPU ms',
    'unsampled ms',
    'unsampled CPU ms',
    'datagrams/req',
    'bytes/req',
  ],
  tracers.map((t) => [
    t.tracer,
    range(t.bundleKb, 0),
    range(t.initRatio, 2),
    range(t.initCpuRatio, 2),
    signed(t.sampledMs),
    signed(t.sampledCpuMs),
    signed(t.unsampledMs),
    signed(t.unsampledCpuMs),
    `${t.datagrams.toFixed(2)}${t.unsampledDatagrams > 0 ? ` (${t.unsampledDatagrams.toFixed(2)} unsampled)` : ''}`,
    t.bytes.toFixed(0),
  ]),
);
console.log('\nTracers warm, per function and mode (p50 ms in the Lambda-like sandbox; overhead against no tracing)\n');
printTable(
  ['tracer', 'function', 'mode', 'p50 ms', 'overhead', 'p50 CPU ms', 'overhead CPU', 'datagrams/req', 'bytes/req'],
  warmRows.map((r) => [
    r.candidate,
    r.function,
    r.mode,
    f(r.p50Ms),
    signed(r.overheadMs),
    f(r.p50CpuMs),
    signed(r.overheadCpuMs),
    r.datagramsPerRequest.toFixed(2),
    r.bytesPerRequest.toFixed(0),
  ]),
  3,
);

// Every deployed function judged: warm figures where it has a request, cold start for all.
const figures: Figures[] = cold.rows.map((c) => {
  const warm = rows.find((r) => r.function === c.function);
  return {
    function: c.function,
    roundTrips: warm?.roundTrips ?? 0,
    budget: warm?.budget ?? 1,
    latencyRatio: warm?.latencyRatio ?? null,
    warmCpuOverMs: null,
    ...(warm ? figureOf(warm) : {}),
    initRatio: c.init[FLOOR_SAME]!.wall,
    initCpuRatio: c.init[FLOOR_SAME]!.cpu,
    bundleBytes: deployed.get(c.function)!.bytes,
    coldStartRatio: c.cold[FLOOR_DEFAULT]!.wall,
    coldStartCpuRatio: c.cold[FLOOR_DEFAULT]!.cpu,
  };
});
const missed = missedGoals(figures, GOALS, undefined, extras);
if (CHECK) console.log(missed.length === 0 ? '\nEvery goal met.' : `\nGoals missed:\n  ${missed.join('\n  ')}`);
else
  console.log(
    `\n(Not judged: npm run bench -- --check compares these figures with the goals and exits 1 when one is missed.)`,
  );
console.log(`\n${lists.table}`);
mkdirSync('reports', { recursive: true });
const file = join('reports', `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(
  file,
  JSON.stringify(
    {
      machine: {
        cpus: cpus().length,
        model: cpus()[0]?.model,
        node: process.version,
        loadAverage: { start: startLoad, end: loadavg()[0] },
      },
      iterations: ITERATIONS,
      warmMode: WARM_MODE,
      warmRounds: WARM_ROUNDS,
      cpuRuns: CPU_RUNS,
      coldSamples: COLD_SAMPLES,
      goals: GOALS,
      writeUnitGoals: WRITE_UNIT_GOALS,
      nodeOptions,
      floors: cold.floors.map((r) => ({ ...r, bytes: (r.floor === FLOOR_DEFAULT ? minimalDefault : minimal).bytes })),
      rows,
      coldStarts: cold.rows,
      figures,
      extras,
      tracers,
      tracersWarm: warmRows,
      lists: lists.rows,
      ...(CHECK ? { missed } : {}),
    },
    null,
    2,
  ),
);
console.log(`Report: ${file}`);
console.log(
  `(${metricLines} metric lines the handlers wrote in EMF to stdout, as in Lambda, were counted and not shown)`,
);
if (CHECK && missed.length > 0) process.exit(1);
