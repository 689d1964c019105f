import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Template } from 'aws-cdk-lib/assertions';
import { resourcesOf, templateOf } from './templates';
import { expectWith } from '../support/expect-with';

/** The template without bundling, synthesized once per run. */
let template: Template;
beforeAll(async () => {
  template = await templateOf();
}, 120_000);

const resources = (type: string) => resourcesOf(template, type);
const single = (type: string) => {
  const found = Object.entries(resources(type));
  expectWith(found, type).toHaveLength(1);
  return { logicalId: found[0]![0], ...(found[0]![1] as any) };
};
const alarms = () => Object.entries(resources('AWS::CloudWatch::Alarm')).map(([id, a]) => ({ id, ...a.Properties }));

/** Each metric an alarm reads, plain or inside metric math: namespace, name, statistic, dimensions. */
function metricsOf(
  alarm: any,
): Array<{ namespace: string; name: string; stat: string; dimensions: Record<string, unknown> }> {
  const dims = (list: any[] = []) => Object.fromEntries(list.map((d) => [d.Name, d.Value]));
  if (alarm.MetricName) {
    return [
      {
        namespace: alarm.Namespace,
        name: alarm.MetricName,
        stat: alarm.Statistic ?? alarm.ExtendedStatistic,
        dimensions: dims(alarm.Dimensions),
      },
    ];
  }
  return alarm.Metrics.filter((m: any) => m.MetricStat).map((m: any) => ({
    namespace: m.MetricStat.Metric.Namespace,
    name: m.MetricStat.Metric.MetricName,
    stat: m.MetricStat.Stat,
    dimensions: dims(m.MetricStat.Metric.Dimensions),
  }));
}
const expressionOf = (alarm: any): string | undefined => alarm.Metrics?.find((m: any) => m.Expression)?.Expression;
const alarmsOn = (namespace: string, name: string) =>
  alarms().filter((a) => metricsOf(a).some((m) => m.namespace === namespace && m.name === name));

const functionIds = () => Object.keys(resources('AWS::Lambda::Function'));
const authorizerId = () => functionIds().find((id) => id.startsWith('AuthorizerFunction'))!;

/** GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to dashes. */
const anchor = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replace(/ /g, '-');
const runbookAnchors = () =>
  readFileSync(join(import.meta.dirname, '../../docs/runbooks.md'), 'utf8')
    .split('\n')
    .filter((line) => /^#{1,6} /.test(line))
    .map((line) => anchor(line.replace(/^#+ /, '')));

describe('alarms that mean something', () => {
  it('links every alarm to a section of docs/runbooks.md that exists', () => {
    const anchors = runbookAnchors();
    for (const alarm of alarms()) {
      const link = /Runbook: docs\/runbooks\.md#([\w-]+)$/.exec(alarm.AlarmDescription);
      expectWith(link, alarm.id).not.toBeNull();
      expectWith(anchors, `${alarm.id} → #${link![1]}`).toContain(link![1]);
    }
  });

  it('alarms on the 5xx rate only over at least 100 requests in 5 minutes', () => {
    const [rate] = alarmsOn('AWS/ApiGateway', '5XXError');
    expect(alarmsOn('AWS/ApiGateway', '5XXError')).toHaveLength(1);
    expect(expressionOf(rate)).toBe('IF(requests >= 100, errors / requests, 0)');
    const stage = single('AWS::ApiGateway::Stage').logicalId;
    expect(metricsOf(rate)).toEqual(
      expect.arrayContaining([
        {
          namespace: 'AWS/ApiGateway',
          name: 'Count',
          stat: 'Sum',
          dimensions: { ApiName: 'tfc-tags-comments-test', Stage: { Ref: stage } },
        },
        {
          namespace: 'AWS/ApiGateway',
          name: '5XXError',
          stat: 'Sum',
          dimensions: { ApiName: 'tfc-tags-comments-test', Stage: { Ref: stage } },
        },
      ]),
    );
    expect(rate).toMatchObject({
      Threshold: 0.01,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it('alarms on p99 latency only over at least 100 requests', () => {
    const [latency] = alarmsOn('AWS/ApiGateway', 'Latency');
    expect(expressionOf(latency)).toBe('IF(requests >= 100, latency, 0)');
    expect(
      metricsOf(latency)
        .map((m) => `${m.name}/${m.stat}`)
        .sort(),
    ).toEqual(['Count/Sum', 'Latency/p99']);
    expect(latency.Threshold).toBe(2000);
  });

  it('alarms on the authorizer’s failures (its Lambda Errors), apart from the API functions’', () => {
    // Every version's errors; the rollback alarms, on the version being deployed, are deployments.test.ts's.
    const errors = alarmsOn('AWS/Lambda', 'Errors').filter((a) => !('ExecutedVersion' in metricsOf(a)[0]!.dimensions));
    expect(errors).toHaveLength(functionIds().length);
    const authorizer = errors.filter(
      (a) =>
        metricsOf(a)[0]!.dimensions.FunctionName &&
        (metricsOf(a)[0]!.dimensions.FunctionName as any).Ref === authorizerId(),
    );
    expect(authorizer).toHaveLength(1);
    expect(authorizer[0]!.AlarmDescription).toContain('#alarm-authorizer-errors');
    expect(authorizer[0]!.Threshold).toBe(3);
  });

  it('alarms on throttles: each function’s Lambda Throttles, and API Gateway’s 429s counted from the access log', () => {
    // Every function a request reaches; the scheduled sweeper is unreserved, and Lambda retries a throttled run of it on its own.
    const throttles = alarmsOn('AWS/Lambda', 'Throttles');
    expect(throttles.map((a) => (metricsOf(a)[0]!.dimensions.FunctionName as any).Ref).sort()).toEqual(
      functionIds()
        .filter((id) => !id.startsWith('SweeperFunction'))
        .sort(),
    );

    const filter = single('AWS::Logs::MetricFilter').Properties;
    expect(filter.FilterPattern).toBe('{ $.errorType = "THROTTLED" }');
    expect(filter.LogGroupName).toEqual({ Ref: expect.stringMatching(/AccessLogs/) });
    expect(filter.MetricTransformations).toEqual([
      { MetricNamespace: 'TfcTagsComments', MetricName: 'GatewayThrottled-tfc-tags-comments-test', MetricValue: '1' },
    ]);
    expect(alarmsOn('TfcTagsComments', 'GatewayThrottled-tfc-tags-comments-test')).toHaveLength(1);
    // The access log really records the error type under that name.
    expect(JSON.parse(single('AWS::ApiGateway::Stage').Properties.AccessLogSetting.Format).errorType).toBe(
      '$context.error.responseType',
    );
  });

  it('alarms on each WAF rule’s blocks with the metric names and dimensions WAF publishes', () => {
    const acl = single('AWS::WAFv2::WebACL').Properties;
    const blocking = acl.Rules.filter((r: any) => r.Action?.Block || r.OverrideAction?.None);
    expect(blocking.length).toBeGreaterThan(0);
    const waf = alarmsOn('AWS/WAFV2', 'BlockedRequests');
    expect(waf).toHaveLength(blocking.length);
    for (const rule of blocking) {
      const matching = waf.filter((a) => metricsOf(a)[0]!.dimensions.Rule === rule.VisibilityConfig.MetricName);
      expectWith(matching, rule.Name).toHaveLength(1);
      expect(metricsOf(matching[0])[0]).toEqual({
        namespace: 'AWS/WAFV2',
        name: 'BlockedRequests',
        stat: 'Sum',
        dimensions: {
          WebACL: acl.VisibilityConfig.MetricName,
          Rule: rule.VisibilityConfig.MetricName,
          Region: 'eu-west-1',
        },
      });
    }
  });

  it('alarms on DynamoDB system errors and throttles of the table; not on transactions, which it has none of', () => {
    expect(alarmsOn('AWS/DynamoDB', 'TransactionConflict')).toEqual([]);
    expect(alarmsOn('AWS/DynamoDB', 'SystemErrors')).toHaveLength(1);
    expect(alarmsOn('AWS/DynamoDB', 'ReadThrottleEvents')).toEqual(alarmsOn('AWS/DynamoDB', 'WriteThrottleEvents'));
    expect(alarmsOn('AWS/DynamoDB', 'ReadThrottleEvents')).toHaveLength(1);
  });

  it('alarms when requests keep giving up on a busy run or organization, counted by their low-cardinality hotSpot', () => {
    const [gaveUp, ...others] = alarmsOn('TfcTagsComments', 'HotSpotGaveUp');
    expect(others).toEqual([]);
    expect(
      metricsOf(gaveUp)
        .map((m) => m.dimensions.hotSpot)
        .sort(),
    ).toEqual(['organization', 'run']);
    expect(metricsOf(gaveUp).every((m) => m.stat === 'Sum')).toBe(true);
    expect(expressionOf(gaveUp)).toBe('g0 + g1');
    expect(gaveUp).toMatchObject({
      Threshold: 10,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(gaveUp.AlarmDescription).toMatch(/Runbook: docs\/runbooks\.md#one-run-is-busy$/);
  });

  it('treats missing data as fine and sends every alarm and recovery to one encrypted topic', () => {
    const topic = single('AWS::SNS::Topic');
    expect(topic.Properties.KmsMasterKeyId).toBeDefined();
    for (const alarm of alarms()) {
      expectWith(alarm.TreatMissingData, alarm.id).toBe('notBreaching');
      expect(alarm.AlarmActions).toEqual([{ Ref: topic.logicalId }]);
      expect(alarm.OKActions).toEqual([{ Ref: topic.logicalId }]);
    }
  });
});

describe('the dashboard', () => {
  /** The dashboard body with its references left as `<Ref>` markers, parsed. */
  const body = () => {
    const parts = single('AWS::CloudWatch::Dashboard').Properties.DashboardBody['Fn::Join'][1] as unknown[];
    return JSON.parse(parts.map((p) => (typeof p === 'string' ? p : '<Ref>')).join(''));
  };
  const metricRows = (): unknown[][] =>
    body()
      .widgets.filter((w: any) => w.type === 'metric')
      .flatMap((w: any) => w.properties.metrics as unknown[][]);
  const rowsOf = (namespace: string, name: string) =>
    metricRows().filter((row) => row[0] === namespace && row[1] === name);

  it('shows the business and health metrics the functions emit (EMF, namespace TfcTagsComments)', () => {
    for (const name of [
      'ReservedTagKeyCreated',
      'ReservedTagKeyUpdated',
      'ReservedTagKeyDeleted',
      'CommentCreated',
      'StoreUnavailable',
    ]) {
      expectWith(rowsOf('TfcTagsComments', name), name).toEqual([
        ['TfcTagsComments', name, 'service', 'tfc-tags-comments', expect.any(Object)],
      ]);
    }
    for (const name of ['HotSpotWaits', 'HotSpotGaveUp', 'HotSpotWaitTime']) {
      expectWith(
        rowsOf('TfcTagsComments', name)
          .map((row) => row[row.indexOf('hotSpot') + 1])
          .sort(),
        name,
      ).toEqual(['organization', 'run']);
    }
    const reasons = rowsOf('TfcTagsComments', 'AuthorizationOutcome').map((row) => row[row.indexOf('reason') + 1]);
    expect(reasons.sort()).toEqual([
      'allowed',
      'expired',
      'forbidden',
      'malformed',
      'not-visible',
      'revoked',
      'unknown',
    ]);
    const coldStarts = rowsOf('TfcTagsComments', 'ColdStart').map((row) => row[row.indexOf('function_name') + 1]);
    expect(coldStarts.sort()).toEqual([
      'authorizer',
      'comments/create',
      'comments/list',
      'comments/show',
      'ping',
      'reserved-tag-keys/create',
      'reserved-tag-keys/delete',
      'reserved-tag-keys/list',
      'reserved-tag-keys/update',
      'run-notifications/receive',
    ]);
  });

  it('shows WAF blocks per rule under the web ACL’s and rules’ metric names', () => {
    const acl = single('AWS::WAFv2::WebACL').Properties;
    const rows = rowsOf('AWS/WAFV2', 'BlockedRequests');
    expect(rows.map((row) => row[row.indexOf('Rule') + 1]).sort()).toEqual(
      acl.Rules.map((r: any) => r.VisibilityConfig.MetricName).sort(),
    );
    for (const row of rows) expect(row[row.indexOf('WebACL') + 1]).toBe(acl.VisibilityConfig.MetricName);
  });

  it('is an output, with the table name', () => {
    const outputs = template.toJSON().Outputs;
    expect(outputs.DashboardName.Value).toEqual({ Ref: single('AWS::CloudWatch::Dashboard').logicalId });
    expect(outputs.TableName.Value).toEqual({ Ref: single('AWS::DynamoDB::GlobalTable').logicalId });
  });
});
