import { beforeAll, describe, expect, it } from '@jest/globals';
import { APP_NAME } from '#shared/config';
import { EXPIRY_INDEX } from '#shared/store/expiry';
import { DEFAULT_MAX_DELETES, MAX_DELETES_ENV, SWEEPER_TIMEOUT_SECONDS } from '#shared/sweeper';
import { ApiFunction } from '#infra/cdk/constructs/api-function';
import type { Template } from 'aws-cdk-lib/assertions';
import { resourcesOf, templateOf } from './templates';
import { expectWith } from '../support/expect-with';

/** The sweeper in the synthesized template (no bundling: its bundle is built as every function's, functions.test.ts). */
let template: Template;
beforeAll(async () => {
  template = await templateOf();
}, 120_000);

const resources = (type: string) => Object.entries(resourcesOf(template, type));
const sweeperFunction = () => {
  const found = resources('AWS::Lambda::Function').filter(
    ([, r]) => r.Properties.Description === `${APP_NAME}: functions/sweeper.ts`,
  );
  expectWith(found, 'one Lambda for functions/sweeper.ts').toHaveLength(1);
  return { logicalId: found[0]![0], ...(found[0]![1] as any) };
};
const tableId = () => resources('AWS::DynamoDB::GlobalTable')[0]![0];
const statementsOfRole = (roleId: string) =>
  resources('AWS::IAM::Policy')
    .filter(([, p]) => p.Properties.Roles.some((r: any) => r.Ref === roleId))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as any[]);

describe('the sweeper function', () => {
  it('is built as every function is: Node 24 on arm64, traced, its own log group, the table name, its bound', () => {
    const { Properties: p } = sweeperFunction();
    expect(p).toMatchObject({
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      MemorySize: ApiFunction.MEMORY_MB,
      Timeout: SWEEPER_TIMEOUT_SECONDS,
      TracingConfig: { Mode: 'Active' },
    });
    expect(p.LoggingConfig.LogGroup.Ref).toMatch(/^SweeperFunctionLogs/);
    expect(p.Environment.Variables).toMatchObject({
      TABLE_NAME: { Ref: tableId() },
      POWERTOOLS_SERVICE_NAME: APP_NAME,
      [MAX_DELETES_ENV]: String(DEFAULT_MAX_DELETES),
    });
    expect(p.ReservedConcurrentExecutions).toBeUndefined();
  });

  it('may Query the Expiry index only, and DeleteItem only where items expire: receipts, organizations, reserved tag keys', () => {
    const role = sweeperFunction().Properties.Role['Fn::GetAtt'][0];
    const dynamo = statementsOfRole(role).filter((s) =>
      [s.Action].flat().some((a: string) => a.startsWith('dynamodb:')),
    );
    expect(dynamo).toHaveLength(2);
    const del = dynamo.find((s) => s.Action === 'dynamodb:DeleteItem');
    expect(del).toEqual({
      Effect: 'Allow',
      Action: 'dynamodb:DeleteItem',
      Resource: { 'Fn::GetAtt': [tableId(), 'Arn'] },
      Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RECEIPT#*', 'ORG#*', 'RTK#*'] } },
    });
    const query = dynamo.find((s) => s.Action === 'dynamodb:Query');
    expect(query).toEqual({
      Effect: 'Allow',
      Action: 'dynamodb:Query',
      Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [tableId(), 'Arn'] }, `/index/${EXPIRY_INDEX}`]] },
    });
    // Nothing else on the table: no GetItem, no Scan, no write but the delete, never the table's own Query.
    expect(dynamo.flatMap((s) => [s.Action].flat()).sort()).toEqual(['dynamodb:DeleteItem', 'dynamodb:Query']);
  });

  it('is not retried by Lambda when a run fails: the next scheduled run is the retry', () => {
    const configs = resources('AWS::Lambda::EventInvokeConfig');
    expect(configs).toHaveLength(1);
    expect(configs[0]![1].Properties).toMatchObject({
      FunctionName: { Ref: sweeperFunction().logicalId },
      Qualifier: '$LATEST',
      MaximumRetryAttempts: 0,
    });
  });
});

describe('its schedule', () => {
  it('runs it every 15 minutes through an EventBridge rule, which Lambda lets invoke it', () => {
    const rules = resources('AWS::Events::Rule');
    expect(rules).toHaveLength(1);
    const [ruleId, rule] = rules[0]!;
    expect(rule.Properties).toMatchObject({
      ScheduleExpression: 'rate(15 minutes)',
      State: 'ENABLED',
      Targets: [{ Arn: { 'Fn::GetAtt': [sweeperFunction().logicalId, 'Arn'] }, Id: expect.any(String) }],
    });
    expect(rule.Properties.EventPattern).toBeUndefined();
    const permissions = resources('AWS::Lambda::Permission').filter(
      ([, p]) => p.Properties.Principal === 'events.amazonaws.com',
    );
    expect(permissions.map(([, p]) => p.Properties)).toEqual([
      {
        Action: 'lambda:InvokeFunction',
        Principal: 'events.amazonaws.com',
        FunctionName: { 'Fn::GetAtt': [sweeperFunction().logicalId, 'Arn'] },
        SourceArn: { 'Fn::GetAtt': [ruleId, 'Arn'] },
      },
    ]);
  });
});

describe('its alarm', () => {
  it('alarms when two runs in a row fail, linking to its runbook section', () => {
    const alarms = resources('AWS::CloudWatch::Alarm')
      .map(([, a]) => a.Properties)
      .filter(
        (a) =>
          a.MetricName === 'Errors' && a.Dimensions?.some((d: any) => d.Value?.Ref === sweeperFunction().logicalId),
      );
    expect(alarms).toHaveLength(1);
    expect(alarms[0]).toMatchObject({
      Namespace: 'AWS/Lambda',
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      EvaluationPeriods: 6,
      DatapointsToAlarm: 2,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    expect(alarms[0].AlarmDescription).toMatch(/Runbook: docs\/runbooks\.md#alarm-sweeper-errors$/);
  });
});
