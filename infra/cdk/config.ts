import type { Node } from 'constructs';

/**
 * Per-stage settings, read from CDK context once at synth and validated there: a bad value fails
 * `cdk synth` with one line naming the key, never a half-built template or a failed deploy.
 *
 * Each key is looked up in this order: `-c key=value` (or a top-level key in cdk.json), then the
 * stage's own object in cdk.json (`"stages": { "prod": { "key": value } }`), then the default.
 */
export interface StageConfig {
  stage: string;
  /** Lambda memory (MB) of every function; CPU is allotted in proportion. */
  memorySize: number;
  /** API Gateway throttle applied to *each method* of the stage (requests per second, burst). */
  throttleRateLimit: number;
  throttleBurstLimit: number;
  /** The account's API Gateway rate limit in the region: all methods of the stage must fit in it. */
  accountThrottleRateLimit: number;
  /** Reserved concurrency of each API function and of the authorizer; undefined = unreserved. */
  reservedConcurrency: number | undefined;
  authorizerReservedConcurrency: number | undefined;
  /** The account's Lambda concurrency in the region: every reservation must leave 100 unreserved. */
  accountConcurrency: number;
  /** Days the functions' log groups keep their logs. */
  logRetentionDays: number;
  /** How long API Gateway reuses an authorizer answer for the same token. */
  authorizerCacheTtlSeconds: number;
  /** Subscribed to the alarm topic. */
  alarmEmail: string | undefined;
  /**
   * How CodeDeploy moves each function's `live` alias to a new version: one of CodeDeploy's
   * predefined Lambda configurations (DEPLOYMENT_CONFIGS), without the `CodeDeployDefault.` prefix.
   */
  deploymentConfig: DeploymentConfigName;
  /** Where the runbooks are: each alarm's description links to its section here. */
  runbookUrl: string;
  /** A custom domain served at the root of the host, its certificate and its Route 53 zone. */
  domainName: string | undefined;
  certificateArn: string | undefined;
  hostedZone: { hostedZoneId: string; zoneName: string } | undefined;
  /** Turn off the stage's execute-api endpoint, so the custom domain is the only way in. */
  disableExecuteApiEndpoint: boolean;
  /** An existing table to use instead of creating one (a restored or retained table). */
  tableName: string | undefined;
  /** Whether this stage creates the account's API Gateway CloudWatch Logs role (one per account and region). */
  apiGatewayCloudWatchRole: boolean;
  /**
   * The deep health route (GET /api/v2/health: one strongly consistent read) in a single-Region
   * stage too, for a monitor of your own. A multi-Region stage always has it (its health checks
   * call it); the local stage has it by default (the local Regions' front calls it).
   */
  healthRoute: boolean;
  /**
   * A multi-Region stage (context `regions` and `witnessRegion`): the Regions of a global table in
   * multi-Region strong consistency, an API in each replica Region. Undefined: one Region, the
   * CLI's (the default).
   */
  multiRegion: MultiRegion | undefined;
}

/** The replica Regions (the first holds the table's stack) and the witness, if any: 3 Regions of one MRSC set. */
export interface MultiRegion {
  regions: readonly string[];
  witnessRegion: string | undefined;
}

/**
 * The Region sets in which DynamoDB offers multi-Region strong consistency (MRSC): a global table's
 * replicas and witness must all be in one set, exactly three Regions counting the witness.
 */
export const MRSC_REGION_SETS: Readonly<Record<string, readonly string[]>> = {
  US: ['us-east-1', 'us-east-2', 'us-west-2'],
  EU: ['eu-west-1', 'eu-west-2', 'eu-west-3', 'eu-central-1'],
  AP: ['ap-northeast-1', 'ap-northeast-2', 'ap-northeast-3'],
};
/** An MRSC global table: three replicas, or two replicas and a witness. */
export const MRSC_REGIONS = 3;

export const DEFAULT_STAGE = 'dev';

/** Lambda refuses reservations that leave the account fewer unreserved executions than this. */
export const MIN_UNRESERVED_CONCURRENCY = 100;

