import * as observability from '#shared/observability/metrics';
import { EXPIRY_INDEX, SWEEP_SHARDS } from '#shared/store/expiry';
import { SWEEPER_FUNCTION } from '#shared/sweeper';
import { PRICES, REQUEST_TYPES, USAGE, type Price } from './prices';

/**
 * The bill of a deployed stage, from its synthesized template: what the template creates, counted,
 * times the price table (infra/cost/prices.ts). Fixed monthly costs come from the resources;
 * per-request costs from every service a request crosses (CloudFront, WAF, API Gateway, Lambda,
 * DynamoDB, CloudWatch Logs, X-Ray), each present only if the template has it; the sweeper's
 * schedule is a fixed cost, the expiring items a request writes (the Expiry index, their deletes)
 * a per-request one. A resource type the
 * model does not know stops the computation: a new resource must be priced (or said to be free).
 */
export interface Template {
  Resources: Record<string, { Type: string; Properties?: any }>;
}

export interface FixedLine {
  item: string;
  count: number;
  usd: number;
  atMost?: boolean;
}
export interface RequestLine {
  service: string;
  how: string;
  usd: number[];
}

export interface CostReport {
  fixed: FixedLine[];
  fixedUsd: number;
  /** One column per REQUEST_TYPES entry. */
  perMillion: RequestLine[];
  perMillionUsd: number[];
  /** X-Ray's line when every request is traced (1 request a second or less). */
  xRayAllTracedUsd: number | undefined;
}

/** Resource types with no charge of their own (what they serve is priced through the requests). */
const NO_CHARGE = new Set([
  'AWS::ApiGateway::Account',
  'AWS::ApiGateway::Authorizer',
  'AWS::ApiGateway::BasePathMapping',
  'AWS::ApiGateway::Deployment',
  'AWS::ApiGateway::DomainName',
  'AWS::ApiGateway::GatewayResponse',
  'AWS::ApiGateway::Method',
  'AWS::ApiGateway::Model',
  'AWS::ApiGateway::RequestValidator',
  'AWS::ApiGateway::Resource',
  'AWS::ApiGateway::RestApi',
  'AWS::ApiGateway::Stage',
  'AWS::CDK::Metadata',
  'AWS::CertificateManager::Certificate',
  'AWS::CloudFront::CachePolicy',
  'AWS::CloudFront::Distribution',
  'AWS::CloudFront::Function',
  'AWS::CloudFront::OriginRequestPolicy',
  'AWS::CloudFront::ResponseHeadersPolicy',
  'AWS::CodeDeploy::Application',
  'AWS::CodeDeploy::DeploymentConfig',
  'AWS::CodeDeploy::DeploymentGroup',
  'AWS::DynamoDB::GlobalTable',
  'AWS::DynamoDB::Table',
  // An experiment template costs nothing; a run of it is billed per action-minute (priced on the page, not here).
  'AWS::FIS::ExperimentTemplate',
  'AWS::IAM::ManagedPolicy',
  'AWS::IAM::Policy',
  'AWS::IAM::Role',
  'AWS::Lambda::Alias',
  'AWS::Lambda::EventInvokeConfig',
  'AWS::Lambda::Function',
  'AWS::Lambda::Permission',
  'AWS::Lambda::Version',
  'AWS::Logs::LogGroup',
  'AWS::Route53::RecordSet',
  // A multi-Region stage's fault configurations for the game day: empty but during an experiment. The
  // FIS extension's polls of it (S3 requests per warm execution environment) are not counted here:
  // docs/deploying.md, What each stack creates, says what they add.
  'AWS::S3::Bucket',
  'AWS::S3::BucketPolicy',
  'AWS::SNS::Subscription',
  'AWS::SNS::Topic',
  'AWS::SNS::TopicPolicy',
  'AWS::WAFv2::WebACLAssociation',
]);
const PRICED = new Set([
  'AWS::WAFv2::WebACL',
  'AWS::CloudWatch::Alarm',
  'AWS::CloudWatch::Dashboard',
  'AWS::SecretsManager::Secret',
  'AWS::KMS::Key',
  'AWS::Logs::MetricFilter',
  'AWS::Route53::HealthCheck',
  // A scheduled rule's own events are free (AWS's events); what it runs, the sweeper, is priced by its runs.
  'AWS::Events::Rule',
]);

