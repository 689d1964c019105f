/**
 * AWS list prices the cost page is computed from (infra/cost/model.ts), us-east-1, in USD, without
 * free tiers or discounts. Each with the page it was read on and when: a price AWS changes is changed
 * here, and `npm run cost` writes docs/cost.md again (test/infra/cost.test.ts fails until it is).
 */
export interface Price {
  usd: number;
  unit: string;
  source: string;
  read: string;
}

const READ = '2026-11-25';
const page = {
  waf: 'https://aws.amazon.com/waf/pricing/',
  cloudFront: 'https://aws.amazon.com/cloudfront/pricing/',
  apiGateway: 'https://aws.amazon.com/api-gateway/pricing/',
  lambda: 'https://aws.amazon.com/lambda/pricing/',
  dynamoDb: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
  cloudWatch: 'https://aws.amazon.com/cloudwatch/pricing/',
  xRay: 'https://aws.amazon.com/xray/pricing/',
  secretsManager: 'https://aws.amazon.com/secrets-manager/pricing/',
  kms: 'https://aws.amazon.com/kms/pricing/',
  route53: 'https://aws.amazon.com/route53/pricing/',
  fis: 'https://aws.amazon.com/fis/pricing/',
};
const price = (usd: number, unit: string, source: string, read = READ): Price => ({ usd, unit, source, read });
/** The multi-Region stage's prices, read later than the rest. */
const MULTI_REGION_READ = '2026-11-28';

export const PRICES = {
  wafWebAcl: price(5.0, 'per web ACL-month', page.waf),
  wafRule: price(1.0, 'per rule or rule group, per web ACL-month', page.waf),
  wafRequests: price(0.6, 'per million requests', page.waf),
  cloudFrontRequests: price(1.0, 'per million HTTPS requests (North America, Europe)', page.cloudFront),
  cloudFrontFunctions: price(0.1, 'per million function invocations', page.cloudFront),
  cloudFrontDataOut: price(0.085, 'per GB out (first 10 TB; North America, Europe)', page.cloudFront),
  cloudFrontToOrigin: price(0.02, 'per GB to the origin (North America, Europe)', page.cloudFront),
  apiGatewayRest: price(3.5, 'per million requests (first 333 million)', page.apiGateway),
  lambdaRequests: price(0.2, 'per million invocations', page.lambda),
  lambdaArmGbSecond: price(0.0000133334, 'per GB-second, Arm (first 7.5 billion)', page.lambda),
  lambdaX86GbSecond: price(0.0000166667, 'per GB-second, x86 (first 6 billion)', page.lambda),
  dynamoDbWrites: price(0.625, 'per million write request units', page.dynamoDb),
  dynamoDbReads: price(0.125, 'per million read request units', page.dynamoDb),
  dynamoDbStorage: price(0.25, 'per GB-month (Standard table class)', page.dynamoDb),
  dynamoDbPitr: price(0.2, 'per GB-month of point-in-time recovery', page.dynamoDb),
  alarmMetric: price(0.1, 'per metric an alarm reads, per month', page.cloudWatch),
  alarmMetricHighResolution: price(0.3, 'the same, for a high-resolution alarm', page.cloudWatch),
  dashboard: price(3.0, 'per dashboard-month', page.cloudWatch),
  customMetric: price(0.3, 'per metric-month (first 10,000), by the hour', page.cloudWatch),
  logsIngestion: price(0.5, 'per GB ingested (Standard log class)', page.cloudWatch),
  logsStorage: price(0.03, 'per GB-month stored, compressed', page.cloudWatch),
  xRayTraces: price(5.0, 'per million traces recorded', page.xRay),
  secret: price(0.4, 'per secret-month', page.secretsManager),
  kmsKey: price(1.0, 'per key-month (+$1 for each of 2 rotations)', page.kms),
  route53HealthCheck: price(0.5, 'per health check-month, AWS endpoint', page.route53, MULTI_REGION_READ),
  route53HealthCheckOption: price(
    1.0,
    'per option (HTTPS, 10 s interval), check-month',
    page.route53,
    MULTI_REGION_READ,
  ),
  route53LatencyQueries: price(0.6, 'per million latency queries (first billion)', page.route53, MULTI_REGION_READ),
  fisActionMinute: price(0.1, 'per action-minute of an experiment', page.fis, MULTI_REGION_READ),
} satisfies Record<string, Price>;

