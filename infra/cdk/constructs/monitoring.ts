import { Duration, RemovalPolicy, Stack, Tokenization, type IResolvable } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
  type AlarmProps,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation, type ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { FilterPattern, MetricFilter, type ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { APP_NAME } from '#shared/config';
import { AUTHORIZATION_REASONS, HOT_SPOTS, METRIC, METRICS_NAMESPACE } from '#shared/observability/metrics';
import { ACCESS_LOG_FIELDS } from './json-api-gateway';
import { pascalCase } from './names';

export interface MonitoringProps {
  stage: Stage;
  /** The API's Lambdas, by route-table function name. */
  functions: ReadonlyMap<string, IFunction>;
  /** The REQUEST authorizer's Lambda, by its function name. */
  authorizer: { name: string; fn: IFunction };
  /** The scheduled sweeper of expired items, by its function name. */
  sweeper: { name: string; fn: IFunction };
  table: ITableV2;
  webAcl: CfnWebACL;
  /** The stage's JSON access log: gateway throttles are counted from it. */
  accessLogs: ILogGroup;
  /** Optional address subscribed to the alarm topic (context `alarmEmail`). */
  alarmEmail?: string;
  /** Where docs/runbooks.md is read (context `runbookUrl`); each alarm links to its section. */
  runbookUrl: string;
}

/**
 * The runbook section of each alarm: the GitHub anchor of its heading in docs/runbooks.md
 * ("## Alarm: API 5xx rate" → `alarm-api-5xx-rate`).
 */
export const RUNBOOK = {
  api5xxRate: 'alarm-api-5xx-rate',
  apiLatency: 'alarm-api-latency-p99',
  authorizerErrors: 'alarm-authorizer-errors',
  functionErrors: 'alarm-function-errors',
  sweeperErrors: 'alarm-sweeper-errors',
  functionThrottles: 'alarm-function-throttles',
  gatewayThrottles: 'alarm-gateway-throttles',
  wafBlocks: 'alarm-waf-blocks',
  tableSystemErrors: 'alarm-dynamodb-system-errors',
  tableThrottles: 'alarm-dynamodb-throttles',
  hotSpotGaveUp: 'one-run-is-busy',
} as const;

/** Thresholds, for an API whose requests take tens of milliseconds. Periods are 5 minutes. */
export const ALARM_THRESHOLDS = {
  /** Below this many requests in a period a rate says nothing (1 failure of 20 is 5%): no alarm. */
  minRequests: 100,
  /** Share of requests answered 5xx, in 2 of 3 periods. */
  api5xxRate: 0.01,
  /** p99 of the whole request (authorizer + function), 3 periods in a row. */
  apiP99LatencyMs: 2000,
  /** The authorizer failed (crash, timeout, store down): each is a 503 with Retry-After to a client (AUTHORIZER_FAILURE, see shared/http/gateway-responses.ts). Rejections are not errors. */
  authorizerErrors: 3,
  /** Unhandled function errors (timeouts, crashes: handled errors are 4xx/5xx responses). */
  functionErrors: 5,
  /**
   * Failed sweeper runs (a failed call, a timeout), in 2 of the last 6 five-minute periods: with a
   * run every 15 minutes, two runs in a row. One failure alone is left to the next run.
   */
  sweeperErrors: 1,
  /** Invocations refused: the function used up its reserved concurrency. */
  functionThrottles: 10,
  /** Requests API Gateway answered 429 because a method reached its throttle (not WAF's per-token 429). */
  gatewayThrottles: 50,
  /** Requests a WAF rule blocked: 300 per 5 minutes is one a second, for 15 minutes. */
  wafBlocks: 300,
  dynamoSystemErrors: 1,
  dynamoThrottles: 1,
  /** Transactions refused for a conflict on the same items (the store retries them; persistent = a hot item). */
  /**
   * Requests that gave up waiting on a busy run or organization (each a 503 with Retry-After, nothing
   * written), in 2 of 3 periods: an occasional one is a burst the client retries; a steady stream
   * is a hot spot busier than its writers can wait.
   */
  hotSpotGaveUp: 10,
} as const;

const PERIOD = Duration.minutes(5);

/** The operations the functions issue: system errors are reported per operation. */
const TABLE_OPERATIONS = [
  Operation.GET_ITEM,
  Operation.QUERY,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.TRANSACT_WRITE_ITEMS,
];

/**
 * Alarms on what a user would notice (5xx, slow answers, throttling, blocks) and on their usual
 * causes (function and authorizer failures, DynamoDB errors and throttles), on the
 * sweeper's failures, each
 * linking to its runbook section, all sent to one encrypted SNS topic; and one dashboard.
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
    type AlarmOptions = Omit<AlarmProps, 'alarmDescription' | 'evaluationPeriods'> & { evaluationPeriods?: number };
    const alarm = (alarmId: string, runbook: string, what: string, options: AlarmOptions) => {
      const created = new Alarm(this, alarmId, {
        treatMissingData: TreatMissingData.NOT_BREACHING,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        ...options,
        evaluationPeriods: options.evaluationPeriods ?? 1,
        alarmDescription: `${what}. Runbook: ${props.runbookUrl}#${runbook}`,
      });
      created.addAlarmAction(action);
      created.addOkAction(action);
      this.alarms.push(created);
      return created;
    };

    // API Gateway: rates only over enough requests to mean something.
    const requests = stage.metricCount({ statistic: 'Sum', period: PERIOD });
    const whenBusy = (label: string, expression: string, metrics: Record<string, IMetric>) =>
      new MathExpression({
        label,
        expression: `IF(requests >= ${ALARM_THRESHOLDS.minRequests}, ${expression}, 0)`,
        usingMetrics: { requests, ...metrics },
        period: PERIOD,
      });
    const api5xxRate = whenBusy('5xx rate', 'errors / requests', {
      errors: stage.metricServerError({ statistic: 'Sum', period: PERIOD }),
    });
    const apiP99 = whenBusy('latency p99', 'latency', {
      latency: stage.metricLatency({ statistic: 'p99', period: PERIOD }),
    });
    alarm(
      'Api5xxRate',
      RUNBOOK.api5xxRate,
      `More than 1% of requests answered 5xx in 2 of the last 3 five-minute periods (at ${ALARM_THRESHOLDS.minRequests}+ requests each)`,
      {
        metric: api5xxRate,
        threshold: ALARM_THRESHOLDS.api5xxRate,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      },
    );
    alarm(
      'ApiLatencyP99',
      RUNBOOK.apiLatency,
      `p99 latency above 2 s for 15 minutes (at ${ALARM_THRESHOLDS.minRequests}+ requests per 5 minutes)`,
      {
        metric: apiP99,
        threshold: ALARM_THRESHOLDS.apiP99LatencyMs,
        evaluationPeriods: 3,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      },
    );
    const gatewayThrottled = this.gatewayThrottles(props.accessLogs);
    alarm(
      'GatewayThrottles',
      RUNBOOK.gatewayThrottles,
      `${ALARM_THRESHOLDS.gatewayThrottles}+ requests in 5 minutes answered 429 by the stage's per-method throttle`,
      {
        metric: gatewayThrottled,
        threshold: ALARM_THRESHOLDS.gatewayThrottles,
      },
    );

    // Lambda: the authorizer's failures (its rejections return a Deny policy, not an error), each function's.
    const authorizer = props.authorizer.fn;
    alarm(
      'AuthorizerErrors',
      RUNBOOK.authorizerErrors,
      `functions/${props.authorizer.name}.ts failed ${ALARM_THRESHOLDS.authorizerErrors}+ times in 5 minutes: clients got 503 (retry later) instead of an answer about their token`,
      {
        metric: authorizer.metricErrors({ period: PERIOD }),
        threshold: ALARM_THRESHOLDS.authorizerErrors,
      },
    );
    for (const [name, fn] of props.functions) {
      alarm(
        `${pascalCase(name)}Errors`,
        RUNBOOK.functionErrors,
        `functions/${name}.ts: ${ALARM_THRESHOLDS.functionErrors}+ unhandled errors or timeouts in 5 minutes`,
        {
          metric: fn.metricErrors({ period: PERIOD }),
          threshold: ALARM_THRESHOLDS.functionErrors,
        },
      );
    }
    // The sweeper: off the request path, unreserved (Lambda retries a throttled scheduled run on its own).
    const sweeper = props.sweeper.fn;
    alarm(
      'SweeperErrors',
      RUNBOOK.sweeperErrors,
      `functions/${props.sweeper.name}.ts: 1+ failed runs in 2 of the last 6 five-minute periods (two runs in a row): expired items (create receipts, tombstones) are not being deleted`,
      {
        metric: sweeper.metricErrors({ period: PERIOD }),
        threshold: ALARM_THRESHOLDS.sweeperErrors,
        evaluationPeriods: 6,
        datapointsToAlarm: 2,
      },
    );
    const everyFunction: Array<[string, IFunction]> = [...props.functions, [props.authorizer.name, authorizer]];
    for (const [name, fn] of everyFunction) {
      alarm(
        `${pascalCase(name)}Throttles`,
        RUNBOOK.functionThrottles,
        `functions/${name}.ts: ${ALARM_THRESHOLDS.functionThrottles}+ invocations throttled in 5 minutes (its reserved concurrency is used up)`,
        {
          metric: fn.metricThrottles({ period: PERIOD }),
          threshold: ALARM_THRESHOLDS.functionThrottles,
        },
      );
    }

    // WAF: one alarm per rule that blocks, on the metric WAF publishes for it.
    const waf = new WafMetrics(props.webAcl, Stack.of(this).region);
    for (const rule of waf.rules.filter((r) => r.blocks)) {
      alarm(
        `WafBlocks${pascalCase(rule.name)}`,
        RUNBOOK.wafBlocks,
        `WAF rule ${rule.name} blocked ${ALARM_THRESHOLDS.wafBlocks}+ requests in each of the last three 5-minute periods`,
        {
          metric: waf.blocked(rule.metricName, rule.name),
          threshold: ALARM_THRESHOLDS.wafBlocks,
          evaluationPeriods: 3,
        },
      );
    }

    // DynamoDB.
    const systemErrors = table.metricSystemErrorsForOperations({ operations: TABLE_OPERATIONS, period: PERIOD });
    const throttles = new MathExpression({
      label: 'throttle events',
      expression: 'reads + writes',
      usingMetrics: {
        reads: table.metric('ReadThrottleEvents', { statistic: 'Sum' }),
        writes: table.metric('WriteThrottleEvents', { statistic: 'Sum' }),
      },
      period: PERIOD,
    });
    // Lost rounds on a hot spot and repeated derived writes: contention, not a fault (no alarm; HotSpotGaveUp is the one).
    const refusals = table.metric('ConditionalCheckFailedRequests', {
      statistic: 'Sum',
      period: PERIOD,
      label: 'conditional writes refused',
    });
    alarm('TableSystemErrors', RUNBOOK.tableSystemErrors, 'DynamoDB answered with system errors (HTTP 500)', {
      metric: systemErrors,
      threshold: ALARM_THRESHOLDS.dynamoSystemErrors,
    });
    alarm(
      'TableThrottles',
      RUNBOOK.tableThrottles,
      "DynamoDB throttled requests (a hot partition or the table's on-demand limit)",
      {
        metric: throttles,
        threshold: ALARM_THRESHOLDS.dynamoThrottles,
      },
    );

    const functionMetrics = (metric: (fn: IFunction) => IMetric) => everyFunction.map(([, fn]) => metric(fn));
    const app = (
      metricName: string,
      dimensionsMap: Record<string, string> = {},
      label = metricName,
      statistic = 'Sum',
    ) =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName,
        dimensionsMap: { service: APP_NAME, ...dimensionsMap },
        statistic,
        label,
        period: PERIOD,
      });
    const hotSpot = (metricName: string, statistic: string, what: string) =>
      HOT_SPOTS.map((spot) => app(metricName, { hotSpot: spot }, `${spot}: ${what}`, statistic));
    const gaveUp = new MathExpression({
      expression: HOT_SPOTS.map((_, i) => `g${i}`).join(' + '),
      usingMetrics: Object.fromEntries(
        HOT_SPOTS.map((spot, i) => [`g${i}`, app(METRIC.hotSpotGaveUp, { hotSpot: spot })]),
      ),
      label: 'requests that gave up waiting on a busy run or organization',
      period: PERIOD,
    });
    alarm(
      'HotSpotGaveUp',
      RUNBOOK.hotSpotGaveUp,
      `${ALARM_THRESHOLDS.hotSpotGaveUp}+ requests in 2 of the last 3 five-minute periods gave up waiting on a busy run or organization (503 with Retry-After, nothing written)`,
      {
        metric: gaveUp,
        threshold: ALARM_THRESHOLDS.hotSpotGaveUp,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
      },
    );

    this.dashboard = new Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    this.dashboard.addWidgets(
      new TextWidget({
        markdown: `# ${APP_NAME} · stage ${stage.stageName} · [runbooks](${props.runbookUrl})`,
        width: 24,
        height: 1,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Requests and errors',
        width: 8,
        left: [
          stage.metricCount({ statistic: 'Sum' }),
          stage.metricClientError({ statistic: 'Sum' }),
          stage.metricServerError({ statistic: 'Sum' }),
        ],
        right: [gatewayThrottled],
      }),
      new GraphWidget({
        title: 'Latency (ms)',
        width: 8,
        left: [
          stage.metricLatency({ statistic: 'p50' }),
          stage.metricLatency({ statistic: 'p99' }),
          stage.metricIntegrationLatency({ statistic: 'p99' }),
        ],
      }),
      new GraphWidget({
        title: 'WAF: requests blocked per rule, and allowed',
        width: 8,
        left: waf.rules.map((rule) => waf.blocked(rule.metricName, rule.name)),
        right: [waf.allowed()],
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Reserved tag keys and comments written',
        width: 8,
        left: [
          app(METRIC.reservedTagKeyCreated),
          app(METRIC.reservedTagKeyUpdated),
          app(METRIC.reservedTagKeyDeleted),
          app(METRIC.commentCreated),
        ],
      }),
      new GraphWidget({
        title: 'Authorization outcomes by reason',
        width: 8,
        left: AUTHORIZATION_REASONS.map((reason) => app(METRIC.authorizationOutcome, { reason }, reason)),
      }),
      new GraphWidget({
        title: 'Cold starts per function; store unavailable',
        width: 8,
        left: everyFunction.map(([name]) => app(METRIC.coldStart, { function_name: name }, name)),
        right: [app(METRIC.storeUnavailable)],
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Lambda p99 duration (ms)',
        width: 8,
        left: functionMetrics((fn) => fn.metricDuration({ statistic: 'p99' })),
      }),
      new GraphWidget({ title: 'Lambda errors', width: 8, left: functionMetrics((fn) => fn.metricErrors()) }),
      new GraphWidget({
        title: 'Lambda throttles and concurrency',
        width: 8,
        left: functionMetrics((fn) => fn.metricThrottles()),
        right: functionMetrics((fn) => fn.metric('ConcurrentExecutions', { statistic: 'Maximum' })),
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'DynamoDB consumed capacity',
        width: 8,
        left: [
          table.metricConsumedReadCapacityUnits({ statistic: 'Sum' }),
          table.metricConsumedWriteCapacityUnits({ statistic: 'Sum' }),
        ],
      }),
      new GraphWidget({
        title: 'DynamoDB throttles, system errors and conditional writes refused',
        width: 8,
        left: [throttles, systemErrors],
        right: [refusals],
      }),
      new GraphWidget({
        title: 'Busy runs and organizations: requests that waited, gave up (left); p99 wait ms (right)',
        width: 8,
        left: [...hotSpot(METRIC.hotSpotWaits, 'Sum', 'waited'), ...hotSpot(METRIC.hotSpotGaveUp, 'Sum', 'gave up')],
        right: hotSpot(METRIC.hotSpotWaitTime, 'p99', 'p99 wait'),
      }),
      new GraphWidget({
        title: 'DynamoDB conditional check failures',
        width: 8,
        left: [table.metricConditionalCheckFailedRequests({ statistic: 'Sum' })],
      }),
      new GraphWidget({
        title: 'Sweeper: expired items deleted (left); runs stopped at their bound, and failed (right)',
        width: 8,
        left: [app(METRIC.expiredItemsDeleted, {}, 'expired items deleted')],
        right: [
          app(METRIC.sweepStoppedEarly, {}, 'runs stopped at their bound'),
          sweeper.metricErrors({ statistic: 'Sum', label: 'failed runs' }),
        ],
      }),
    );
  }

  /**
   * API Gateway publishes no metric for its own 429s (they are part of 4XXError): count them from
   * the access log, whose error type is THROTTLED exactly when a method's throttle refused the
   * request. A metric filter cannot add a fixed dimension, so the stage's stack is in the name.
   */
  private gatewayThrottles(accessLogs: ILogGroup): IMetric {
    const field = Object.entries(ACCESS_LOG_FIELDS).find(([, value]) => value === '$context.error.responseType')?.[0];
    if (!field)
      throw new Error('The access log has no $context.error.responseType field to count throttled requests by');
    const metricName = `GatewayThrottled-${Stack.of(this).stackName}`;
    new MetricFilter(this, 'GatewayThrottledFilter', {
      logGroup: accessLogs,
      filterPattern: FilterPattern.stringValue(`$.${field}`, '=', 'THROTTLED'),
      metricNamespace: METRICS_NAMESPACE,
      metricName,
      metricValue: '1',
    });
    return new Metric({
      namespace: METRICS_NAMESPACE,
      metricName,
      statistic: 'Sum',
      period: PERIOD,
      label: 'throttled by API Gateway (429)',
    });
  }
}