/** CloudWatch, Lambda and the AWS pricing calculator count 730 hours in a month. */
const HOURS_PER_MONTH = 730;

const GB_PER_MILLION_KB = 1_000_000 / 1_048_576;

export function costOf(template: Template): CostReport {
  const all = Object.entries(template.Resources);
  for (const [id, resource] of all) {
    if (!NO_CHARGE.has(resource.Type) && !PRICED.has(resource.Type)) {
      throw new Error(
        `infra/cost/model.ts: the template creates ${resource.Type} (${id}), which the cost model does not price: add it`,
      );
    }
  }
  const ofType = (type: string) => all.filter(([, r]) => r.Type === type).map(([, r]) => r.Properties ?? {});

  // Fixed, monthly.
  const webAcls = ofType('AWS::WAFv2::WebACL');
  const rules = webAcls.flatMap((acl) => acl.Rules ?? []) as Array<{ Statement: Record<string, unknown> }>;
  const groups = rules.filter(
    (r) => 'ManagedRuleGroupStatement' in r.Statement || 'RuleGroupReferenceStatement' in r.Statement,
  ).length;
  const alarms = ofType('AWS::CloudWatch::Alarm').map(alarmMetrics);
  const standard = alarms.reduce((n, a) => n + a.standard, 0);
  const highResolution = alarms.reduce((n, a) => n + a.highResolution, 0);
  const functions = ofType('AWS::Lambda::Function').filter((f) => f.Environment?.Variables?.POWERTOOLS_SERVICE_NAME);
  const emf = emfMetrics(functions.length);
  const sweeper = sweeperOf(all);
  const filters = ofType('AWS::Logs::MetricFilter').reduce((n, f) => n + (f.MetricTransformations?.length ?? 0), 0);
  const fixed: FixedLine[] = [
    line('WAF web ACL', webAcls.length, PRICES.wafWebAcl),
    line(`WAF rules (${rules.length - groups}) and managed rule groups (${groups})`, rules.length, PRICES.wafRule),
    line(`CloudWatch alarms: ${alarms.length}, reading ${standard} metrics`, standard, PRICES.alarmMetric),
    line(`CloudWatch high-resolution alarm metrics`, highResolution, PRICES.alarmMetricHighResolution),
    line('CloudWatch dashboard', ofType('AWS::CloudWatch::Dashboard').length, PRICES.dashboard),
    {
      ...line(
        `Custom metrics: ${emf} from the functions (EMF), ${filters} from log filters`,
        emf + filters,
        PRICES.customMetric,
      ),
      atMost: true,
    },
    line("KMS key (the alarm topic's)", ofType('AWS::KMS::Key').length, PRICES.kmsKey),
    line(
      "Secrets Manager secret (the front's origin header)",
      ofType('AWS::SecretsManager::Secret').length,
      PRICES.secret,
    ),
    ...(sweeper ? [sweeperRuns(sweeper)] : []),
    ...healthCheckLines(ofType('AWS::Route53::HealthCheck'), functions, webAcls.length),
  ].filter((l) => l.count > 0);

  // Per million requests of each type.
  const perType = (f: (t: (typeof REQUEST_TYPES)[number]) => number) => REQUEST_TYPES.map(f);
  const same = (usd: number) => perType(() => usd);
  const perMillion: RequestLine[] = [];
  const distributions = ofType('AWS::CloudFront::Distribution');
  if (distributions.length > 0) {
    const functionRuns = distributions.reduce(
      (n, d) => n + (d.DistributionConfig.DefaultCacheBehavior.FunctionAssociations?.length ?? 0),
      0,
    );
    const out = USAGE.responseKB.value * GB_PER_MILLION_KB * PRICES.cloudFrontDataOut.usd;
    const toOrigin = USAGE.requestKB.value * GB_PER_MILLION_KB * PRICES.cloudFrontToOrigin.usd;
    perMillion.push({
      service: 'CloudFront',
      how:
        `requests ${usd(PRICES.cloudFrontRequests.usd)}, viewer function ${usd(functionRuns * PRICES.cloudFrontFunctions.usd)}, ` +
        `${USAGE.responseKB.value} KB out ${usd(out)}, ${USAGE.requestKB.value} KB to the origin ${usd(toOrigin)}`,
      usd: same(PRICES.cloudFrontRequests.usd + functionRuns * PRICES.cloudFrontFunctions.usd + out + toOrigin),
    });
  }
  if (webAcls.length > 0)
    perMillion.push({
      service: 'WAF',
      how: 'every request inspected',
      usd: same(webAcls.length * PRICES.wafRequests.usd),
    });
  if (ofType('AWS::ApiGateway::RestApi').length > 0)
    perMillion.push({ service: 'API Gateway', how: 'REST API requests', usd: same(PRICES.apiGatewayRest.usd) });

  const authorizer = functions.find((f) => String(f.Description ?? '').endsWith('functions/authorizer.ts'));
  const api = functions.filter((f) => f !== authorizer && f !== sweeper?.fn);
  if (api.length > 0) {
    const gb = api.reduce((n, f) => n + (f.MemorySize ?? 128), 0) / api.length / 1024;
    const authorizerGb = (authorizer?.MemorySize ?? 128) / 1024;
    const fn = PRICES.lambdaRequests.usd + (USAGE.functionBilledMs.value / 1000) * gb * gbSecond(api[0]);
    const auth = authorizer
      ? USAGE.authorizerRunsPerRequest.value *
        (PRICES.lambdaRequests.usd + (USAGE.authorizerBilledMs.value / 1000) * authorizerGb * gbSecond(authorizer))
      : 0;
    perMillion.push({
      service: 'Lambda',
      how:
        `the function (${Math.round(gb * 1024)} MB, ${USAGE.functionBilledMs.value} ms) ${usd(fn)}, ` +
        `the authorizer on ${USAGE.authorizerRunsPerRequest.value * 100}% of requests ${usd(auth)}`,
      usd: same(fn + auth),
    });
  }
  const tables = [...ofType('AWS::DynamoDB::GlobalTable'), ...ofType('AWS::DynamoDB::Table')];
  const expiryIndex = tables
    .flatMap((t) => (t.GlobalSecondaryIndexes ?? []) as Array<{ IndexName: string }>)
    .some((i) => i.IndexName === EXPIRY_INDEX);
  if (tables.length > 0 || api.length > 0) {
    const authorizerReads = authorizer ? USAGE.authorizerRunsPerRequest.value : 0;
    perMillion.push({
      service: 'DynamoDB',
      how: `on-demand: ${REQUEST_TYPES.map(
        (t) =>
          `${t.name.toLowerCase()} ${t.readUnits ? `${t.readUnits} read` : `${t.writeUnits} write`} units` +
          `${t.expiringItems && expiryIndex ? ` on the table (${t.writeUnits + t.expiringItems} with the Expiry index's entry, priced below)` : ''}`,
      ).join(', ')}, and 1 read unit per authorizer run`,
      usd: perType(
        (t) => (t.readUnits + authorizerReads) * PRICES.dynamoDbReads.usd + t.writeUnits * PRICES.dynamoDbWrites.usd,
      ),
    });
  }
  if (expiryIndex) {
    const item = expiringItemPerMillion(sweeper);
    perMillion.push({ service: 'Expiring items', how: item.how, usd: perType((t) => t.expiringItems * item.usd) });
  }
  if (ofType('AWS::Logs::LogGroup').length > 0) {
    perMillion.push({
      service: 'CloudWatch Logs',
      how: `${USAGE.logKB.value} KB ingested per request`,
      usd: same(USAGE.logKB.value * GB_PER_MILLION_KB * PRICES.logsIngestion.usd),
    });
  }
  const traced =
    ofType('AWS::ApiGateway::Stage').some((s) => s.TracingEnabled) ||
    functions.some((f) => f.TracingConfig?.Mode === 'Active');
  let xRayAllTracedUsd: number | undefined;
  if (traced) {
    const rate = USAGE.requestsPerSecond.value;
    const fraction = (1 + 0.05 * (rate - 1)) / rate;
    xRayAllTracedUsd = PRICES.xRayTraces.usd;
    perMillion.push({
      service: 'X-Ray',
      how:
        `${Math.round(fraction * 1000) / 10}% of requests traced at ${rate} requests a second; ` +
        `all of them, ${usd(xRayAllTracedUsd)}, at 1 a second or less`,
      usd: same(fraction * PRICES.xRayTraces.usd),
    });
  }
  const fixedUsd = round(fixed.reduce((n, l) => n + l.usd, 0));
  const perMillionUsd = REQUEST_TYPES.map((_, i) => round(perMillion.reduce((n, l) => n + l.usd[i]!, 0)));
  return { fixed, fixedUsd, perMillion, perMillionUsd, xRayAllTracedUsd };
}