/** CloudWatch Logs accepts only these retention periods (PutRetentionPolicy). */
export const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

/**
 * How long one request holds a function's execution, warm, as budgeted: its DynamoDB round trips
 * and some JSON, with room to spare (what it takes: docs/performance.md).
 */
export const REQUEST_SECONDS = 0.1;

/**
 * Throttle and reservations, sized together so that a burst is refused by API Gateway (429 with
 * Retry-After) and never reaches a function past its reserved concurrency (Lambda would throttle
 * it, and the client would get a 5xx): methods × (burst + rate × REQUEST_SECONDS) ≤ reservation,
 * checked at synth for any values given (checkBurstFitsConcurrency). The arithmetic for these
 * defaults, and what it does not cover: docs/deploying.md, "A burst is refused by the gateway".
 */
export const DEFAULTS = {
  memorySize: 1024,
  throttleRateLimit: 50,
  throttleBurstLimit: 5,
  accountThrottleRateLimit: 10_000,
  reservedConcurrency: 25,
  authorizerReservedConcurrency: 100,
  accountConcurrency: 1_000,
  logRetentionDays: 30,
  authorizerCacheTtlSeconds: 60,
  apiGatewayCloudWatchRole: false,
  healthRoute: false,
  /** The repository's own runbooks; set an https:// address of them (e.g. on your Git host) for clickable links. */
  runbookUrl: 'docs/runbooks.md',
} as const;

/**
 * CodeDeploy's predefined deployment configurations for Lambda
 * (https://docs.aws.amazon.com/codedeploy/latest/userguide/deployment-configurations.html):
 * all at once, or a canary (10% first, the rest after the minutes named), or linear (10% more
 * every so many minutes). During a canary or linear shift, CodeDeploy watches the function's
 * rollback alarms and moves the alias back to the old version if one fires.
 */
export const DEPLOYMENT_CONFIGS = [
  'LambdaAllAtOnce',
  'LambdaCanary10Percent5Minutes',
  'LambdaCanary10Percent10Minutes',
  'LambdaCanary10Percent15Minutes',
  'LambdaCanary10Percent30Minutes',
  'LambdaLinear10PercentEvery1Minute',
  'LambdaLinear10PercentEvery2Minutes',
  'LambdaLinear10PercentEvery3Minutes',
  'LambdaLinear10PercentEvery10Minutes',
] as const;
export type DeploymentConfigName = (typeof DEPLOYMENT_CONFIGS)[number];
/** The stage whose traffic moves gradually by default and never all at once. */
export const PRODUCTION_STAGE = 'prod';
/** `prod` shifts 10% for 5 minutes, then the rest; every other stage (dev, local, …) at once. */
export const defaultDeploymentConfig = (stage: string): DeploymentConfigName =>
  stage === PRODUCTION_STAGE ? 'LambdaCanary10Percent5Minutes' : 'LambdaAllAtOnce';

/**
 * The `local` stage (npm start and the tests, on one machine) keeps a throttle of 250 a second,
 * burst 125, and no reservations: the tests send up to 60 requests at once to one method to drive
 * the store's contention, which the deployed stages' throttle would answer 429 before they reach
 * it. The deployed sizing is tested on the dev and prod templates and in the emulator's own tests.
 */
export const LOCAL_STAGE_DEFAULTS = {
  healthRoute: true,
  throttleRateLimit: 250,
  throttleBurstLimit: 125,
  reservedConcurrency: undefined,
  authorizerReservedConcurrency: undefined,
} as const;
/** The stage `npm start` synthesizes and serves on the local stack. */
export const LOCAL_STAGE = 'local';
const defaultsFor = (stage: string) => (stage === LOCAL_STAGE ? { ...DEFAULTS, ...LOCAL_STAGE_DEFAULTS } : DEFAULTS);

/** A setting that cannot work: the message names the key and what it accepts. */
export class ConfigError extends Error {
  constructor(key: string, value: unknown, expected: string) {
    super(`Invalid context "${key}" = ${JSON.stringify(value)}: ${expected}`);
    this.name = 'ConfigError';
  }
}

type Lookup = (key: string) => unknown;

