import { API_BASE_PATH } from '#shared/config';
import { ensureAssembly, ensureTemplate } from './assembly';
import { ensureTable, startDynamoDbLocal, useLocalEndpoint } from './aws/dynamodb-local';
import { portInUse } from './ports';
import {
  lambdaNiceness,
  localSettings,
  REPLICATED_WRITE_CONFLICT_RATE_ENV,
  replicatedWriteConflictRate,
  SCHEDULE_SECONDS_ENV,
  scheduleEveryMs,
  SEED_TOKEN_FILE,
} from './settings';
import { removeStackRecord, runningStack, writeStackRecord } from './stack-record';
import type { Seed } from './seed';
import { localIssuerKeys, startOidcIssuer } from './oidc-issuer';
import { LOOPBACK_ISSUERS_ENV } from '#shared/workload-identity/issuer-keys';
import { localRegionNames, REGIONS_ENV } from './regions';
import { healthCheckSettings } from './front-router';

/**
 * `npm start`: the `local` stage's cloud assembly (synthesized when its sources changed) served by
 * the local emulator of WAF, API Gateway, Lambda and IAM over DynamoDB Local in DATA_DIR, with the
 * seed's token and run created unless they exist. Ctrl-C stops it all.
 * `npm run dev` (`--dev`): the inner loop: the same front, WAF and API Gateway on the local stage's
 * template (synthesized without bundles, so a handler's edit needs no synthesis), each function's
 * TypeScript handler in this process; no IAM proxy, X-Ray or schedules.
 */
const USAGE = `Usage: npm start      serve the synthesized local stage (npm run dev: its handlers' TypeScript in-process)
Environment: PORT (3000) the API on 127.0.0.1, DDB_PORT (8000) DynamoDB Local, DATA_DIR (.data) its files,
             TABLE_NAME (tfc-tags-comments-local) the local table, ISSUER_PORT (3001) the local OpenID
             issuer whose tokens trusts can accept (npm run admin -- issuer token mints them).
             TRACES=print prints each request's X-Ray trace (functions, DynamoDB calls) after it;
             TRACES=<folder> saves each as <folder>/<trace id>.json. Off by default.
             LOCAL_REPLICATED_WRITE_CONFLICT_RATE (0: off) from 0 to 1: the share of the functions' writes
             refused, unapplied, with ReplicatedWriteConflictException, as an MRSC global table may (npm start only).
             LOCAL_SCHEDULE_SECONDS (off) runs the template's schedules every N seconds instead of their rate:
             the sweeper of expired items runs every 15 minutes otherwise (npm start only).
             LOCAL_LAMBDA_NICENESS (10) from 0 to 19: the function instances' niceness, so that DynamoDB Local
             and the emulator answer first however many instances start, as AWS's services do (0: an even share).
             REGIONS (off) e.g. us-east-1,us-east-2: one local API per Region over the one DynamoDB Local, and a
             health-checked front on PORT that routes to the first healthy Region; HEALTH_CHECK_INTERVAL_SECONDS (2)
             and HEALTH_CHECK_FAILURE_THRESHOLD (3) set its checks. npm run admin -- region fail|recover REGION.
Logs: one access line per request, and each function's log lines labelled with its route. The functions'
             EMF metric lines (what CloudWatch turns into metrics) are hidden: npm start -- --metrics,
             or LOG_METRICS=1, prints them too.
Refuses to start when PORT, DDB_PORT or ISSUER_PORT is taken, or when another npm start serves DATA_DIR.`;
if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(USAGE);
  process.exit(0);
}

const started = performance.now();
const settings = localSettings();
const dev = process.argv.includes('--dev');
const showMetrics = process.argv.includes('--metrics') || ['1', 'true'].includes(process.env.LOG_METRICS ?? '');
if (dev) process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
// The in-process authorizer trusts the local issuer as the local stage's does (infra/cdk/stack.ts).
if (dev) process.env[LOOPBACK_ISSUERS_ENV] = 'allowed';
// The in-process handlers print to this process's stdout: their metrics are off unless asked for.
if (dev && !showMetrics) process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
const refuse = (line: string): never => {
  console.error(`${dev ? 'npm run dev' : 'npm start'}: ${line}`);
  process.exit(1);
};