/** Per million GB-seconds of the function's architecture (Lambda bills per 1 ms). */
const gbSecond = (f: any) =>
  (f?.Architectures?.[0] === 'arm64' ? PRICES.lambdaArmGbSecond : PRICES.lambdaX86GbSecond).usd * 1_000_000;
const GB_PER_KB = 1 / 1_048_576;

/** The sweeper (functions/sweeper.ts): its function's properties, and how often its rule runs it a month. */
interface Sweeper {
  fn: any;
  runsPerMonth: number;
  expression: string;
}

function sweeperOf(all: Array<[string, { Type: string; Properties?: any }]>): Sweeper | undefined {
  const found = all.find(
    ([, r]) =>
      r.Type === 'AWS::Lambda::Function' &&
      String(r.Properties?.Description ?? '').endsWith(`functions/${SWEEPER_FUNCTION}.ts`),
  );
  if (!found) return undefined;
  const [id, { Properties: fn }] = found;
  const rules = all.filter(
    ([, r]) =>
      r.Type === 'AWS::Events::Rule' &&
      (r.Properties?.Targets ?? []).some((t: any) => t.Arn?.['Fn::GetAtt']?.[0] === id),
  );
  if (rules.length !== 1)
    throw new Error(`infra/cost/model.ts: the sweeper ${id} should have one schedule, and has ${rules.length}`);
  const expression = String(rules[0]![1].Properties.ScheduleExpression);
  const rate = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(expression);
  if (!rate)
    throw new Error(`infra/cost/model.ts: the sweeper's schedule ${expression} is not a rate() the model prices`);
  const minutes = Number(rate[1]) * { minute: 1, hour: 60, day: 1_440 }[rate[2] as 'minute' | 'hour' | 'day'];
  return { fn, runsPerMonth: Math.round((HOURS_PER_MONTH * 60) / minutes), expression };
}