/** The stage to synthesize: context `stage`, else the STAGE environment variable, else `dev`. */
export function stageNameFrom(node: Node, environment: NodeJS.ProcessEnv = process.env): string {
  return String(node.tryGetContext('stage') ?? environment.STAGE ?? DEFAULT_STAGE);
}

/** The settings of `stage` from a construct's context (see the order above). */
export function stageConfigFrom(node: Node, stage: string): StageConfig {
  const stages = node.tryGetContext('stages') as Record<string, Record<string, unknown>> | undefined;
  return parseStageConfig(stage, (key) => node.tryGetContext(key) ?? stages?.[stage]?.[key]);
}

/** The settings of `stage`, each value from `lookup` (undefined = the default). */
export function parseStageConfig(stage: string, lookup: Lookup): StageConfig {
  const read = settingsReader(lookup);
  const domainName = read.string('domainName', HOSTNAME, 'a host name such as api.example.com');
  const certificateArn = read.string(
    'certificateArn',
    ACM_ARN,
    'an ACM certificate ARN (arn:aws:acm:region:account:certificate/id)',
  );
  const hostedZoneId = read.string(
    'hostedZoneId',
    /^Z[A-Z0-9]{1,31}$/,
    'a Route 53 hosted zone id such as Z0123456789ABCDEFGHIJ',
  );
  const zoneName = read.string('hostedZoneName', HOSTNAME, "the hosted zone's domain, such as example.com");
  if ((hostedZoneId === undefined) !== (zoneName === undefined)) {
    throw new ConfigError(
      hostedZoneId === undefined ? 'hostedZoneName' : 'hostedZoneId',
      hostedZoneId ?? zoneName,
      'hostedZoneId and hostedZoneName go together',
    );
  }
  if ((certificateArn !== undefined || hostedZoneId !== undefined) && domainName === undefined) {
    throw new ConfigError(
      certificateArn !== undefined ? 'certificateArn' : 'hostedZoneId',
      certificateArn ?? hostedZoneId,
      'needs domainName',
    );
  }
  if (zoneName !== undefined && domainName !== undefined && !`.${domainName}`.endsWith(`.${zoneName}`)) {
    throw new ConfigError('hostedZoneName', zoneName, `must be ${domainName} or one of its parent domains`);
  }

  if (domainName !== undefined && certificateArn === undefined && hostedZoneId === undefined) {
    throw new ConfigError(
      'domainName',
      domainName,
      'needs certificateArn, or hostedZoneId and hostedZoneName to create its certificate in',
    );
  }
  const defaults = defaultsFor(validStage(stage));
  const config: StageConfig = {
    stage: validStage(stage),
    memorySize: read.integer('memorySize', DEFAULTS.memorySize, 128, 10_240),
    throttleRateLimit: read.integer('throttleRateLimit', defaults.throttleRateLimit, 1, 1_000_000),
    // A method's burst can never exceed the account's (5,000 by default).
    throttleBurstLimit: read.integer('throttleBurstLimit', defaults.throttleBurstLimit, 0, 5_000),
    accountThrottleRateLimit: read.integer('accountThrottleRateLimit', DEFAULTS.accountThrottleRateLimit, 1, 1_000_000),
    reservedConcurrency: read.reservation('reservedConcurrency', defaults.reservedConcurrency),
    authorizerReservedConcurrency: read.reservation(
      'authorizerReservedConcurrency',
      defaults.authorizerReservedConcurrency,
    ),
    accountConcurrency: read.integer('accountConcurrency', DEFAULTS.accountConcurrency, 1, 10_000_000),
    logRetentionDays: read.oneOf('logRetentionDays', DEFAULTS.logRetentionDays, LOG_RETENTION_DAYS),
    // API Gateway caches authorizer results for at most 3600 s; 0 turns the cache off.
    authorizerCacheTtlSeconds: read.integer('authorizerCacheTtlSeconds', DEFAULTS.authorizerCacheTtlSeconds, 0, 3_600),
    alarmEmail: read.string('alarmEmail', EMAIL, 'an e-mail address'),
    deploymentConfig: read.deploymentConfig(validStage(stage)),
    runbookUrl:
      read.string(
        'runbookUrl',
        RUNBOOK_URL,
        'an https:// address or a path of the repository, such as docs/runbooks.md',
      ) ?? DEFAULTS.runbookUrl,
    domainName,
    certificateArn,
    hostedZone: hostedZoneId && zoneName ? { hostedZoneId, zoneName } : undefined,
    disableExecuteApiEndpoint: read.boolean('disableExecuteApiEndpoint', false),
    tableName: read.string('tableName', TABLE_NAME, 'a DynamoDB table name: 3-255 of A-Z a-z 0-9 _ - .'),
    apiGatewayCloudWatchRole: read.boolean('apiGatewayCloudWatchRole', DEFAULTS.apiGatewayCloudWatchRole),
    healthRoute: read.boolean('healthRoute', defaults.healthRoute),
    multiRegion: undefined,
  };
  // The custom domain is then the only way in: without one, clients would have none.
  if (config.disableExecuteApiEndpoint && domainName === undefined) {
    throw new ConfigError(
      'disableExecuteApiEndpoint',
      true,
      'needs domainName (without a domain, CloudFront reaches the API through execute-api)',
    );
  }
  config.multiRegion = parseMultiRegion(lookup, config);
  return config;
}