/** A setting read from the environment; a bad one stops the start in one line, before anything is started. */
function setting<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    return refuse((error as Error).message);
  }
}

const conflictRate = setting(() => replicatedWriteConflictRate());
const regionNames = setting(() => localRegionNames());
if (regionNames && dev) refuse(`${REGIONS_ENV} is for npm start: npm run dev serves one in-process stack`);
const healthCheck = setting(() => (regionNames ? healthCheckSettings() : undefined));
const scheduleEvery = setting(() => scheduleEveryMs());
// Read by the local Lambda itself (infra/local/aws/lambda.ts); checked here, before the start.
setting(() => lambdaNiceness());

/** Never serve, or write to, a port or a data folder this start did not take itself. */
async function refuseWhatIsTaken(): Promise<void> {
  const other = runningStack(settings.dataDir);
  if (other)
    refuse(
      `another npm start (pid ${other.pid}, ${other.apiUrl}) already serves ${settings.dataDir}; stop it first, or give this one its own DATA_DIR.`,
    );
  if (await portInUse(settings.port)) {
    refuse(
      `PORT ${settings.port} (127.0.0.1:${settings.port}) is already in use by a process this start did not start; stop it, or choose a free port: PORT=<port> npm start`,
    );
  }
  if (await portInUse(settings.issuerPort)) {
    refuse(
      `ISSUER_PORT ${settings.issuerPort} (127.0.0.1:${settings.issuerPort}, for the local OpenID issuer) is already in use by a process this start did not start; stop it, or choose a free port: ISSUER_PORT=<port> npm start`,
    );
  }
  if (await portInUse(settings.ddbPort)) {
    refuse(
      `DDB_PORT ${settings.ddbPort} (127.0.0.1:${settings.ddbPort}, for DynamoDB Local) is already in use by a process this start did not start; stop it, or choose a free port: DDB_PORT=<port> npm start`,
    );
  }
}

await refuseWhatIsTaken();
const assembly = await (dev ? ensureTemplate : ensureAssembly)((line) => console.log(line)).catch((error: Error) =>
  refuse(error.message),
);
// The synthesis can take a while: look again right before taking the ports.
await refuseWhatIsTaken();
const dynamo = await startDynamoDbLocal({ port: settings.ddbPort, dataDir: settings.dataDir }).catch((error: Error) =>
  refuse(error.message),
);
// The seed below writes as the operator does: straight to DynamoDB Local, not through a function.
useLocalEndpoint(dynamo.endpoint);
process.env.TABLE_NAME = settings.tableName;
await ensureTable(dynamo.endpoint, settings.tableName);

const { ensureSeed } = await import('./seed');
const seed = await ensureSeed(settings.dataDir);
// Workload identity with no external issuer: trusts name this address, its keys stay in DATA_DIR.
const issuerKeys = await localIssuerKeys(settings.dataDir);
const issuer = await startOidcIssuer({ port: settings.issuerPort, published: () => issuerKeys }).catch(
  async (error: Error) => {
    await dynamo.stop();
    return refuse(`could not serve the local OpenID issuer on 127.0.0.1:${settings.issuerPort}: ${error.message}`);
  },
);
/** One line per invocation a schedule made, as the access line of a request: `SCHEDULE rate(15 minutes) SweeperFunction… ok 120.0ms`. */
const onScheduledRun = ({
  expression,
  function: fn,
  attempt,
  ok,
  error,
  ms,
}: import('./aws/eventbridge').ScheduledRun) =>
  console.log(
    `SCHEDULE ${expression} ${fn}${attempt > 1 ? ` (retry ${attempt - 1})` : ''} ${ok ? 'ok' : `failed ${error?.errorType}: ${error?.errorMessage}`} ${ms.toFixed(1)}ms`,
  );