/** Its runs a month, at what a run that finds nothing costs: the invocation, its time, a Query per shard, its log. */
function sweeperRuns(sweeper: Sweeper): FixedLine {
  const gb = (sweeper.fn.MemorySize ?? 128) / 1024;
  const run =
    PRICES.lambdaRequests.usd / 1_000_000 +
    ((USAGE.sweeperRunMs.value / 1000) * gb * gbSecond(sweeper.fn)) / 1_000_000 +
    // An empty eventually consistent Query reads half a unit.
    (SWEEP_SHARDS * 0.5 * PRICES.dynamoDbReads.usd) / 1_000_000 +
    USAGE.sweeperLogKB.value * GB_PER_KB * PRICES.logsIngestion.usd;
  return {
    item: `Sweeper runs (${sweeper.expression}; Lambda, ${SWEEP_SHARDS} index Queries, logs)`,
    count: sweeper.runsPerMonth,
    usd: sweeper.runsPerMonth * run,
  };
}

/**
 * A multi-Region stage's Route 53 health checks (one per Region): each check's monthly price, its
 * base and its options (HTTPS, the 10 s fast interval); and the requests the checkers make, each
 * crossing WAF, API Gateway, the health function and one strongly consistent read of a missing item.
 */
function healthCheckLines(checks: any[], functions: any[], webAcls: number): FixedLine[] {
  if (checks.length === 0) return [];
  const configs = checks.map((c) => c.HealthCheckConfig ?? {});
  const options = (c: any) => (String(c.Type).startsWith('HTTPS') ? 1 : 0) + (c.RequestInterval === 10 ? 1 : 0);
  const fn = functions.find((f) => String(f.Description ?? '').endsWith('functions/health.ts'));
  const request =
    (webAcls > 0 ? PRICES.wafRequests.usd : 0) +
    PRICES.apiGatewayRest.usd +
    PRICES.lambdaRequests.usd +
    (USAGE.healthCheckBilledMs.value / 1000) * ((fn?.MemorySize ?? 128) / 1024) * gbSecond(fn) +
    PRICES.dynamoDbReads.usd +
    USAGE.logKB.value * GB_PER_MILLION_KB * PRICES.logsIngestion.usd;
  const requests = Math.round(checks.length * USAGE.healthCheckRequestsPerSecond.value * HOURS_PER_MONTH * 3600);
  return [
    {
      item: `Route 53 health check${checks.length === 1 ? '' : 's'} (${configs
        .map((c) => `${c.Type}, every ${c.RequestInterval ?? 30} s`)
        .filter((v, i, a) => a.indexOf(v) === i)
        .join('; ')})`,
      count: checks.length,
      usd: configs.reduce(
        (n, c) => n + PRICES.route53HealthCheck.usd + options(c) * PRICES.route53HealthCheckOption.usd,
        0,
      ),
    },
    {
      item: `Health checks' requests (${USAGE.healthCheckRequestsPerSecond.value} a second each: WAF, API Gateway, Lambda, 1 read unit, logs)`,
      count: requests,
      usd: (requests / 1_000_000) * request,
    },
  ];
}