/**
 * `regions` (comma-separated, or a JSON array in cdk.json) and `witnessRegion`: the Regions of the
 * global table, checked against what MRSC accepts, and the settings a multi-Region stage needs
 * (a domain with its hosted zone: each Region makes its certificate and its latency record there).
 */
function parseMultiRegion(lookup: Lookup, config: StageConfig): MultiRegion | undefined {
  const rawRegions = lookup('regions');
  const rawWitness = lookup('witnessRegion');
  if ((rawRegions === undefined || rawRegions === '') && (rawWitness === undefined || rawWitness === ''))
    return undefined;
  if (rawRegions === undefined || rawRegions === '')
    throw new ConfigError(
      'witnessRegion',
      rawWitness,
      'needs regions (the replica Regions, such as us-east-1,us-east-2)',
    );
  const list = Array.isArray(rawRegions)
    ? rawRegions
    : typeof rawRegions === 'string'
      ? rawRegions.split(',').map((r) => r.trim())
      : undefined;
  const allRegions = Object.values(MRSC_REGION_SETS).flat();
  const sets = Object.entries(MRSC_REGION_SETS)
    .map(([name, members]) => `${name}: ${members.join(', ')}`)
    .join('; ');
  if (!list || list.some((region) => typeof region !== 'string' || !allRegions.includes(region))) {
    throw new ConfigError('regions', rawRegions, `comma-separated Regions of one MRSC Region set (${sets})`);
  }
  const regions = list as string[];
  const duplicate = regions.find((region, index) => regions.indexOf(region) !== index);
  if (duplicate) throw new ConfigError('regions', rawRegions, `names ${duplicate} twice`);
  let witnessRegion: string | undefined;
  if (rawWitness !== undefined && rawWitness !== '') {
    if (typeof rawWitness !== 'string' || !allRegions.includes(rawWitness))
      throw new ConfigError('witnessRegion', rawWitness, `a Region of one MRSC Region set (${sets})`);
    if (regions.includes(rawWitness))
      throw new ConfigError(
        'witnessRegion',
        rawWitness,
        'is one of the replica regions: the witness must be a third Region',
      );
    witnessRegion = rawWitness;
  }
  const all = [...regions, ...(witnessRegion ? [witnessRegion] : [])];
  const set = Object.entries(MRSC_REGION_SETS).find(([, members]) => members.includes(all[0]!))!;
  const outside = all.find((region) => !set[1].includes(region));
  if (outside)
    throw new ConfigError(
      outside === witnessRegion ? 'witnessRegion' : 'regions',
      outside,
      `is not in the ${set[0]} Region set of ${all[0]} (${set[1].join(', ')}): an MRSC table's Regions are all in one set`,
    );
  if (all.length !== MRSC_REGIONS || regions.length < 2) {
    throw new ConfigError(
      'regions',
      rawRegions,
      `${regions.length} replica Region${regions.length === 1 ? '' : 's'}${witnessRegion ? ' and a witness' : ''}: MRSC takes exactly ${MRSC_REGIONS} Regions, three replicas or two and witnessRegion`,
    );
  }
  // Each Region makes its own certificate and latency record: both need the domain and its zone.
  if (config.domainName === undefined || config.hostedZone === undefined) {
    throw new ConfigError(
      'regions',
      rawRegions,
      'needs domainName, hostedZoneId and hostedZoneName (each Region serves the domain, with its own certificate and a latency record in the zone)',
    );
  }
  if (config.certificateArn !== undefined) {
    throw new ConfigError(
      'certificateArn',
      config.certificateArn,
      'an ACM certificate serves one Region: with regions, leave it out and each Region makes its own in the hosted zone',
    );
  }
  if (config.domainName === config.hostedZone.zoneName) {
    throw new ConfigError(
      'domainName',
      config.domainName,
      `with regions, a name under ${config.hostedZone.zoneName}, not the zone's apex: each Region's latency record is a CNAME with a 60 s TTL`,
    );
  }
  if (config.tableName !== undefined) {
    throw new ConfigError(
      'tableName',
      config.tableName,
      'with regions, leave it out: the stage creates its global table, which must start empty (docs/deploying.md, Three Regions)',
    );
  }
  if (config.disableExecuteApiEndpoint) {
    throw new ConfigError(
      'disableExecuteApiEndpoint',
      true,
      "with regions, leave it out: each Region's Route 53 health check calls its execute-api endpoint",
    );
  }
  return { regions, witnessRegion };
}