const accessLine = ({
  method,
  path,
  status,
  ms,
  errorType,
}: {
  method: string;
  path: string;
  status: number;
  ms: number;
  errorType?: string;
}) => `${method} ${path} ${status}${errorType ? ` ${errorType}` : ''} ${ms.toFixed(1)}ms`;
const onRequest = (entry: Parameters<typeof accessLine>[0]) => console.log(accessLine(entry));
// Imported only now: the handlers' SDK client (in-process in dev mode) must see the local endpoint.
const gateway = await (regionNames && !dev
  ? (await import('./multi-region')).startMultiRegion({
      port: settings.port,
      names: regionNames,
      healthCheck: healthCheck!,
      onHealthChange: (line) => console.log(line),
      stack: {
        assembly,
        dynamoDbEndpoint: dynamo.endpoint,
        tableName: settings.tableName,
        showMetrics,
        ...(await traceOutput()),
        onScheduledRun,
        ...(scheduleEvery === undefined ? {} : { scheduleEveryMs: scheduleEvery }),
      },
      onRequest: (region, entry) => console.log(`[${region}] ${accessLine(entry)}`),
    })
  : !dev
    ? (await import('./local-stack')).startLocalStack({
        port: settings.port,
        assembly,
        dynamoDbEndpoint: dynamo.endpoint,
        tableName: settings.tableName,
        onRequest,
        showMetrics,
        ...(await traceOutput()),
        onScheduledRun,
        ...(scheduleEvery === undefined ? {} : { scheduleEveryMs: scheduleEvery }),
      })
    : (await import('./local-stack')).startInProcessStack({
        port: settings.port,
        assembly,
        tableName: settings.tableName,
        onRequest,
      })
).catch(async (error: Error) => {
  await dynamo.stop();
  return refuse(error.message);
});

const base = `${gateway.url}${API_BASE_PATH}`;
const multi = 'controlUrl' in gateway ? (gateway as import('./multi-region').MultiRegion) : undefined;
writeStackRecord(settings.dataDir, {
  pid: process.pid,
  port: settings.port,
  ddbPort: dynamo.port,
  tableName: settings.tableName,
  apiUrl: base,
  issuerUrl: issuer.url,
  ...(multi
    ? {
        controlUrl: multi.controlUrl,
        regions: multi.regions.regions.map((r) => ({ name: r.name, apiUrl: `${r.url}${API_BASE_PATH}` })),
      }
    : {}),
});
process.once('exit', () => removeStackRecord(settings.dataDir));
const unevaluated: string[] = 'unevaluatedRuleGroups' in gateway ? (gateway.unevaluatedRuleGroups as string[]) : [];
if (unevaluated.length > 0)
  console.log(`WAF managed rule groups passed through unevaluated: ${unevaluated.join(', ')}`);
console.log(
  [
    `API ready in ${((performance.now() - started) / 1000).toFixed(1)} s at ${base}`,
    dev
      ? `Dev mode: the ${assembly.synthesized ? 'newly synthesized' : 'unchanged'} template of the local stage (${assembly.directory}), ` +
        'its TypeScript handlers in this process (no IAM proxy, X-Ray or schedules); npm start serves what deploys'
      : `Serving the ${assembly.synthesized ? 'newly synthesized' : 'unchanged'} cloud assembly of the local stage (${assembly.directory})`,
    ...(multi ? multi.lines() : []),
    `DynamoDB Local on ${dynamo.endpoint} (table ${settings.tableName}, data in ${settings.dataDir})`,
    `OpenID issuer on ${issuer.url} (workload identity: npm run admin -- trust create, issuer token; docs/operating.md)`,
    ...conflictLines(),
    ...scheduleLines(),
    ...seedLines(seed),
    // As the README's: -i shows a bodiless answer's status; -w '\n' ends a JSON answer with a new line.
    'Try:',
    `  curl -i $API/ping`,
    `  curl -s -w '\\n' -H "Authorization: Bearer $TOKEN" $API/organizations/${seed.organization}/reserved-tag-keys`,
    `  curl -s -w '\\n' -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/vnd.api+json" \\`,
    `    -d '{"data":{"type":"comments","attributes":{"body":"Looks good"}}}' $API/runs/$RUN/comments`,
    'Ctrl-C stops the API and DynamoDB Local.',
  ].join('\n'),
);