/** A multi-Region stage: its replicas and witness, and its bill, summed over its stacks. */
export interface MultiRegionReport {
  replicas: number;
  witness: boolean;
  /** Every stack's fixed costs: each Region's API stack, and the table's (none of its own). */
  fixedUsd: number;
  /** Of which each Region's health check and its requests. */
  healthCheckUsd: number;
  /** A request served in one Region, plus its writes paid again in each other replica Region. */
  perMillionUsd: number[];
  /** Write units each request type makes, each paid again in every other replica. */
  replicatedWriteUnits: number[];
}

/**
 * The bill of a multi-Region stage from its templates: the global table's (its replicas, its
 * witness) and each replica Region's API stack. Every write is replicated: paid in each replica
 * Region (replicated write units, at the on-demand write price); a witness stores and bills nothing.
 * A create's writes are its table writes, its receipt's Expiry index entry and, later, the
 * sweeper's delete of the receipt and of its entry (the index is kept in every replica).
 */
export function multiRegionCostOf(table: Template, apis: Template[]): MultiRegionReport {
  const [global] = Object.values(table.Resources)
    .filter((r) => r.Type === 'AWS::DynamoDB::GlobalTable')
    .map((r) => r.Properties ?? {});
  if (!global) throw new Error('infra/cost/model.ts: the table stack has no AWS::DynamoDB::GlobalTable');
  const replicas = (global.Replicas ?? []).length as number;
  const witness = (global.GlobalTableWitnesses ?? []).length > 0;
  const reports = apis.map(costOf);
  // A request, priced in one Region: its API stack over the table (whose Expiry index its writes keep).
  const served = costOf({ Resources: { ...table.Resources, ...apis[0]!.Resources } });
  const replicatedWriteUnits = REQUEST_TYPES.map((t) => t.writeUnits + 3 * t.expiringItems);
  const healthCheckUsd = reports.reduce(
    (n, r) => n + r.fixed.filter((l) => /health check/i.test(l.item)).reduce((m, l) => m + l.usd, 0),
    0,
  );
  return {
    replicas,
    witness,
    fixedUsd: round(costOf(table).fixedUsd + reports.reduce((n, r) => n + r.fixedUsd, 0)),
    healthCheckUsd: round(healthCheckUsd),
    perMillionUsd: REQUEST_TYPES.map((_, i) =>
      round(served.perMillionUsd[i]! + (replicas - 1) * replicatedWriteUnits[i]! * PRICES.dynamoDbWrites.usd),
    ),
    replicatedWriteUnits,
  };
}