/** API Gateway stage names allow letters, digits, `-` and `_`; stack names no `_`: the intersection. */
export function validStage(stage: string): string {
  if (!/^[a-z][a-z0-9-]{0,30}$/.test(stage)) {
    throw new ConfigError(
      'stage',
      stage,
      'lowercase letters, digits and "-", starting with a letter, at most 31 characters',
    );
  }
  return stage;
}

/**
 * API Gateway applies a stage's throttle to each method separately, so the stage as a whole may
 * take methods × rate; that must fit in the account's limit, which every stage and API share.
 */
export function checkThrottleFitsAccount(config: StageConfig, methods: number): void {
  const total = methods * config.throttleRateLimit;
  if (total > config.accountThrottleRateLimit) {
    throw new ConfigError(
      'throttleRateLimit',
      config.throttleRateLimit,
      `${methods} methods × ${config.throttleRateLimit} req/s = ${total} req/s exceeds accountThrottleRateLimit ${config.accountThrottleRateLimit}`,
    );
  }
}

/** What reaches one function: how many methods invoke it and its reservation (undefined = unreserved). */
export interface FunctionLoad {
  /** The handler file, as the route table names it (`authorizer` for the authorizer). */
  name: string;
  methods: number;
  reservedConcurrency: number | undefined;
}

/**
 * A burst must be refused at the gateway, not by Lambda: for each reserved function,
 * methods × (burst + rate × REQUEST_SECONDS) ≤ its reservation (the arithmetic: docs/deploying.md).
 */
export function checkBurstFitsConcurrency(config: StageConfig, loads: readonly FunctionLoad[]): void {
  const { throttleBurstLimit: burst, throttleRateLimit: rate } = config;
  const reachOf = (methods: number) => methods * (burst + rate * REQUEST_SECONDS);
  // The function furthest over its reservation is the one named.
  const reserved = loads
    .filter((load) => load.reservedConcurrency !== undefined)
    .sort((a, b) => reachOf(b.methods) - b.reservedConcurrency! - (reachOf(a.methods) - a.reservedConcurrency!));
  for (const { name, methods, reservedConcurrency } of reserved) {
    const reach = reachOf(methods);
    if (reach > reservedConcurrency!) {
      const key = name === 'authorizer' ? 'authorizerReservedConcurrency' : 'reservedConcurrency';
      throw new ConfigError(
        'throttleBurstLimit',
        burst,
        `${methods} method${methods === 1 ? '' : 's'} × (burst ${burst} + rate ${rate} req/s × ${REQUEST_SECONDS} s) = ${Number(reach.toFixed(1))} executions can reach functions/${name}.ts at once, over its ${key} ${reservedConcurrency}: lower throttleBurstLimit or throttleRateLimit, or raise ${key}`,
      );
    }
  }
}