/** LOCAL_REPLICATED_WRITE_CONFLICT_RATE, when set: what it does, or that npm run dev has no proxy to do it. */
function conflictLines(): string[] {
  if (conflictRate === 0) return [];
  if (dev)
    return [
      `${REPLICATED_WRITE_CONFLICT_RATE_ENV}=${conflictRate} is ignored: npm run dev has no IAM proxy in front of DynamoDB Local (npm start has)`,
    ];
  return [
    `Replicated write conflicts ON (${REPLICATED_WRITE_CONFLICT_RATE_ENV}=${conflictRate}): about ${+(conflictRate * 100).toFixed(2)}% of the functions' writes (PutItem, UpdateItem, DeleteItem, BatchWriteItem) are refused, unapplied, with ReplicatedWriteConflictException, as an MRSC global table may`,
  ];
}

/** The template's schedules and when they run (npm run dev runs none: it has no EventBridge). */
function scheduleLines(): string[] {
  const { schedules } = gateway as Partial<import('./local-stack').LocalStack>;
  if (!schedules)
    return scheduleEvery === undefined
      ? []
      : [`${SCHEDULE_SECONDS_ENV} is ignored: npm run dev runs no schedules (npm start does)`];
  return schedules.rules
    .filter((rule) => rule.enabled)
    .map((rule) => {
      const when =
        scheduleEvery === undefined
          ? rule.expression
          : `every ${scheduleEvery / 1000} s (${SCHEDULE_SECONDS_ENV}; ${rule.expression} deployed)`;
      return `Scheduled: ${rule.targets.map((t) => t.function).join(', ')} ${when}, a SCHEDULE line each run`;
    });
}

/** TRACES=print: each trace printed as a tree; TRACES=<folder>: each saved as JSON there. */
async function traceOutput() {
  const target = process.env.TRACES;
  if (!target) return {};
  const { formatTrace } = await import('./aws/xray');
  if (target === 'print')
    return { onTrace: (id: string, segments: Array<Record<string, any>>) => console.log(formatTrace(id, segments)) };
  const { mkdirSync, writeFileSync } = await import('node:fs');
  const { join, resolve } = await import('node:path');
  mkdirSync(target, { recursive: true });
  return {
    onTrace: (id: string, segments: Array<Record<string, any>>) => {
      const file = join(resolve(target), `${id}.json`);
      writeFileSync(file, `${JSON.stringify(segments, null, 2)}\n`);
      console.log(`trace ${id} saved to ${file}`);
    },
  };
}

/** Exactly what the seed did, and the shell line that sets API, TOKEN, RUN and ISSUER: the same on every start over this folder. */
function seedLines(s: Seed): string[] {
  const run = s.runCreated ? `registered its run ${s.runId}` : `its run ${s.runId} exists`;
  const token = !s.tokenCreated
    ? `its owner token ${s.tokenId} exists`
    : s.replaced
      ? `created a new owner token ${s.tokenId} (its token ${s.replaced.tokenId} ${s.replaced.why === 'not kept' ? 'has no secret kept in the data folder' : `is ${s.replaced.why}`})`
      : `created its owner token ${s.tokenId}`;
  return [
    `Seed of ${s.organization}: ${token} and ${run}.`,
    `Paste this line into the shell where you try the API (another terminal, in this directory for npm run admin; every start over ${settings.dataDir} prints the same token, kept in its ${SEED_TOKEN_FILE} file):`,
    `  export API=${base} TOKEN=${s.token} RUN=${s.runId} ISSUER=${issuer.url}`,
  ];
}

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping`);
  // Several Regions' stacks stop in turn: should one hang (seen once, after a failover with requests in flight), exit anyway.
  if (multi)
    setTimeout(() => {
      console.log(`${signal}: a Region did not stop within 15 s; exiting (DynamoDB Local's watchdog stops it)`);
      process.exit(1);
    }, 15_000).unref();
  await gateway.close();
  await issuer.close();
  await dynamo.stop();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
