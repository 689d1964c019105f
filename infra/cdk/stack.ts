import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import {
  AttributeType,
  Billing,
  ProjectionType,
  TableEncryptionV2,
  TableV2,
  type ITableV2,
  type TablePropsV2,
} from 'aws-cdk-lib/aws-dynamodb';
import { HealthCheck, HealthCheckType } from 'aws-cdk-lib/aws-route53';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { API_BASE_PATH, APP_NAME } from '#shared/config';
import { HEALTH_ROUTE } from '#shared/health';
import { LOOPBACK_ISSUERS_ENV } from '#shared/workload-identity/issuer-keys';
import {
  AUTHORIZER_FUNCTION,
  AUTHORIZER_TABLE_ACCESS,
  functionNames,
  routeOf,
  routes,
  type Route,
} from '#shared/routes';
import { EXPIRY_INDEX, EXPIRY_KEYS } from '#shared/store/expiry';
import { SWEEPER_FUNCTION } from '#shared/sweeper';
import { TABLE_KEYS } from '#shared/store/table';
import {
  checkBurstFitsConcurrency,
  checkReservationsFitAccount,
  checkThrottleFitsAccount,
  LOCAL_STAGE,
  stageConfigFrom,
  validStage,
  type StageConfig,
} from './config';
import { ApiFunction } from './constructs/api-function';
import { Deployments } from './constructs/deployment';
import { GameDay } from './constructs/game-day';
import { JsonApiGateway } from './constructs/json-api-gateway';
import { Monitoring } from './constructs/monitoring';
import { PublicAddress } from './constructs/public-address';
import { Sweeper } from './constructs/sweeper';
import { Waf } from './constructs/waf';
import { pascalCase } from './constructs/names';

export { DEFAULT_STAGE, validStage } from './config';

/** One stack per stage, so `dev` and `prod` live side by side in one account. */
export const stackNameFor = (stage: string) => `${APP_NAME}-${validStage(stage)}`;

export interface ApiStackProps extends StackProps {
  stage: string;
  /** The routes to deploy; the route table by default (tests may pass another). */
  routes?: readonly Route[];
  /**
   * A multi-Region stage (infra/cdk/regions.ts): this stack is one Region's API over that Region's
   * replica of the global table named here (created by the stage's table stack, which deploys
   * first), with the deep health route, a Route 53 health check and latency record, and the game
   * day's experiment templates (with AWS's FIS extension on every function, which the second needs).
   */
  globalTable?: { tableName: string; stack: Stack };
}

/**
 * Each Region's Route 53 health check and latency record. A Region that cannot serve is out of
 * DNS after failureThreshold × requestInterval (30 s), and resolvers stop giving its address once
 * the record's TTL has run out (60 s): the recovery time objective is 30 + 60 = 90 s.
 */
export const FAILOVER = {
  requestIntervalSeconds: 10,
  failureThreshold: 3,
  recordTtlSeconds: 60,
} as const;
/**
 * The game day's stop conditions (both experiments): alarms of the Region under test that mean harm
 * beyond the fault it injects. Its expected effects (5xx, function errors and failed health checks
 * in that Region while traffic moves) are what the runbook watches, not reasons to stop. DynamoDB's
 * own errors (HTTP 500) and throttling are what neither fault gives: a paused replica refuses
 * requests as AccessDenied, and stopped functions send the replica none.
 */
export const GAME_DAY_STOP_ALARMS: readonly string[] = ['TableSystemErrors', 'TableThrottles'];

/** Requests go elsewhere within this many seconds of a Region failing (docs/deploying.md). */
export const RECOVERY_TIME_OBJECTIVE_SECONDS =
  FAILOVER.requestIntervalSeconds * FAILOVER.failureThreshold + FAILOVER.recordTtlSeconds;

/**
 * The deployed API: the route table on API Gateway (REST) with a Lambda per function, the
 * REQUEST authorizer, one DynamoDB table and the sweeper of its expired items, WAF in front,
 * alarms and a dashboard.
 */