/** Every reservation of the stage must leave the account its 100 unreserved executions. */
export function checkReservationsFitAccount(config: StageConfig, apiFunctions: number): void {
  const total = apiFunctions * (config.reservedConcurrency ?? 0) + (config.authorizerReservedConcurrency ?? 0);
  const available = config.accountConcurrency - MIN_UNRESERVED_CONCURRENCY;
  if (total > available) {
    throw new ConfigError(
      'reservedConcurrency',
      config.reservedConcurrency,
      `${apiFunctions} functions × ${config.reservedConcurrency ?? 0} + authorizer ${config.authorizerReservedConcurrency ?? 0} = ${total} exceeds accountConcurrency ${config.accountConcurrency} − ${MIN_UNRESERVED_CONCURRENCY} unreserved`,
    );
  }
}

const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const ACM_ARN = /^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]+$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;
const RUNBOOK_URL = /^(https:\/\/\S+|[\w.-]+(\/[\w.-]+)*\.md)$/;

/** Context values from `-c` arrive as strings, from cdk.json as JSON: both are accepted. */
function settingsReader(lookup: Lookup) {
  const integer = (key: string, fallback: number, min: number, max: number): number => {
    const value = lookup(key);
    if (value === undefined) return fallback;
    const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
      throw new ConfigError(key, value, `a whole number from ${min} to ${max}`);
    }
    return n;
  };
  return {
    integer,
    string(key: string, pattern: RegExp, expected: string): string | undefined {
      const value = lookup(key);
      if (value === undefined || value === '') return undefined;
      if (typeof value !== 'string' || !pattern.test(value)) throw new ConfigError(key, value, expected);
      return value;
    },
    boolean(key: string, fallback: boolean): boolean {
      const value = lookup(key);
      if (value === undefined) return fallback;
      if (value === true || value === 'true') return true;
      if (value === false || value === 'false') return false;
      throw new ConfigError(key, value, 'true or false');
    },
    oneOf<T extends number>(key: string, fallback: T, allowed: readonly T[]): T {
      const n = integer(key, fallback, 0, Number.MAX_SAFE_INTEGER);
      if (!allowed.includes(n as T)) throw new ConfigError(key, lookup(key), `one of ${allowed.join(', ')}`);
      return n as T;
    },
    /** One of CodeDeploy's Lambda configurations (the `CodeDeployDefault.` prefix may be given); prod never all at once. */
    deploymentConfig(stage: string): DeploymentConfigName {
      const value = lookup('deploymentConfig');
      if (value === undefined || value === '') return defaultDeploymentConfig(stage);
      const name = typeof value === 'string' ? value.replace(/^CodeDeployDefault\./, '') : value;
      const allowed: readonly string[] =
        stage === PRODUCTION_STAGE ? DEPLOYMENT_CONFIGS.filter((c) => c !== 'LambdaAllAtOnce') : DEPLOYMENT_CONFIGS;
      if (typeof name !== 'string' || !allowed.includes(name)) {
        throw new ConfigError(
          'deploymentConfig',
          value,
          `${stage === PRODUCTION_STAGE ? 'for prod (never all at once), one' : 'one'} of ${allowed.join(', ')}`,
        );
      }
      return name as DeploymentConfigName;
    },
    /** A positive number of executions, or "none" to leave the function unreserved. */
    reservation(key: string, fallback: number | undefined): number | undefined {
      const value = lookup(key);
      if (value === 'none' || value === false || value === 'false') return undefined;
      if (value === undefined && fallback === undefined) return undefined;
      // 0 would throttle every invocation: Lambda reads a reservation of 0 as "disabled".
      return integer(key, fallback ?? 0, 1, 10_000_000);
    },
  };
}
