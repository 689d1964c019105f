// First: the run's temp files (the local stack's data folder) go to the project's .tmp/, removed on exit.
import '../support/scratch-temp';
import autocannon from 'autocannon';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { functionNames } from '#shared/routes';
import { randomAlphanumeric } from '#shared/ids';
import { bodyText, scenarios, type Fixture } from './scenarios';
import { RATE_LIMIT_PER_SECOND } from '#shared/config';
import { CLIENT_IP_LIMIT_PER_SECOND, RATE_WINDOW_SECONDS } from '#infra/cdk/constructs/waf';
import {
  anyToken,
  apiPath,
  apiUrlOf,
  call,
  cleanUp,
  fillDeletable,
  prepareFixture,
  startLocalTarget,
  type Target,
} from './target';

/** Under the per-address limit, with room for set-up and clean-up in the same window. */
const DEFAULT_RATE = 50;
import {
  breachesOf,
  html,
  latencySource,
  loadAverage,
  missedRate,
  missedRateLine,
  percentile,
  percentilesOf,
  runHeader,
  samplesNeeded,
  table,
  throughputOf,
  type FunctionResult,
} from './report';

/**
 * `npm run load [-- FUNCTION…] [--target URL --token T --org ORG --run RUN_ID]`
 * One autocannon run per function of the route table, against a local stack started for the run or
 * a deployed stage. Prints a table, writes JSON and HTML reports, exits 1 when a threshold breaks.
 */
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    target: { type: 'string' },
    token: { type: 'string', multiple: true },
    org: { type: 'string' },
    run: { type: 'string', multiple: true },
    'notification-secret': { type: 'string' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '16' },
    rate: { type: 'string', default: String(DEFAULT_RATE) },
    'max-p50': { type: 'string' },
    'max-p90': { type: 'string' },
    'max-p99': { type: 'string' },
    'max-error-rate': { type: 'string' },
    'report-dir': { type: 'string', default: 'reports' },
    help: { type: 'boolean' },
  },
});

const USAGE = `Usage: npm run load -- [FUNCTION…] [--duration S] [--connections N] [--rate REQ_PER_S]
       [--max-p50 MS] [--max-p90 MS] [--max-p99 MS] [--max-error-rate FRACTION] [--report-dir DIR]
       [--target TFE_ADDRESS (with or without /api/v2) --token TOKEN [--token TOKEN…] --org ORG --run RUN_ID [--run RUN_ID…] [--notification-secret S]]
Functions: ${functionNames().join(', ')}
The stage's WAF allows ${RATE_LIMIT_PER_SECOND} req/s per token and ${CLIENT_IP_LIMIT_PER_SECOND} req/s per client address (over a
${RATE_WINDOW_SECONDS} s window): connections take the tokens in turn, and --rate (default ${DEFAULT_RATE}) stays under both.
Comments are created on the --run ids in turn (a local stack registers one per connection): a run's
comments are numbered as written, so creates on one run take turns.
Against a --target, run-notifications/receive needs the organization's --notification-secret
(npm run admin -- notifications create|rotate); without it, that function is left out.
A --max-pN gate judges pN only where the report can show it (at least 10 samples beyond it: p50
needs 20, p90 100, p99 1,000 per function): a run too short for it is refused before it starts,
and a function that answered too few is a breach. A function under 90% of --rate is flagged.`;
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

const duration = Number(values.duration);
const connections = Number(values.connections);
const rate = Number(values.rate);
/** The latency gates: pN at most this many ms. */
const gates = ([50, 90, 99] as const).flatMap((p) => {
  const raw = values[`max-p${p}`];
  return raw === undefined ? [] : [{ percentile: p, ms: Number(raw) }];
});
const maxErrorRate = values['max-error-rate'] === undefined ? undefined : Number(values['max-error-rate']);
if (gates.some((g) => !(g.ms >= 0)) || (maxErrorRate !== undefined && !(maxErrorRate >= 0))) {
  console.error(`--max-pN takes milliseconds and --max-error-rate a fraction, each 0 or more\n${USAGE}`);
  process.exit(2);
}
const NOTIFICATIONS = 'run-notifications/receive';
/** Signed notifications need the organization's secret: a local stack makes one, a deployed stage must be given it. */
const canSign = !values.target || values['notification-secret'] !== undefined;
const selected =
  positionals.length > 0 ? positionals : functionNames().filter((name) => canSign || name !== NOTIFICATIONS);