export class ApiStack extends Stack {
  /** The stage's settings, from context (infra/cdk/config.ts). */
  readonly config: StageConfig;
  readonly table: ITableV2;
  readonly functions: ReadonlyMap<string, ApiFunction>;
  /** Each function's `live` alias (what API Gateway invokes) and how CodeDeploy moves it. */
  readonly deployments: Deployments;
  readonly gateway: JsonApiGateway;
  /** The scheduled function that deletes expired items (shared/store/sweep.ts). */
  readonly sweeper: Sweeper;

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, {
      description: `${APP_NAME} (${props.stage}): HCP Terraform-compatible Reserved Tag Keys and Comments APIs`,
      ...props,
    });
    const config = stageConfigFrom(this.node, props.stage);
    this.config = config;
    const { stage } = config;
    const global = props.globalTable;
    // The deep health route where a health check calls it (config.ts, healthRoute): a single-Region stage keeps its template.
    const routeTable = props.routes ?? (global || config.healthRoute ? [...routes, HEALTH_ROUTE] : routes);

    // In a multi-Region stage, the table in this stack's Region (the global table's replica here):
    // every ARN granted below names this Region.
    this.table = global
      ? TableV2.fromTableName(this, 'Table', global.tableName)
      : config.tableName
        ? TableV2.fromTableName(this, 'Table', config.tableName)
        : new TableV2(this, 'Table', tableProps());
    if (global) this.addStackDependency(global.stack, 'its functions use the global table the table stack creates');

    const names = functionNames(routeTable);
    checkReservationsFitAccount(config, names.length);
    const common = {
      table: this.table,
      memorySize: config.memorySize,
      logRetention: config.logRetentionDays as RetentionDays,
    };
    const functions = new Map<string, ApiFunction>();
    for (const name of names) {
      functions.set(
        name,
        new ApiFunction(this, constructId(name), {
          ...common,
          name,
          tableAccess: routeOf(name, routeTable).table,
          reservedConcurrency: config.reservedConcurrency,
        }),
      );
    }
    const authorizer = new ApiFunction(this, constructId(AUTHORIZER_FUNCTION), {
      ...common,
      name: AUTHORIZER_FUNCTION,
      tableAccess: AUTHORIZER_TABLE_ACCESS,
      reservedConcurrency: config.authorizerReservedConcurrency,
      // Only the local stack's issuer is http:// on 127.0.0.1; every deployed stage trusts https:// issuers alone.
      ...(stage === LOCAL_STAGE ? { environment: { [LOOPBACK_ISSUERS_ENV]: 'allowed' } } : {}),
    });
    this.functions = functions;
    // Deletes what has expired (create receipts, tombstones), on a schedule: the table has no TTL.
    this.sweeper = new Sweeper(this, 'Sweeper', {
      table: this.table,
      memorySize: config.memorySize,
      logRetention: common.logRetention,
    });

    // API Gateway invokes each function's `live` alias, never $LATEST: a deploy publishes a version
    // and CodeDeploy moves the alias to it per the stage's deploymentConfig.
    this.deployments = new Deployments(this, 'Deployments', {
      functions: new Map([...functions, [AUTHORIZER_FUNCTION, authorizer]]),
      deploymentConfig: config.deploymentConfig,
      runbookUrl: config.runbookUrl,
    });
    const live = (name: string) => this.deployments.aliases.get(name)!;

    this.gateway = new JsonApiGateway(this, 'Gateway', {
      stage,
      routes: routeTable,
      functions: new Map(names.map((name) => [name, live(name)])),
      authorizer: live(AUTHORIZER_FUNCTION),
      // Applied by API Gateway to each method on its own; sized against the reservations (config.ts, DEFAULTS).
      throttle: { rateLimit: config.throttleRateLimit, burstLimit: config.throttleBurstLimit },
      authorizerCacheTtlSeconds: config.authorizerCacheTtlSeconds,
      cloudWatchRole: config.apiGatewayCloudWatchRole,
      disableExecuteApiEndpoint: config.disableExecuteApiEndpoint,
    });
    checkThrottleFitsAccount(config, this.gateway.api.methods.length);
    // A burst is refused by the gateway, never by Lambda past a reservation (config.ts, DEFAULTS).
    checkBurstFitsConcurrency(config, [
      ...names.map((name) => ({
        name,
        methods: routeTable.filter((r) => r.function === name).length,
        reservedConcurrency: config.reservedConcurrency,
      })),
      {
        name: AUTHORIZER_FUNCTION,
        methods: routeTable.filter((r) => r.role !== null).length,
        reservedConcurrency: config.authorizerReservedConcurrency,
      },
    ]);
    const healthCheck = global ? this.addHealthCheck() : undefined;
    const address = new PublicAddress(this, 'PublicAddress', {
      stage: this.gateway.api.deploymentStage,
      domain: config.domainName
        ? {
            domainName: config.domainName,
            certificateArn: config.certificateArn,
            hostedZone: config.hostedZone,
            ...(healthCheck
              ? { latency: { region: this.region, healthCheck, ttl: Duration.seconds(FAILOVER.recordTtlSeconds) } }
              : {}),
          }
        : undefined,
    });
    const waf = new Waf(this, 'Waf', { stage: this.gateway.api.deploymentStage, front: address.front });

    const monitoring = new Monitoring(this, 'Monitoring', {
      stage: this.gateway.api.deploymentStage,
      functions,
      authorizer: { name: AUTHORIZER_FUNCTION, fn: authorizer },
      sweeper: { name: SWEEPER_FUNCTION, fn: this.sweeper.fn },
      table: this.table,
      accessLogs: this.gateway.accessLogs,
      runbookUrl: config.runbookUrl,
      webAcl: waf.webAcl,
      ...(config.alarmEmail ? { alarmEmail: config.alarmEmail } : {}),
    });
    this.deployments.notify(monitoring.alarmTopic);
    if (global) {
      // The game day (docs/runbooks.md): cut this Region's replica off, or stop its functions, and
      // watch traffic leave and come back.
      const gameDay = new GameDay(this, 'GameDay', {
        stage,
        table: this.table,
        // Every function of the Region: stopping them (the second experiment) leaves nothing running here.
        functions: [...functions.values(), authorizer, this.sweeper.fn],
        stopAlarms: monitoring.alarms.filter((alarm) => GAME_DAY_STOP_ALARMS.includes(alarm.node.id)),
      });
      new CfnOutput(this, 'GameDayTemplateId', {
        value: gameDay.template.attrId,
        description:
          "Pause this Region's replica: aws fis start-experiment --experiment-template-id <this> (docs/runbooks.md, The game day)",
      });
      new CfnOutput(this, 'GameDayStopFunctionsTemplateId', {
        value: gameDay.stopFunctions.template.attrId,
        description:
          "Stop this Region's functions: aws fis start-experiment --experiment-template-id <this> (docs/runbooks.md, The game day)",
      });
      new CfnOutput(this, 'HealthCheckId', {
        value: healthCheck!.healthCheckId,
        description: `This Region's Route 53 health check (${API_BASE_PATH}${HEALTH_ROUTE.path})`,
      });
    }

    new CfnOutput(this, 'TfeAddress', {
      value: address.url,
      description:
        'The address to give clients: go-tfe Config.Address and python-tfe url as is; Terraform (hostname, credentials block) and the tfe provider take its host name',
    });
    if (address.customDomain && !config.hostedZone) {
      new CfnOutput(this, 'DomainDnsTarget', {
        value: address.customDomain.domainNameAliasDomainName,
        description: `Point ${config.domainName} here (CNAME, or an alias record) in your DNS`,
      });
    }
    new CfnOutput(this, 'TableName', {
      value: this.table.tableName,
      description: 'TABLE_NAME for the operator CLI (npm run admin)',
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      value: monitoring.alarmTopic.topicArn,
      description: 'Subscribe here to receive alarms',
    });
    new CfnOutput(this, 'DashboardName', { value: monitoring.dashboard.dashboardName });
  }

  /**
   * Route 53's check of this Region: HTTPS to the stage's own execute-api host (never the domain,
   * which DNS would send to whichever Region is nearest the checker), on the deep health route, which
   * answers 200 only after a strongly consistent read of this Region's replica.
   */
  private addHealthCheck(): HealthCheck {
    const { api } = this.gateway;
    return new HealthCheck(this, 'HealthCheck', {
      type: HealthCheckType.HTTPS,
      fqdn: `${api.restApiId}.execute-api.${this.region}.${this.urlSuffix}`,
      resourcePath: `/${api.deploymentStage.stageName}${API_BASE_PATH}${HEALTH_ROUTE.path}`,
      requestInterval: Duration.seconds(FAILOVER.requestIntervalSeconds),
      failureThreshold: FAILOVER.failureThreshold,
    });
  }
}