/**
 * Per million expiring items (create receipts): the Expiry index's entry, written with the item
 * (KEYS_ONLY, 1 write unit: the item's writes cost as much again in the index); then, with a
 * sweeper, its DeleteItem (1 unit, an item of up to 1 KB) and the entry's removal (1), its share of
 * the sweeper's eventually consistent Queries, and of its Lambda time.
 */
function expiringItemPerMillion(sweeper: Sweeper | undefined): { usd: number; how: string } {
  const index = PRICES.dynamoDbWrites.usd;
  if (!sweeper)
    return { usd: index, how: `1 write unit for its Expiry index entry ${usd(index)}, and no sweeper to delete it` };
  const deletes = 2 * PRICES.dynamoDbWrites.usd;
  const query = 0.5 * (USAGE.indexEntryKB.value / 4) * PRICES.dynamoDbReads.usd;
  const lambda =
    (USAGE.sweeperMsPerDelete.value / 1000) * ((sweeper.fn.MemorySize ?? 128) / 1024) * gbSecond(sweeper.fn);
  return {
    usd: index + deletes + query + lambda,
    how:
      `for each expiring item (a create's receipt), 1 write unit for its Expiry index entry, written with it ${usd(index)}; ` +
      `the sweeper's DeleteItem of it (under 1 KB) and the entry's removal, 2 write units ${usd(deletes)}; its ${USAGE.indexEntryKB.value} KB of the ` +
      `sweeper's Queries ${usd(query)} and ${USAGE.sweeperMsPerDelete.value} ms of its Lambda ${usd(lambda)} ` +
      '(a delete of a reserved tag key, not priced here, leaves two such items: its tombstones)',
  };
}

const round = (n: number) => Math.round(n * 100) / 100;
export const usd = (n: number) => `$${round(n).toFixed(2)}`;
const line = (item: string, count: number, price: Price): FixedLine => ({ item, count, usd: count * price.usd });

/** CloudWatch bills an alarm per metric it reads (a metric math alarm: each metric in it), high resolution below 60 s. */
function alarmMetrics(alarm: any): { standard: number; highResolution: number } {
  const periods: number[] = alarm.Metrics
    ? (alarm.Metrics as any[]).filter((m) => m.MetricStat).map((m) => m.MetricStat.Period)
    : [alarm.Period];
  const highResolution = periods.filter((p) => p < 60).length;
  return { standard: periods.length - highResolution, highResolution };
}

/**
 * The custom metrics the functions publish as EMF (shared/observability/metrics.ts): one per
 * metric name and dimension value. ColdStart carries the function's name, AuthorizationOutcome the
 * reason, the hot-spot metrics the hot spot; every other metric only the service.
 */
function emfMetrics(functions: number): number {
  const hotSpots = ((observability as Record<string, unknown>).HOT_SPOTS as readonly string[] | undefined)?.length ?? 1;
  return Object.values(observability.METRIC).reduce(
    (n, name: string) =>
      n +
      (name === observability.METRIC.coldStart
        ? functions
        : name === observability.METRIC.authorizationOutcome
          ? observability.AUTHORIZATION_REASONS.length
          : name.startsWith('HotSpot')
            ? hotSpots
            : 1),
    0,
  );
}

