import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm, ComparisonOperator, Dashboard, GraphWidget, MathExpression, Metric, TextWidget, TreatMissingData,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation, type ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { APP_NAME } from '#shared/config';
import { pascalCase } from './names';

export interface MonitoringProps {
  stage: Stage;
  /** Every Lambda of the stack, by its function name (route-table name or the authorizer). */
  functions: ReadonlyMap<string, IFunction>;
  table: ITableV2;
  webAcl: CfnWebACL;
  /** Optional address subscribed to the alarm topic (context `alarmEmail`). */
  alarmEmail?: string;
}

/** Thresholds, tuned for an API whose requests take tens of milliseconds. */
export const ALARM_THRESHOLDS = {
  /** Share of requests answered 5xx, per minute, 3 minutes out of 5. */
  api5xxRate: 0.01,
  /** p99 of the whole request (authorizer + function), per 5 minutes, 3 periods in a row. */
  apiP99LatencyMs: 2000,
  /** Unhandled function errors (timeouts, crashes: handled errors are 4xx/5xx responses) per 5 min. */
  lambdaErrors: 5,
  /** Any throttle means clients got a 5xx: the account's concurrency ran out. */
  lambdaThrottles: 1,
  dynamoSystemErrors: 1,
  dynamoThrottles: 1,
} as const;

/** The operations the functions issue: system errors are reported per operation. */
const TABLE_OPERATIONS = [
  Operation.GET_ITEM, Operation.QUERY, Operation.PUT_ITEM,
  Operation.UPDATE_ITEM, Operation.DELETE_ITEM, Operation.TRANSACT_WRITE_ITEMS,
];

/**
 * Alarms on what a user would notice (5xx, slow answers) and on their usual causes (function
 * errors, Lambda or DynamoDB throttling), all sent to one encrypted SNS topic; and one dashboard.
 */
export class Monitoring extends Construct {
  readonly alarmTopic: Topic;
  readonly dashboard: Dashboard;
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const { stage, table } = props;

    // CloudWatch can only publish to an encrypted topic whose key lets it: a customer managed key.
    const key = new Key(this, 'AlarmTopicKey', {
      description: `${APP_NAME} alarm topic encryption`,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });
    key.grant(new ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
    this.alarmTopic = new Topic(this, 'AlarmTopic', { masterKey: key, enforceSSL: true });
    if (props.alarmEmail) this.alarmTopic.addSubscription(new EmailSubscription(props.alarmEmail));
    const action = new SnsAction(this.alarmTopic);
    const alarm = (alarmId: string, options: ConstructorParameters<typeof Alarm>[2]) => {
      const created = new Alarm(this, alarmId, { treatMissingData: TreatMissingData.NOT_BREACHING, ...options });
      created.addAlarmAction(action);
      created.addOkAction(action);
      this.alarms.push(created);
      return created;
    };

    const api5xxRate = stage.metricServerError({ statistic: 'Average', period: Duration.minutes(1), label: '5xx rate' });
    const apiP99 = stage.metricLatency({ statistic: 'p99', period: Duration.minutes(5), label: 'latency p99' });
    alarm('Api5xxRate', {
      alarmDescription: 'More than 1% of requests answered 5xx in 3 of the last 5 minutes',
      metric: api5xxRate, threshold: ALARM_THRESHOLDS.api5xxRate, evaluationPeriods: 5, datapointsToAlarm: 3,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    });
    alarm('ApiLatencyP99', {
      alarmDescription: 'p99 latency above 2 s for 15 minutes',
      metric: apiP99, threshold: ALARM_THRESHOLDS.apiP99LatencyMs, evaluationPeriods: 3,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    });

    for (const [name, fn] of props.functions) {
      const id = pascalCase(name);
      alarm(`${id}Errors`, {
        alarmDescription: `functions/${name}.ts: unhandled errors or timeouts`,
        metric: fn.metricErrors({ period: Duration.minutes(5) }), threshold: ALARM_THRESHOLDS.lambdaErrors, evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
      alarm(`${id}Throttles`, {
        alarmDescription: `functions/${name}.ts: throttled (account concurrency exhausted)`,
        metric: fn.metricThrottles({ period: Duration.minutes(5) }), threshold: ALARM_THRESHOLDS.lambdaThrottles, evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }

    const systemErrors = table.metricSystemErrorsForOperations({ operations: TABLE_OPERATIONS, period: Duration.minutes(5) });
    const throttles = new MathExpression({
      label: 'throttle events',
      expression: 'reads + writes',
      usingMetrics: {
        reads: table.metric('ReadThrottleEvents', { statistic: 'Sum' }),
        writes: table.metric('WriteThrottleEvents', { statistic: 'Sum' }),
      },
      period: Duration.minutes(5),
    });
    alarm('TableSystemErrors', {
      alarmDescription: 'DynamoDB answered with system errors (HTTP 500)',
      metric: systemErrors, threshold: ALARM_THRESHOLDS.dynamoSystemErrors, evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    alarm('TableThrottles', {
      alarmDescription: 'DynamoDB throttled requests (a hot partition: see README, scale)',
      metric: throttles, threshold: ALARM_THRESHOLDS.dynamoThrottles, evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });

    const functions = [...props.functions.entries()];
    const perFunction = (metric: (fn: IFunction) => IMetric) => functions.map(([, fn]) => metric(fn));
    const waf = (rule: string) => new Metric({
      namespace: 'AWS/WAFV2',
      metricName: 'BlockedRequests',
      dimensionsMap: { WebACL: props.webAcl.webAclRef.webAclName, Region: stage.stack.region, Rule: rule },
      statistic: 'Sum',
      label: rule,
    });

    this.dashboard = new Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    this.dashboard.addWidgets(
      new TextWidget({ markdown: `# ${APP_NAME} · stage ${stage.stageName}`, width: 24, height: 1 }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Requests and errors', width: 8,
        left: [stage.metricCount({ statistic: 'Sum' }), stage.metricClientError({ statistic: 'Sum' }), stage.metricServerError({ statistic: 'Sum' })],
      }),
      new GraphWidget({
        title: 'Latency (ms)', width: 8,
        left: [
          stage.metricLatency({ statistic: 'p50' }), stage.metricLatency({ statistic: 'p99' }),
          stage.metricIntegrationLatency({ statistic: 'p99' }),
        ],
      }),
      new GraphWidget({
        title: 'WAF blocked requests', width: 8,
        left: [waf('PerTokenRateLimit'), waf('BodyOver64KiB')],
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'Lambda p99 duration (ms)', width: 8, left: perFunction((fn) => fn.metricDuration({ statistic: 'p99' })) }),
      new GraphWidget({ title: 'Lambda errors', width: 8, left: perFunction((fn) => fn.metricErrors()) }),
      new GraphWidget({ title: 'Lambda throttles and concurrency', width: 8,
        left: perFunction((fn) => fn.metricThrottles()),
        right: perFunction((fn) => fn.metric('ConcurrentExecutions', { statistic: 'Maximum' })) }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'DynamoDB consumed capacity', width: 8,
        left: [table.metricConsumedReadCapacityUnits({ statistic: 'Sum' }), table.metricConsumedWriteCapacityUnits({ statistic: 'Sum' })],
      }),
      new GraphWidget({ title: 'DynamoDB throttles and system errors', width: 8, left: [throttles, systemErrors] }),
      new GraphWidget({
        title: 'DynamoDB conditional check failures', width: 8,
        left: [table.metricConditionalCheckFailedRequests({ statistic: 'Sum' })],
      }),
    );
  }
}