/**
 * What a request uses that the template cannot say: each figure with what it rests on. The page
 * prints them beside the figures they produce.
 */
export const USAGE = {
  functionBilledMs: {
    value: 20,
    basis: 'warm handler p50 at most 17 ms in `npm run bench`, rounded up (billed per 1 ms)',
  },
  authorizerBilledMs: { value: 10, basis: 'one GetItem, as warm as the functions' },
  authorizerRunsPerRequest: {
    value: 0.1,
    basis: 'API Gateway reuses its answer 60 s per token: tokens sending 10 or more requests a minute',
  },
  responseKB: {
    value: 2,
    basis: 'a list page of 20 items is about 9 KB of JSON, about 2 KB gzip-compressed at the edge',
  },
  requestKB: { value: 1, basis: "headers and a create's body, forwarded to the origin" },
  logKB: {
    value: 1.5,
    basis:
      "access log line about 0.7 KB (the stage's JSON format), function log and EMF lines about 0.4 KB (measured through the local stack), Lambda's START, END and REPORT lines about 0.4 KB",
  },
  requestsPerSecond: {
    value: 10,
    basis: "the sustained rate at which X-Ray's default sampling (the first request each second, then 5%) is priced",
  },
  sweeperRunMs: {
    value: 200,
    basis:
      'a sweeper run that finds nothing: one empty Query of the Expiry index per shard, one after the other, at about 10 ms each, and its log and metric lines',
  },
  sweeperMsPerDelete: {
    value: 2,
    basis:
      "the sweeper's DeleteItem of an expired item takes about 10 ms, 8 at a time (shared/store/sweep.ts), rounded up",
  },
  sweeperLogKB: {
    value: 2,
    basis: "a sweeper run's log: Lambda's START, END and REPORT lines, its one line of counts, its EMF lines",
  },
  healthCheckRequestsPerSecond: {
    value: 1.5,
    basis:
      'a Route 53 health check every 10 s from each of its checkers, about 15 in its default locations, uncoordinated (Route 53 says an endpoint may see several a second): an estimate, Route 53 publishes no count',
  },
  healthCheckBilledMs: {
    value: 10,
    basis: 'the health function: one strongly consistent GetItem, as warm as the authorizer',
  },
  indexEntryKB: {
    value: 0.2,
    basis:
      "an entry of the Expiry index holds keys alone (PK, SK, sweepShard, sweepAt: about 100 bytes) and DynamoDB's 100 bytes of overhead",
  },
} as const;

/**
 * DynamoDB request units per request type, from the store's calls (shared/store/): strongly
 * consistent reads cost 1 unit per 4 KB; a single-item write (every change commits with one
 * conditional write, and the items derived from it are written one by one: docs/design.md "Commit
 * points") 1 unit per KB of the larger of the item before and after. `writeUnits` are the table's;
 * `expiringItems`: the items a request writes that carry an expiry (shared/store/expiry.ts), which
 * the Expiry index lists (1 more write unit each, at the write) and the sweeper deletes, each priced
 * by the cost model's expiry line. `npm run bench` reads both from DynamoDB Local's consumed
 * capacity (its WCU column; `--check` holds a comment create to 5 and a key create to 6).
 */
export const REQUEST_TYPES = [
  {
    name: 'Read',
    what: 'a list page of 20: one strongly consistent Query of about 9 KB, 3 read units',
    readUnits: 3,
    writeUnits: 0,
    expiringItems: 0,
  },
  {
    name: 'Create',
    what:
      "a comment: 4 single-item writes of items under 1 KB, 1 write unit each (the receipt's claim, the " +
      "commit on the run's record, the comment's copy by id, its member in the run), and the receipt's " +
      'Expiry index entry: 5 write units as it is made, where one transaction of 4 items took 8; the ' +
      "receipt expires, and the sweeper's delete of it and of its entry takes 2 more later. A reserved " +
      "tag key: 4 writes (the commit on the organization's head, the name's guard, the copy, the " +
      'member), 4 write units (10 before: the key keeps its receipt; with an Idempotency-Key, its claim ' +
      "and the entry make 6), and 1 read unit for its name's guard (2 when the function does not know " +
      "the head). The organization's head, which every change of a key writes whole, is under 1 KB up " +
      'to about 1,000 keys: 1 or 2 more units at the limit of 10,000 (design.md, "Data model")',
    readUnits: 0,
    writeUnits: 4,
    expiringItems: 1,
  },
] as const;