/**
 * The table, when the stage does not adopt one: same keys and index as the local store
 * (shared/store/table.ts). Retained on delete; a later deploy adopts it with context `tableName`.
 * No TTL and no local secondary index, which a global table in multi-Region strong consistency
 * refuses: expiring items carry their own expiry, listed by the sparse Expiry index, and the
 * sweeper deletes them (shared/store/expiry.ts). The multi-Region stage's global table has the
 * same (infra/cdk/regions.ts).
 */
export function tableProps(): TablePropsV2 {
  return {
    partitionKey: { name: TABLE_KEYS.partitionKey, type: AttributeType.STRING },
    sortKey: { name: TABLE_KEYS.sortKey, type: AttributeType.STRING },
    globalSecondaryIndexes: [
      {
        indexName: EXPIRY_INDEX,
        partitionKey: { name: EXPIRY_KEYS.shard, type: AttributeType.STRING },
        sortKey: { name: EXPIRY_KEYS.sweepAt, type: AttributeType.NUMBER },
        projectionType: ProjectionType.KEYS_ONLY,
      },
    ],
    billing: Billing.onDemand(),
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    deletionProtection: true,
    // Encrypted with the account's AWS managed key (aws/dynamodb): visible in CloudTrail, no key to run.
    encryption: TableEncryptionV2.awsManagedKey(),
    removalPolicy: RemovalPolicy.RETAIN,
  };
}

/** `reserved-tag-keys/create` → `ReservedTagKeysCreateFunction`. */
export const constructId = (functionName: string) => `${pascalCase(functionName)}Function`;