if (!canSign && selected.includes(NOTIFICATIONS)) {
  console.error(`${NOTIFICATIONS} against a --target needs --notification-secret\n${USAGE}`);
  process.exit(2);
}
const unknown = selected.filter((name) => !scenarios[name] || !functionNames().includes(name));
if (unknown.length > 0 || [duration, connections, rate].some((n) => !(n > 0))) {
  console.error(`${unknown.length > 0 ? `Unknown function: ${unknown.join(', ')}\n` : ''}${USAGE}`);
  process.exit(2);
}

/**
 * Each function answers at most --rate × --duration requests: a gate on a percentile that many
 * cannot show is refused now, with the duration that would, rather than judged on a handful.
 * (The delete pool is sized to the gates instead: its run ends when the pool is used up.)
 */
const needed = Math.max(0, ...gates.map((g) => samplesNeeded(g.percentile)));
const strictest = gates.find((g) => samplesNeeded(g.percentile) === needed);
if (strictest && rate * duration < needed) {
  const enough = Math.ceil((needed * 1.1) / rate);
  console.error(
    `--max-p${strictest.percentile} needs at least ${needed.toLocaleString('en')} latency samples per function for p${strictest.percentile} ` +
      `to be shown and judged, and --duration ${duration} at --rate ${rate} gives at most ${(rate * duration).toLocaleString('en')}: ` +
      `run for --duration ${enough} or more.`,
  );
  process.exit(2);
}

// Before the local stack starts: what else loaded the machine, not our own start.
const loadBefore = loadAverage();
let target: Target;
if (values.target) {
  if (!values.token || !values.org || !values.run) {
    console.error(`--target needs --token, --org and --run\n${USAGE}`);
    process.exit(2);
  }
  target = {
    apiUrl: apiUrlOf(values.target),
    tokens: values.token,
    organization: values.org,
    runId: values.run[0]!,
    commentRunIds: values.run,
    notificationSecret: values['notification-secret'],
    stop: async () => {},
  };
} else {
  console.error('Starting the local stack (npm start in a child process)…');
  target = await startLocalTarget(connections);
}
console.error(`Latencies are ${latencySource(values.target)}.`);

const unique = randomAlphanumeric(6).toLowerCase();
const created: string[] = [];
/** Keys the create scenario made: the delete scenario's pool, or cleaned up at the end. */
const createdByRun: string[] = [];
const results: FunctionResult[] = [];
let fixture: Fixture | undefined;
try {
  fixture = await prepareFixture(target, unique, connections);
  created.push(...fixture.keyIds);
  for (const name of selected) {
    const scenario = scenarios[name]!;
    if (scenario.consumesDeletable)
      await fillDeletable(target, fixture, unique, Math.max(connections * 20, Math.ceil(needed * 1.1)));
    console.error(
      `▶ ${name}: ${connections} connections, ${duration} s, ${rate} req/s${scenario.consumesDeletable ? `, at most ${fixture.deletable.length} deletes` : ''}`,
    );
    await warmUp(name, fixture);
    results.push(await load(name, fixture));
    if (name === 'reserved-tag-keys/create') fixture.deletable.push(...createdByRun.splice(0));
  }
} finally {
  const leftovers = [...created, ...(fixture?.deletable ?? []), ...createdByRun];
  if (leftovers.length > 0)
    console.error(`Cleaning up: deleted ${await cleanUp(target, leftovers)} keys created by this run.`);
  await target.stop();
}

/**
 * One request per connection that reaches the function and changes nothing (a body the function
 * refuses, an id that does not exist), so each connection meets a warm instance: the run measures
 * steady state; cold starts are the bench's subject.
 */
async function warmUp(name: string, f: Fixture): Promise<void> {
  const scenario = scenarios[name]!;
  const probe = scenario.consumesDeletable
    ? { method: 'DELETE' as const, path: '/reserved-tags/rtk-0000000000000000' }
    : scenario.request(f, 0, unique);
  const harmless = probe.method === 'POST' || probe.method === 'PATCH' ? { ...probe, body: {} } : probe;
  await Promise.all(Array.from({ length: connections }, () => call(target, harmless)));
}

