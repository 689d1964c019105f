import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { AttributeType, Billing, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { APP_NAME } from '#shared/config';
import { AUTHORIZER_FUNCTION, functionNames, routeOf, routes, type Route } from '#shared/routes';
import { TABLE_KEYS } from '#shared/store/table';
import { ApiFunction, AUTHORIZER_TABLE_ACTIONS, TABLE_ACTIONS } from './constructs/api-function';
import { JsonApiGateway } from './constructs/json-api-gateway';
import { Monitoring } from './constructs/monitoring';
import { RateLimit } from './constructs/rate-limit';
import { pascalCase } from './constructs/names';

export const DEFAULT_STAGE = 'dev';

/** API Gateway stage names allow letters, digits, `-` and `_`; stack names no `_`: the intersection. */
export function validStage(stage: string): string {
  if (!/^[a-z][a-z0-9-]{0,30}$/.test(stage)) {
    throw new Error(`Invalid stage "${stage}": lowercase letters, digits and "-", starting with a letter, at most 31 characters`);
  }
  return stage;
}

/** One stack per stage, so `dev` and `prod` live side by side in one account. */
export const stackNameFor = (stage: string) => `${APP_NAME}-${validStage(stage)}`;

/**
 * Stage-wide throttling, the guard above WAF's per-token limit. The account allows 10,000 rps
 * (burst 5,000) shared by every API and stage in the region; 2,000 rps keeps two stages well
 * inside it, and at the ~50 ms an uncached request takes (authorizer + function) it needs ~100
 * concurrent Lambdas, so even at a 500 ms p99 it stays within the default 1,000 concurrency. The
 * burst absorbs half a second of the limit.
 */
export const STAGE_THROTTLE = { rateLimit: 2_000, burstLimit: 1_000 } as const;

export interface ApiStackProps extends StackProps {
  stage: string;
  /** Subscribed to the alarm topic when given. */
  alarmEmail?: string;
  /** The routes to deploy; the route table by default (tests may pass another). */
  routes?: readonly Route[];
}

/**
 * The deployed API: the route table on API Gateway (REST) with a Lambda per function, the
 * REQUEST authorizer, one DynamoDB table, WAF in front, alarms and a dashboard.
 */
export class ApiStack extends Stack {
  readonly table: TableV2;
  readonly functions: ReadonlyMap<string, ApiFunction>;
  readonly gateway: JsonApiGateway;

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, {
      description: `${APP_NAME} (${props.stage}): HCP Terraform-compatible Reserved Tag Keys and Comments APIs`,
      ...props,
    });
    const stage = validStage(props.stage);
    const routeTable = props.routes ?? routes;

    // Same keys as the local store (shared/store/table.ts), so both are the same table.
    this.table = new TableV2(this, 'Table', {
      partitionKey: { name: TABLE_KEYS.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.sortKey, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      // Encrypted with the account's AWS managed key (aws/dynamodb): visible in CloudTrail, no key to run.
      encryption: TableEncryptionV2.awsManagedKey(),
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const functions = new Map<string, ApiFunction>();
    for (const name of functionNames(routeTable)) {
      functions.set(name, new ApiFunction(this, constructId(name), {
        name, table: this.table, tableActions: TABLE_ACTIONS[routeOf(name, routeTable).access],
      }));
    }
    const authorizer = new ApiFunction(this, constructId(AUTHORIZER_FUNCTION), {
      name: AUTHORIZER_FUNCTION, table: this.table, tableActions: AUTHORIZER_TABLE_ACTIONS,
    });
    this.functions = functions;

    this.gateway = new JsonApiGateway(this, 'Gateway', {
      stage, routes: routeTable, functions, authorizer, throttle: STAGE_THROTTLE,
    });
    const rateLimit = new RateLimit(this, 'RateLimit', { stage: this.gateway.api.deploymentStage });

    const monitored = new Map<string, IFunction>([...functions, [AUTHORIZER_FUNCTION, authorizer]]);
    const monitoring = new Monitoring(this, 'Monitoring', {
      stage: this.gateway.api.deploymentStage,
      functions: monitored,
      table: this.table,
      webAcl: rateLimit.webAcl,
      ...(props.alarmEmail ? { alarmEmail: props.alarmEmail } : {}),
    });

    new CfnOutput(this, 'ApiUrl', { value: this.gateway.baseUrl, description: 'Base URL of the API (…/api/v2)' });
    new CfnOutput(this, 'TableName', { value: this.table.tableName, description: 'TABLE_NAME for the operator CLI (npm run admin)' });
    new CfnOutput(this, 'AlarmTopicArn', { value: monitoring.alarmTopic.topicArn, description: 'Subscribe here to receive alarms' });
    new CfnOutput(this, 'DashboardName', { value: monitoring.dashboard.dashboardName });
  }
}

/** `reserved-tag-keys/create` → `ReservedTagKeysCreateFunction`. */
export const constructId = (functionName: string) => `${pascalCase(functionName)}Function`;