/**
 * The metrics a regional web ACL publishes (AWS/WAFV2; dimensions WebACL, Rule, Region): the
 * WebACL and Rule values are the metric names of their visibility configs, read from the web
 * ACL's own configuration so the panels follow its rules.
 */
class WafMetrics {
  readonly webAclMetricName: string;
  readonly rules: Array<{ name: string; metricName: string; blocks: boolean }>;
  private readonly region: string;

  constructor(webAcl: CfnWebACL, region: string) {
    this.region = region;
    this.webAclMetricName = plain(webAcl.visibilityConfig, "the web ACL's visibilityConfig").metricName;
    this.rules = plain(webAcl.rules ?? [], "the web ACL's rules").map((candidate) => {
      const rule = plain(candidate, 'a web ACL rule');
      const action = plain(rule.action ?? {}, `the action of rule ${rule.name}`);
      const override = plain(rule.overrideAction ?? {}, `the override action of rule ${rule.name}`);
      return {
        name: rule.name,
        metricName: plain(rule.visibilityConfig, `the visibilityConfig of rule ${rule.name}`).metricName,
        // A rule blocks with a block action; a rule group with override "none" blocks by its own rules.
        blocks: action.block !== undefined || override.none !== undefined,
      };
    });
  }

  blocked(ruleMetricName: string, label: string): Metric {
    return this.metric('BlockedRequests', ruleMetricName, label);
  }

  /** Every request the web ACL let through: Rule `ALL` is WAF's reserved name for the whole web ACL. */
  allowed(): Metric {
    return this.metric('AllowedRequests', 'ALL', 'allowed');
  }

  private metric(metricName: string, rule: string, label: string): Metric {
    return new Metric({
      namespace: 'AWS/WAFV2',
      metricName,
      dimensionsMap: { WebACL: this.webAclMetricName, Rule: rule, Region: this.region },
      statistic: 'Sum',
      period: PERIOD,
      label,
    });
  }
}

/** A value written in the construct's configuration, not a token resolved at deploy time. */
function plain<T>(value: T | IResolvable, what: string): T {
  if (Tokenization.isResolvable(value)) throw new Error(`Monitoring needs ${what} as plain values, not a token`);
  return value as T;
}