export interface CostPageInput {
  stage: string;
  front: CostReport;
  customDomain: CostReport;
  /** The multi-Region stage in its two shapes (two replicas and a witness; three replicas), by Regions. */
  multiRegion?: Array<{ regions: string; report: MultiRegionReport }>;
}

/** When the prices were read: the date most were read on, and the pages read on another. */
function readOn(): string[] {
  const pages = new Map<string, Set<string>>();
  for (const p of Object.values(PRICES))
    pages.set(p.read, (pages.get(p.read) ?? new Set()).add(new URL(p.source).pathname.split('/').filter(Boolean)[0]!));
  const [[first], ...later] = [...pages].sort(([a], [b]) => a.localeCompare(b)) as [
    [string, Set<string>],
    ...Array<[string, Set<string>]>,
  ];
  return [
    `All read on ${first}, on the page each row links to${later.length === 0 ? '.' : ''}`,
    ...later.map(
      ([date, names], i) => `(the ${[...names].join(' and ')} prices on ${date})${i === later.length - 1 ? '.' : ''}`,
    ),
  ];
}

/** docs/cost.md: figures only from the reports and the price table. */
export function costPage({ stage, front, customDomain, multiRegion = [] }: CostPageInput): string {
  const names = REQUEST_TYPES.map((t) => t.name);
  const out: string[] = [
    '# What it costs',
    '',
    '<!-- Generated by `npm run cost` from the synthesized template and infra/cost/prices.ts.',
    '     Do not edit: test/infra/cost.test.ts fails when this page and the template disagree. -->',
    '',
    `The bill of one stage as the template creates it (stage \`${stage}\`, default settings), at us-east-1`,
    'list prices without free tiers. Every count comes from the synthesized template; every price from',
    'the table at the end, with the page it was read on.',
    '',
    '## Every month, whatever the traffic',
    '',
    '| What the template creates | Count | Per month |',
    '|---|--:|--:|',
    ...front.fixed.map((l) => `| ${l.item} | ${l.count} | ${l.atMost ? 'up to ' : ''}${usd(l.usd)} |`),
    `| **Total** | | **${usd(front.fixedUsd)}** |`,
    '',
    `With a custom domain instead of the CloudFront front: **${usd(customDomain.fixedUsd)}** a month (no origin ` +
      'secret, no front-only WAF rule). Custom metrics are billed by the hour for the hours they are published: ' +
      `those that stay quiet (cold starts, errors) cost less. Storage comes on top: DynamoDB ${usd(PRICES.dynamoDbStorage.usd)} ` +
      `and point-in-time recovery ${usd(PRICES.dynamoDbPitr.usd)} per GB-month, logs ${usd(PRICES.logsStorage.usd)} per GB-month compressed.`,
    '',
    '## Per million requests',
    '',
    `| Service | ${names.join(' | ')} |`,
    `|---|${names.map(() => '--:').join('|')}|`,
    ...front.perMillion.map((l) => `| ${l.service} | ${l.usd.map(usd).join(' | ')} |`),
    `| **Total** | ${front.perMillionUsd.map((n) => `**${usd(n)}**`).join(' | ')} |`,
    '',
    ...REQUEST_TYPES.map((t) => `- ${t.name}: ${t.what}.`),
    ...front.perMillion.map((l) => `- ${l.service}: ${l.how}.`),
    '',
    'What a request uses that the template cannot say:',
    '',
    ...Object.entries(USAGE).map(([key, u]) => `- \`${key}\` ${u.value}: ${u.basis}.`),
    '',
    ...multiRegionSection(multiRegion, names),
    '## Prices',
    '',
    ...readOn(),
    '',
    '| Price | USD | Unit | Page |',
    '|---|--:|---|---|',
    ...Object.entries(PRICES).map(
      ([key, p]) =>
        `| ${key} | ${p.usd} | ${p.unit} | [${new URL(p.source).pathname.split('/').filter(Boolean)[0]}](${p.source}) |`,
    ),
    '',
  ];
  return wrap(out).join('\n');
}