async function load(name: string, f: Fixture): Promise<FunctionResult> {
  const scenario = scenarios[name]!;
  let n = 0;
  const timeline: FunctionResult['timeline'] = [];
  let startedAt = 0;
  let finish!: (result: autocannon.Result) => void;
  const finished = new Promise<autocannon.Result>((resolve) => {
    finish = resolve;
  });
  const instance = autocannon(
    {
      url: new URL(target.apiUrl).origin,
      connections,
      duration,
      overallRate: rate,
      ...(scenario.consumesDeletable ? { amount: f.deletable.length } : {}),
      headers: { 'content-type': 'application/vnd.api+json' },
      // autocannon gives each connection its own copy of the context: one token per connection.
      initialContext: {},
      requests: [
        {
          setupRequest: (request, context: { token?: string }) => {
            context.token ??= anyToken(target);
            const next = scenario.request(f, n++, unique);
            return {
              ...request,
              method: next.method,
              path: apiPath(target, next.path),
              body: bodyText(next),
              headers: { ...request.headers, authorization: `Bearer ${context.token}`, ...next.headers },
            };
          },
          onResponse: (status, body) => {
            if (name === 'reserved-tag-keys/create' && status === 201) createdByRun.push(JSON.parse(body).data.id);
          },
        },
      ],
    },
    (error, result) => {
      if (error) throw error;
      finish(result);
    },
  );
  startedAt = performance.now();
  // Every answer as it comes, with autocannon's own measure of its latency (ms, from the request written to the response read).
  instance.on('response', (_client: unknown, status: number, _bytes: number, latencyMs: number) => {
    timeline.push([Math.round(performance.now() - startedAt), Number(latencyMs.toFixed(3)), status]);
  });
  autocannon.track(instance, {
    renderProgressBar: process.stderr.isTTY,
    renderResultsTable: false,
    renderLatencyTable: false,
  });
  const result = await finished;
  // Percentiles of the 2xx answers' latencies themselves, not of autocannon's histogram (see percentilesOf).
  const latencies = timeline.filter(([, , status]) => status >= 200 && status < 300).map(([, ms]) => ms);
  const percentiles = percentilesOf(latencies);
  const partial: FunctionResult = {
    function: name,
    requests: result.requests.total,
    seconds: result.duration,
    throughput: throughputOf(result.requests.total, result.duration),
    samples: latencies.length,
    p50: Number.NaN,
    p90: Number.NaN,
    p99: Number.NaN,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    percentiles,
    targetRate: rate,
    timeline,
  };
  return { ...partial, p50: percentile(partial, 50), p90: percentile(partial, 90), p99: percentile(partial, 99) };
}

console.log(table(results));
console.log(`Latencies: ${latencySource(values.target)}.`);
const reportDir = resolve(values['report-dir']!);
mkdirSync(reportDir, { recursive: true });
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const meta = runHeader(
  {
    target: values.target ?? 'local (npm start)',
    latencies: latencySource(values.target),
    functions: selected.join(', '),
    connections,
    duration: `${duration} s per function`,
    'target rate': `${rate} req/s`,
    ...Object.fromEntries(gates.map((g) => [`max p${g.percentile}`, `${g.ms} ms`])),
    ...(maxErrorRate === undefined ? {} : { 'max error rate': maxErrorRate }),
  },
  loadBefore,
);
const jsonFile = join(reportDir, `load-${stamp}.json`);
const htmlFile = join(reportDir, `load-${stamp}.html`);
writeFileSync(
  jsonFile,
  JSON.stringify({
    ...meta,
    results: results.map(({ percentiles: _p, timeline, ...r }) => ({
      ...r,
      belowTargetRate: missedRate({ ...r, percentiles: _p, timeline }),
      percentiles: Object.fromEntries(_p),
      timeline,
    })),
  }),
);
writeFileSync(htmlFile, html(results, meta));
console.log(`\nReports: ${jsonFile}\n         ${htmlFile}`);

const missed = results.filter(missedRate);
if (missed.length > 0) console.error(`\n! ${missedRateLine(missed)}.`);

const breaches = breachesOf(results, gates, maxErrorRate);
if (breaches.length > 0) {
  console.error(`\nThresholds breached:\n  ${breaches.join('\n  ')}`);
  process.exitCode = 1;
}
