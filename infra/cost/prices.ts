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
};
const price = (usd: number, unit: string, source: string): Price => ({ usd, unit, source, read: READ });

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
} satisfies Record<string, Price>;

/**
 * What a request uses that the template cannot say: each figure with what it rests on. The page
 * prints them beside the figures they produce.
 */
export const USAGE = {
  functionBilledMs: { value: 20, basis: 'warm handler p50 at most 17 ms in `npm run bench`, rounded up (billed per 1 ms)' },
  authorizerBilledMs: { value: 10, basis: 'one GetItem, as warm as the functions' },
  authorizerRunsPerRequest: { value: 0.1, basis: 'API Gateway reuses its answer 60 s per token: tokens sending 10 or more requests a minute' },
  responseKB: { value: 2, basis: 'a list page of 20 items is about 9 KB of JSON, about 2 KB gzip-compressed at the edge' },
  requestKB: { value: 1, basis: 'headers and a create\'s body, forwarded to the origin' },
  logKB: { value: 1.5, basis: 'access log line about 0.7 KB (the stage\'s JSON format), function log and EMF lines about 0.4 KB (measured through the local stack), Lambda\'s START, END and REPORT lines about 0.4 KB' },
  requestsPerSecond: { value: 10, basis: 'the sustained rate at which X-Ray\'s default sampling (the first request each second, then 5%) is priced' },
  sweeperRunMs: { value: 200, basis: 'a sweeper run that finds nothing: one empty Query of the Expiry index per shard, one after the other, at about 10 ms each, and its log and metric lines' },
  sweeperMsPerDelete: { value: 2, basis: 'the sweeper\'s DeleteItem of an expired item takes about 10 ms, 8 at a time (shared/store/sweep.ts), rounded up' },
  sweeperLogKB: { value: 2, basis: 'a sweeper run\'s log: Lambda\'s START, END and REPORT lines, its one line of counts, its EMF lines' },
  indexEntryKB: { value: 0.2, basis: 'an entry of the Expiry index holds keys alone (PK, SK, sweepShard, sweepAt: about 100 bytes) and DynamoDB\'s 100 bytes of overhead' },
} as const;

/**
 * DynamoDB request units per request type, from the store's calls (shared/store/): strongly
 * consistent reads cost 1 unit per 4 KB; transactional writes 2 units per item of up to 1 KB.
 * `expiringItems`: the items a request writes that carry an expiry (shared/store/expiry.ts), which
 * the Expiry index lists and the sweeper deletes, each priced by the cost model's expiry line.
 */
export const REQUEST_TYPES = [
  { name: 'Read', what: 'a list page of 20: one strongly consistent Query of about 9 KB, 3 read units', readUnits: 3, writeUnits: 0, expiringItems: 0 },
  {
    name: 'Create',
    what: 'a comment: one transaction of 4 items of up to 1 KB (its two copies, the run\'s count, the receipt), '
      + '8 write units; a reserved tag key writes 5 (10 units: its name guard too). Its receipt expires',
    readUnits: 0,
    writeUnits: 8,
    expiringItems: 1,
  },
] as const;