/** The section of the multi-Region stage, when it is priced. */
function multiRegionSection(shapes: NonNullable<CostPageInput['multiRegion']>, names: string[]): string[] {
  if (shapes.length === 0) return [];
  const shape = (r: MultiRegionReport) => `${r.replicas} replicas${r.witness ? ' and a witness' : ''}`;
  const perRegionHealth = shapes[0]!.report.healthCheckUsd / shapes[0]!.report.replicas;
  const create = REQUEST_TYPES.findIndex((t) => t.name === 'Create');
  return [
    '## Three Regions',
    '',
    "A [multi-Region stage](deploying.md#three-regions): the global table's stack, and in each replica",
    'Region an API stack with a custom domain, each priced as above from its own template, at us-east-1',
    'prices in every Region.',
    '',
    ...shapes.map((s) => `- ${shape(s.report)}: ${s.regions}.`),
    '',
    `| | ${shapes.map((s) => shape(s.report)).join(' | ')} |`,
    `|---|${shapes.map(() => '--:').join('|')}|`,
    `| Every month, whatever the traffic | ${shapes.map((s) => `**${usd(s.report.fixedUsd)}**`).join(' | ')} |`,
    ...names.map(
      (name, i) =>
        `| Per million ${name.toLowerCase()}s | ${shapes.map((s) => usd(s.report.perMillionUsd[i]!)).join(' | ')} |`,
    ),
    '',
    `- Every month: each Region's fixed costs (those of a stage with a custom domain, its sweeper included), ` +
      `plus its Route 53 health check and the checkers' own requests: ${usd(perRegionHealth)} a Region ` +
      `(${USAGE.healthCheckRequestsPerSecond.value} requests a second, each through WAF, API Gateway, the health function and one read unit).`,
    `- Per request: a request is served by one Region, as above, and every write is paid again in each other ` +
      `replica Region (replicated write units, at the write price): ${names
        .map((name, i) => [name, shapes[0]!.report.replicatedWriteUnits[i]!] as const)
        .filter(([, units]) => units > 0)
        .map(([name, units]) => `a ${name.toLowerCase()} ${units} write units more`)
        .join(', ')} per other replica` +
      `${create >= 0 ? ` (a create's ${REQUEST_TYPES[create]!.writeUnits} writes, its receipt's Expiry index entry, and the sweeper's later delete of both)` : ''}. ` +
      'The witness holds no data and costs nothing; reads are paid only in the Region that makes them.',
    `- Not in the figures: storage, once per replica (each holds the whole table and its backups, at the prices above); ` +
      `Route 53's answers for the latency records (${usd(PRICES.route53LatencyQueries.usd)} per million queries; a resolver asks at most once a ` +
      "minute per name, the records' TTL); the hosted zone, a prerequisite; a game day (AWS FIS, " +
      `${usd(PRICES.fisActionMinute.usd)} per action-minute: ${usd(10 * PRICES.fisActionMinute.usd)} for either 10-minute experiment); ` +
      'and the S3 requests of the FIS extension on every function ([what it adds](deploying.md#what-each-stack-creates)).',
    '',
  ];
}

/** Prose lines within 100 characters (the docs' rule); table rows and headings stay whole. */
function wrap(lines: string[]): string[] {
  return lines.flatMap((l) => {
    if (l.length <= 100 || /^(\||#|<!--|\s)/.test(l)) return [l];
    const bullet = l.startsWith('- ');
    const words = l.split(' ');
    const wrapped: string[] = [];
    let current = '';
    for (const word of words) {
      if (current && `${current} ${word}`.length > 100) {
        wrapped.push(current);
        current = `${bullet ? '  ' : ''}${word}`;
      } else {
        current = current ? `${current} ${word}` : word;
      }
    }
    return [...wrapped, current];
  });
}
