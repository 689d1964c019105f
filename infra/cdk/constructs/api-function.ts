import { join, resolve } from 'node:path';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { APP_NAME, FUNCTION_TIMEOUT_SECONDS } from '#shared/config';
import { BUNDLE } from './bundling';
import type { TableAccess } from '#shared/routes';
import { DEFAULTS } from '../config';

/** The repository root: entries are functions/<name>.ts, resolved through package.json `imports`. */
export const PROJECT_ROOT = resolve(import.meta.dirname, '../../..');

export interface ApiFunctionProps {
  /** The handler file under functions/, without extension (a route table `function`). */
  name: string;
  table: ITableV2;
  /** The DynamoDB actions this function's role gets, on which partitions (one statement each); no actions = no table access. */
  tableAccess: TableAccess | readonly TableAccess[];
  /** Lambda memory in MB (the stage's `memorySize`). */
  memorySize?: number;
  /** Executions kept for this function alone, and its ceiling; undefined = unreserved. */
  reservedConcurrency?: number;
  logRetention?: RetentionDays;
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  description?: string;
  /** Variables beyond the table's and Powertools' that this function alone needs. */
  environment?: Record<string, string>;
  /** ApiFunction.TIMEOUT unless given: a function off the request path (the sweeper) may take longer. */
  timeout?: Duration;
}

/**
 * One endpoint's Lambda, configured in one place: Node 24 on arm64, an ESM bundle with the AWS SDK
 * inside (no runtime-provided SDK drift), minified with source maps, active tracing, its own log
 * group, and a role that holds exactly the table actions it is given.
 */
export class ApiFunction extends NodejsFunction {
  /** Memory and CPU (default of the stage's `memorySize`): Lambda allots CPU in proportion to
   *  memory, and the handlers are CPU-bound, not memory-bound (the cold start parses the bundle,
   *  a request builds JSON and hashes tokens), so the memory is bought for its CPU. */
  static readonly MEMORY_MB = DEFAULTS.memorySize;
  /** A request's DynamoDB round trips are budgeted (docs/design.md); the timeout leaves room for
   *  the SDK's retries with backoff when the table throttles, and for a writer waiting its turn on
   *  a busy run or organization: the handler stops waiting when one more attempt could not end
   *  before its deadline, and answers 503 (shared/store/contention.ts), so no request meets this
   *  timeout. Why 15 s, and how it fits API Gateway's 29 s: FUNCTION_TIMEOUT_SECONDS. */
  static readonly TIMEOUT = Duration.seconds(FUNCTION_TIMEOUT_SECONDS);
  static readonly LOG_RETENTION = DEFAULTS.logRetentionDays as RetentionDays;

  constructor(scope: Construct, id: string, props: ApiFunctionProps) {
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: props.logRetention ?? ApiFunction.LOG_RETENTION,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Our own role instead of the default one: no AWSLambdaBasicExecutionRole (logs:* on every log
    // group of the account), only writes to this function's log group.
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `${APP_NAME} ${props.name}: its log group, tracing and its table access`,
    });
    logGroup.grantWrite(role);

    super(scope, id, {
      description: props.description ?? `${APP_NAME}: functions/${props.name}.ts`,
      entry: join(PROJECT_ROOT, 'functions', `${props.name}.ts`),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? ApiFunction.MEMORY_MB,
      ...(props.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: props.reservedConcurrency }),
      timeout: props.timeout ?? ApiFunction.TIMEOUT,
      // Each deploy publishes a version for the `live` alias (constructs/deployment.ts); CloudFormation
      // deletes the one it replaces once the alias has moved, so old versions do not pile up.
      currentVersionOptions: { removalPolicy: RemovalPolicy.DESTROY },
      tracing: Tracing.ACTIVE,
      logGroup,
      role,
      environment: {
        TABLE_NAME: props.table.tableName,
        POWERTOOLS_SERVICE_NAME: APP_NAME,
        POWERTOOLS_LOG_LEVEL: props.logLevel ?? 'INFO',
        ...props.environment,
        // No NODE_OPTIONS=--enable-source-maps: it parses the bundle's map at every cold start.
        // shared/observability/stack-traces.ts reads the map beside the bundle on the first error.
      },
      bundling: {
        format: OutputFormat.ESM,
        platform: 'node',
        // Shared with the bench, so it measures the bundles that are deployed.
        target: BUNDLE.target,
        mainFields: [...BUNDLE.mainFields],
        banner: BUNDLE.banner,
        minify: BUNDLE.minify,
        esbuildArgs: { '--alias': Object.entries(BUNDLE.alias).map(([name, path]) => `${name}=${path}`) },
        sourceMap: true,
        sourcesContent: false,
        bundleAwsSDK: true,
        externalModules: [],
        forceDockerBundling: false,
        logLevel: LogLevel.WARNING,
      },
    });
    for (const access of [props.tableAccess].flat()) {
      if (access.actions.length > 0) role.addToPrincipalPolicy(tableStatement(props.table, access));
    }

    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions (AWS service authorization reference), so "*" is the only valid resource.',
    });
  }
}

/**
 * Exactly the function's actions, on the table, and only on items whose partition key matches one
 * of its prefixes. DynamoDB sets dynamodb:LeadingKeys to the partition key of every item or key a
 * request names (each item of a transaction, the key condition of a Query), and it is multivalued,
 * hence ForAllValues ("Using IAM policy conditions for fine-grained access control", DynamoDB
 * developer guide). ForAllValues also passes a request that carries no such key (Scan,
 * DescribeTable): none is granted here, every granted action names its items.
 */
export function tableStatement(table: ITableV2, access: TableAccess): PolicyStatement {
  return new PolicyStatement({
    actions: [...access.actions],
    resources: [table.tableArn],
    conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...access.partitions] } },
  });
}
