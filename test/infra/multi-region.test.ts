import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { addNagChecks } from '#infra/cdk/constructs/nag';
import {
  FAULT_CONFIG_EXPIRY_DAYS,
  FIS_EXTENSION,
  GAME_DAY_DURATION,
  PAUSE_REPLICATION_ACTION,
  PAUSE_REPLICATION_TABLE_ACTIONS,
  STOP_FUNCTIONS_ACTION,
  STOP_FUNCTIONS_BUCKET_ACTIONS,
  STOP_FUNCTIONS_FUNCTION_ACTIONS,
} from '#infra/cdk/constructs/game-day';
import { addMultiRegionStage, type MultiRegionStage } from '#infra/cdk/regions';
import { stageConfigFrom } from '#infra/cdk/config';
import { FAILOVER, RECOVERY_TIME_OBJECTIVE_SECONDS } from '#infra/cdk/stack';
import { HEALTH_PARTITION } from '#shared/health';
import { API_BASE_PATH } from '#shared/config';
import cdkJson from '../../cdk.json' with { type: 'json' };
import { resourcesOf, templateOf, type Resources } from './templates';
import { expectWith } from '../support/expect-with';

/**
 * The multi-Region stage as `cdk synth -c regions=… [-c witnessRegion=…]` builds it (infra/cdk/app.ts
 * through infra/cdk/regions.ts), offline: the global table, an API stack per replica Region, the
 * Route 53 records and health checks, least privilege per function in each Region, the game day.
 */
const DOMAIN = { domainName: 'tfe.example.com', hostedZoneId: 'Z0123456789ABCDEFGHIJ', hostedZoneName: 'example.com' };
const ACCOUNT = '123456789012';

interface Synth {
  app: App;
  stage: MultiRegionStage;
  nag: ReturnType<typeof addNagChecks>;
  templates: Map<Stack, Template>;
}

function synthesizeMultiRegion(context: Record<string, unknown>): Synth {
  const app = new App({ context: { ...cdkJson.context, ...DOMAIN, ...context, 'aws:cdk:bundling-stacks': [] } });
  const { multiRegion } = stageConfigFrom(app.node, 'prod');
  const stage = addMultiRegionStage(app, 'prod', multiRegion!, ACCOUNT);
  const nag = addNagChecks(app);
  app.synth();
  const templates = new Map<Stack, Template>(
    [stage.table, ...stage.apis.values()].map((stack) => [stack, Template.fromStack(stack)]),
  );
  return { app, stage, nag, templates };
}

const template = (synth: Synth, stack: Stack) => synth.templates.get(stack)!;
const only = (resources: Resources) => {
  const values = Object.values(resources);
  expect(values).toHaveLength(1);
  return values[0]!;
};

let witnessed: Synth;
let threeReplicas: Synth;
/** The single-Region stage's template, to compare with (templates.ts: synthesized once per run). */
let singleRegion: Template;
beforeAll(async () => {
  witnessed = synthesizeMultiRegion({ regions: 'us-east-1,us-east-2', witnessRegion: 'us-west-2' });
  threeReplicas = synthesizeMultiRegion({ regions: 'eu-west-1,eu-west-2,eu-central-1' });
  singleRegion = await templateOf();
}, 240_000);

describe('the global table', () => {
  it('is one MRSC global table in the first Region, with a replica in each other one and the witness', () => {
    const { table } = witnessed.stage;
    expect(table.region).toBe('us-east-1');
    const resource = only(resourcesOf(template(witnessed, table), 'AWS::DynamoDB::GlobalTable')) as any;
    const p = resource.Properties;
    expect(p.MultiRegionConsistency).toBe('STRONG');
    expect(p.GlobalTableWitnesses).toEqual([{ Region: 'us-west-2' }]);
    expect(p.Replicas.map((r: any) => r.Region).sort()).toEqual(['us-east-1', 'us-east-2']);
    expect(p.TableName).toBe('tfc-tags-comments-prod');
    expect(resource.DeletionPolicy).toBe('Retain');
    expect(resource.UpdateReplacePolicy).toBe('Retain');
    for (const replica of p.Replicas) {
      expectWith(replica.PointInTimeRecoverySpecification, replica.Region).toEqual({
        PointInTimeRecoveryEnabled: true,
      });
      expectWith(replica.DeletionProtectionEnabled, replica.Region).toBe(true);
    }
  });

  it("has the single-Region table's keys and sparse Expiry index, and no TTL and no LSI (MRSC refuses both)", () => {
    const global = only(resourcesOf(template(witnessed, witnessed.stage.table), 'AWS::DynamoDB::GlobalTable')) as any;
    const single = only(resourcesOf(singleRegion, 'AWS::DynamoDB::GlobalTable')) as any;
    for (const key of [
      'KeySchema',
      'AttributeDefinitions',
      'GlobalSecondaryIndexes',
      'BillingMode',
      'SSESpecification',
    ]) {
      expectWith(global.Properties[key], key).toEqual(single.Properties[key]);
    }
    expect(global.Properties.GlobalSecondaryIndexes.map((i: any) => i.IndexName)).toEqual(['Expiry']);
    expect(global.Properties.TimeToLiveSpecification).toBeUndefined();
    expect(global.Properties.LocalSecondaryIndexes).toBeUndefined();
  });

  it('takes three replicas and no witness', () => {
    const p = (
      only(resourcesOf(template(threeReplicas, threeReplicas.stage.table), 'AWS::DynamoDB::GlobalTable')) as any
    ).Properties;
    expect(threeReplicas.stage.table.region).toBe('eu-west-1');
    expect(p.Replicas.map((r: any) => r.Region).sort()).toEqual(['eu-central-1', 'eu-west-1', 'eu-west-2']);
    expect(p.GlobalTableWitnesses).toBeUndefined();
    expect(p.MultiRegionConsistency).toBe('STRONG');
  });
});

describe('one API stack per replica Region', () => {
  it('puts an API in each replica Region, none in the witness, each after the table stack', () => {
    expect([...witnessed.stage.apis.keys()]).toEqual(['us-east-1', 'us-east-2']);
    expect([...threeReplicas.stage.apis.keys()]).toEqual(['eu-west-1', 'eu-west-2', 'eu-central-1']);
    for (const [region, api] of [...witnessed.stage.apis, ...threeReplicas.stage.apis]) {
      expect(api.region).toBe(region);
      expect(api.stackName).toBe(`tfc-tags-comments-prod-${region}`);
      expect(api.dependencies.map((s) => s.stackName)).toContain(`tfc-tags-comments-prod-table`);
      expectWith(
        resourcesOf(
          template(witnessed.stage.apis.has(region) ? witnessed : threeReplicas, api),
          'AWS::DynamoDB::GlobalTable',
        ),
        region,
      ).toEqual({});
    }
  });

  it('gives each the same functions as a single-Region stage, plus the deep health check, all on the global table', () => {
    const singleFunctions = Object.keys(resourcesOf(singleRegion, 'AWS::Lambda::Function')).sort();
    for (const [region, api] of witnessed.stage.apis) {
      const functions = resourcesOf(template(witnessed, api), 'AWS::Lambda::Function');
      const health = Object.keys(functions).filter((id) => /^HealthFunction[0-9A-F]{8}$/.test(id));
      expectWith(health, region).toHaveLength(1);
      expectWith(Object.keys(functions).sort(), region).toEqual([...singleFunctions, ...health].sort());
      for (const fn of Object.values(functions))
        expectWith(fn.Properties.Environment.Variables.TABLE_NAME, region).toBe('tfc-tags-comments-prod');
    }
  });

  it("grants each function role its own Region's replica only, with the same actions and dynamodb:LeadingKeys as a single-Region stage", () => {
    const statementsOf = (resources: Resources, arnOf: (resource: unknown) => string) =>
      Object.entries(resources).flatMap(([id, policy]) =>
        policy.Properties.PolicyDocument.Statement.filter((s: any) =>
          [s.Action].flat().some((a: string) => a.startsWith('dynamodb:')),
        ).map((s: any) => ({
          policy: id,
          actions: [s.Action].flat().sort(),
          leadingKeys: s.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'],
          resource: arnOf(s.Resource),
        })),
      );
    const single = statementsOf(resourcesOf(singleRegion, 'AWS::IAM::Policy'), () => '').map(
      ({ policy, actions, leadingKeys }) => ({ policy, actions, leadingKeys }),
    );
    for (const [region, api] of witnessed.stage.apis) {
      const arn = (resource: any) => JSON.stringify(resource);
      const statements = statementsOf(resourcesOf(template(witnessed, api), 'AWS::IAM::Policy'), arn).filter(
        (s) => !s.policy.startsWith('GameDay'),
      );
      // Every DynamoDB statement is on this Region's replica (or, the sweeper's Query, its Expiry index).
      for (const s of statements) {
        expectWith(s.resource, `${region} ${s.policy}`).toMatch(
          new RegExp(`^"arn:aws:dynamodb:${region}:${ACCOUNT}:table/tfc-tags-comments-prod(/index/Expiry)?"$`),
        );
        for (const other of ['us-east-1', 'us-east-2', 'us-west-2'].filter((r) => r !== region))
          expectWith(s.resource, s.policy).not.toContain(other);
      }
      const health = statements.filter((s) => s.policy.startsWith('HealthFunction'));
      expect(health.map(({ actions, leadingKeys }) => ({ actions, leadingKeys }))).toEqual([
        { actions: ['dynamodb:GetItem'], leadingKeys: [HEALTH_PARTITION] },
      ]);
      expectWith(
        statements
          .filter((s) => !s.policy.startsWith('HealthFunction'))
          .map(({ policy, actions, leadingKeys }) => ({ policy, actions, leadingKeys })),
        region,
      ).toEqual(single);
    }
  });

  it('serves the domain in each Region with a certificate of its own, made by DNS in the hosted zone', () => {
    for (const [region, api] of witnessed.stage.apis) {
      const t = template(witnessed, api);
      expectWith(only(resourcesOf(t, 'AWS::CertificateManager::Certificate')).Properties, region).toMatchObject({
        DomainName: DOMAIN.domainName,
        ValidationMethod: 'DNS',
        DomainValidationOptions: [{ DomainName: DOMAIN.domainName, HostedZoneId: DOMAIN.hostedZoneId }],
      });
      expectWith(only(resourcesOf(t, 'AWS::ApiGateway::DomainName')).Properties, region).toMatchObject({
        DomainName: DOMAIN.domainName,
        EndpointConfiguration: { Types: ['REGIONAL'] },
        SecurityPolicy: 'TLS_1_2',
      });
      expect(t.toJSON().Outputs.TfeAddress.Value).toBe(`https://${DOMAIN.domainName}`);
    }
  });
});

describe('Route 53: a latency record per Region, each with a deep health check', () => {
  it('answers for each Region only while its health check passes, with a 60 s TTL', () => {
    for (const [region, api] of witnessed.stage.apis) {
      const t = template(witnessed, api);
      const [healthCheckId] = Object.keys(resourcesOf(t, 'AWS::Route53::HealthCheck'));
      const record = only(resourcesOf(t, 'AWS::Route53::RecordSet')).Properties;
      expectWith(record, region).toEqual({
        HostedZoneId: DOMAIN.hostedZoneId,
        Name: `${DOMAIN.domainName}.`,
        Type: 'CNAME',
        TTL: String(FAILOVER.recordTtlSeconds),
        Region: region,
        SetIdentifier: region,
        HealthCheckId: { Ref: healthCheckId },
        ResourceRecords: [{ 'Fn::GetAtt': [expect.stringMatching(/^PublicAddressDomain/), 'RegionalDomainName'] }],
      });
    }
  });

  it("checks over HTTPS, on the Region's own endpoint, the route that reads the Region's replica", () => {
    for (const [region, api] of witnessed.stage.apis) {
      const t = template(witnessed, api);
      const config = only(resourcesOf(t, 'AWS::Route53::HealthCheck')).Properties.HealthCheckConfig;
      const [apiId] = Object.keys(resourcesOf(t, 'AWS::ApiGateway::RestApi'));
      const [stageId] = Object.keys(resourcesOf(t, 'AWS::ApiGateway::Stage'));
      expectWith(config, region).toMatchObject({
        Type: 'HTTPS',
        Port: 443,
        EnableSNI: true,
        FullyQualifiedDomainName: {
          'Fn::Join': ['', [{ Ref: apiId }, `.execute-api.${region}.`, { Ref: 'AWS::URLSuffix' }]],
        },
        ResourcePath: { 'Fn::Join': ['', ['/', { Ref: stageId }, `${API_BASE_PATH}/health`]] },
      });
      // The route exists, without a token, and invokes the health function's live alias.
      const methods = Object.values(resourcesOf(t, 'AWS::ApiGateway::Method')).filter(
        (m) =>
          m.Properties.HttpMethod === 'GET' &&
          JSON.stringify(m.Properties.Integration?.Uri ?? '').includes('HealthFunction'),
      );
      expectWith(
        methods.map((m) => m.Properties.AuthorizationType),
        region,
      ).toEqual(['NONE']);
    }
  });

  it('moves clients off a failed Region within 2 minutes: interval × threshold + TTL = 90 s', () => {
    for (const [region, api] of witnessed.stage.apis) {
      const t = template(witnessed, api);
      const config = only(resourcesOf(t, 'AWS::Route53::HealthCheck')).Properties.HealthCheckConfig;
      const ttl = Number(only(resourcesOf(t, 'AWS::Route53::RecordSet')).Properties.TTL);
      const rto = config.RequestInterval * config.FailureThreshold + ttl;
      expectWith({ interval: config.RequestInterval, threshold: config.FailureThreshold, ttl, rto }, region).toEqual({
        interval: 10,
        threshold: 3,
        ttl: 60,
        rto: 90,
      });
      expect(rto).toBe(RECOVERY_TIME_OBJECTIVE_SECONDS);
      expect(rto).toBeLessThanOrEqual(120);
    }
  });

  it('is stated in docs/deploying.md as the template has it', () => {
    const text = readFileSync(join(import.meta.dirname, '../../docs/deploying.md'), 'utf8').replace(/\s*\n\s*/g, ' ');
    const [, interval, threshold, ttl, rto] =
      /Recovery time objective: (\d+) s × (\d+) \+ (\d+) s = (\d+) s\*\*, within 2 minutes/.exec(text)!;
    expect([interval, threshold, ttl, rto].map(Number)).toEqual([
      FAILOVER.requestIntervalSeconds,
      FAILOVER.failureThreshold,
      FAILOVER.recordTtlSeconds,
      RECOVERY_TIME_OBJECTIVE_SECONDS,
    ]);
    expect(text).toContain(`every **${FAILOVER.requestIntervalSeconds} s**`);
    expect(text).toContain(`after **${FAILOVER.failureThreshold}** failures in a row`);
    expect(text).toContain(`**TTL ${FAILOVER.recordTtlSeconds} s**`);
  });
});

/** The experiment template of `t` whose one action is `actionId`. */
const experimentOf = (t: Template, actionId: string) =>
  only(
    Object.fromEntries(
      Object.entries(resourcesOf(t, 'AWS::FIS::ExperimentTemplate')).filter(([, e]) =>
        Object.values(e.Properties.Actions).some((a: any) => a.ActionId === actionId),
      ),
    ),
  ).Properties;
/** The statements of every policy attached to the role `roleId` of `t`. */
const statementsOfRole = (t: Template, roleId: string) =>
  Object.values(resourcesOf(t, 'AWS::IAM::Policy'))
    .filter((p) => p.Properties.Roles.some((r: any) => r.Ref === roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement);
/** `{ Fn::GetAtt: [id, 'Arn'] }` of each function of `t`: every function of the Region. */
const functionArnsOf = (t: Template) =>
  Object.keys(resourcesOf(t, 'AWS::Lambda::Function')).map((id) => ({ 'Fn::GetAtt': [id, 'Arn'] }));
const bucketOf = (t: Template) => Object.keys(resourcesOf(t, 'AWS::S3::Bucket'))[0]!;
const configPrefixArn = (bucket: string, pattern: string) => ({
  'Fn::Join': ['', [{ 'Fn::GetAtt': [bucket, 'Arn'] }, `/${pattern}`]],
});
const byJson = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b));

describe('the game day (AWS FIS)', () => {
  /** Each API stack of both shapes, with its Region and template. */
  const regionalTemplates = () =>
    [witnessed, threeReplicas].flatMap((synth) =>
      [...synth.stage.apis].map(([region, api]) => ({ region, t: template(synth, api) })),
    );

  it('has two experiment templates per Region, one fault each, with an output each', () => {
    for (const { region, t } of regionalTemplates()) {
      const actions = Object.values(resourcesOf(t, 'AWS::FIS::ExperimentTemplate')).map((e) =>
        Object.values(e.Properties.Actions).map((a: any) => a.ActionId),
      );
      expectWith(actions.sort(), region).toEqual([[PAUSE_REPLICATION_ACTION], [STOP_FUNCTIONS_ACTION]]);
      const outputs = t.toJSON().Outputs;
      const idOf = (output: string) => outputs[output].Value['Fn::GetAtt'];
      expectWith(idOf('GameDayTemplateId'), region).toEqual([
        expect.stringMatching(/^GameDayTemplate[0-9A-F]{8}$/),
        'Id',
      ]);
      expectWith(idOf('GameDayStopFunctionsTemplateId'), region).toEqual([
        expect.stringMatching(/^GameDayStopFunctionsTemplate[0-9A-F]{8}$/),
        'Id',
      ]);
    }
  });

  it("pauses replication of the Region's own replica, stopped by its alarms, with a role that can do only that", () => {
    for (const [region, api] of witnessed.stage.apis) {
      const t = template(witnessed, api);
      const ownReplica = `arn:aws:dynamodb:${region}:${ACCOUNT}:table/tfc-tags-comments-prod`;
      const experiment = experimentOf(t, PAUSE_REPLICATION_ACTION);
      expectWith(experiment.Targets, region).toEqual({
        Replica: { ResourceType: 'aws:dynamodb:global-table', ResourceArns: [ownReplica], SelectionMode: 'ALL' },
      });
      expectWith(
        Object.values(experiment.Actions).map((a: any) => [a.ActionId, a.Targets]),
        region,
      ).toEqual([[PAUSE_REPLICATION_ACTION, { Tables: 'Replica' }]]);
      const alarms = resourcesOf(t, 'AWS::CloudWatch::Alarm');
      expect(experiment.StopConditions.length).toBeGreaterThan(0);
      for (const stop of experiment.StopConditions) {
        expect(stop.Source).toBe('aws:cloudwatch:alarm');
        expect(Object.keys(alarms)).toContain(stop.Value['Fn::GetAtt'][0]);
      }
      const [roleId] = experiment.RoleArn['Fn::GetAtt'];
      expect(
        resourcesOf(t, 'AWS::IAM::Role')[roleId]!.Properties.AssumeRolePolicyDocument.Statement[0].Principal,
      ).toEqual({ Service: 'fis.amazonaws.com' });
      expect(statementsOfRole(t, roleId)).toEqual([
        { Effect: 'Allow', Action: [...PAUSE_REPLICATION_TABLE_ACTIONS].sort(), Resource: ownReplica },
        { Effect: 'Allow', Action: 'tag:GetResources', Resource: '*' },
      ]);
    }
  });

  it("stops every function of the Region, the authorizer included: invocation-error on all invocations, none run, for the game day's duration, stopped by the same alarms", () => {
    for (const { region, t } of regionalTemplates()) {
      const experiment = experimentOf(t, STOP_FUNCTIONS_ACTION);
      const functions = Object.keys(resourcesOf(t, 'AWS::Lambda::Function'));
      expect(functions).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^AuthorizerFunction/),
          expect.stringMatching(/^HealthFunction/),
          expect.stringMatching(/^SweeperFunction/),
          expect.stringMatching(/^CommentsCreateFunction/),
        ]),
      );
      // Each target is a function of this stack: this Region's, and every one of them.
      expectWith(experiment.Targets, region).toEqual({
        Functions: { ResourceType: 'aws:lambda:function', ResourceArns: expect.any(Array), SelectionMode: 'ALL' },
      });
      expectWith([...experiment.Targets.Functions.ResourceArns].sort(byJson), region).toEqual(
        functionArnsOf(t).sort(byJson),
      );
      expectWith(Object.values(experiment.Actions), region).toEqual([
        {
          ActionId: STOP_FUNCTIONS_ACTION,
          Description: expect.any(String),
          Parameters: { duration: GAME_DAY_DURATION, invocationPercentage: '100', preventExecution: 'true' },
          Targets: { Functions: 'Functions' },
        },
      ]);
      expect(experiment.ExperimentOptions).toEqual({
        AccountTargeting: 'single-account',
        EmptyTargetResolutionMode: 'fail',
      });
      expectWith(experiment.StopConditions, region).toEqual(experimentOf(t, PAUSE_REPLICATION_ACTION).StopConditions);
      expect(experiment.StopConditions.length).toBeGreaterThan(0);
    }
  });

  it("lets the stop experiment's role write fault configurations in this Region's bucket and read this Region's functions, nothing more", () => {
    for (const { region, t } of regionalTemplates()) {
      const experiment = experimentOf(t, STOP_FUNCTIONS_ACTION);
      const [roleId] = experiment.RoleArn['Fn::GetAtt'];
      const role = resourcesOf(t, 'AWS::IAM::Role')[roleId]!.Properties;
      expect(role.AssumeRolePolicyDocument.Statement).toEqual([
        {
          Effect: 'Allow',
          Action: 'sts:AssumeRole',
          Principal: { Service: 'fis.amazonaws.com' },
          Condition: { StringEquals: { 'aws:SourceAccount': ACCOUNT } },
        },
      ]);
      expect(role.ManagedPolicyArns).toBeUndefined();
      const [bucketStatement, functionStatement, tagStatement, ...more] = statementsOfRole(t, roleId);
      expect(more).toEqual([]);
      expectWith(bucketStatement, region).toEqual({
        Effect: 'Allow',
        Action: [...STOP_FUNCTIONS_BUCKET_ACTIONS].sort(),
        Resource: configPrefixArn(bucketOf(t), `${FIS_EXTENSION.configPrefix}*`),
      });
      expectWith(functionStatement.Action, region).toBe(STOP_FUNCTIONS_FUNCTION_ACTIONS.join());
      expectWith([...functionStatement.Resource].sort(byJson), region).toEqual(functionArnsOf(t).sort(byJson));
      expect(tagStatement).toEqual({ Effect: 'Allow', Action: 'tag:GetResources', Resource: '*' });
    }
  });

  it("attaches AWS's FIS extension to every function: the layer for its architecture from AWS's parameter, the wrapper, this Region's bucket prefix", () => {
    for (const { region, t } of regionalTemplates()) {
      const parameters = t.toJSON().Parameters;
      const bucket = bucketOf(t);
      for (const [id, fn] of Object.entries(resourcesOf(t, 'AWS::Lambda::Function'))) {
        const p = fn.Properties;
        expectWith(p.Architectures, id).toEqual(['arm64']);
        expectWith(p.Layers, `${region} ${id}`).toEqual([{ Ref: expect.any(String) }]);
        expectWith(parameters[p.Layers[0].Ref], `${region} ${id}`).toEqual({
          Type: 'AWS::SSM::Parameter::Value<String>',
          Default: '/aws/service/fis/lambda-extension/AWS-FIS-extension-arm64/1.x.x',
        });
        expectWith(p.Environment.Variables, `${region} ${id}`).toMatchObject({
          AWS_LAMBDA_EXEC_WRAPPER: '/opt/aws-fis/bootstrap',
          AWS_FIS_CONFIGURATION_LOCATION: configPrefixArn(bucket, 'FisConfigs/'),
        });
        // The function's own role may list the prefix and read its objects, and nothing else of the bucket.
        const roleId = p.Role['Fn::GetAtt'][0];
        const s3 = statementsOfRole(t, roleId).filter((s: any) => [s.Action].flat().some((a) => a.startsWith('s3:')));
        expectWith(s3, `${region} ${id}`).toEqual([
          {
            Effect: 'Allow',
            Action: 's3:ListBucket',
            Resource: { 'Fn::GetAtt': [bucket, 'Arn'] },
            Condition: { StringLike: { 's3:prefix': ['FisConfigs/*'] } },
          },
          { Effect: 'Allow', Action: 's3:GetObject', Resource: configPrefixArn(bucket, 'FisConfigs/*') },
        ]);
      }
    }
  });

  it('keeps the fault configurations in a private bucket of the Region: no public access, TLS only, S3-managed keys, expiring', () => {
    for (const { region, t } of regionalTemplates()) {
      const buckets = resourcesOf(t, 'AWS::S3::Bucket');
      expectWith(Object.keys(buckets), region).toHaveLength(1);
      const bucket = Object.values(buckets)[0]! as any;
      expect(bucket.Properties).toEqual({
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        LifecycleConfiguration: {
          Rules: [
            {
              Id: 'ExpireFaultConfigs',
              Status: 'Enabled',
              ExpirationInDays: FAULT_CONFIG_EXPIRY_DAYS,
              AbortIncompleteMultipartUpload: { DaysAfterInitiation: FAULT_CONFIG_EXPIRY_DAYS },
            },
          ],
        },
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
      });
      expect(bucket.DeletionPolicy).toBe('Delete');
      const policy = only(resourcesOf(t, 'AWS::S3::BucketPolicy')).Properties;
      expect(policy.Bucket).toEqual({ Ref: bucketOf(t) });
      expect(policy.PolicyDocument.Statement).toEqual([
        expect.objectContaining({
          Effect: 'Deny',
          Action: 's3:*',
          Principal: { AWS: '*' },
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      ]);
    }
  });

  it('leaves the single-Region stages (dev, prod) without the extension, its bucket or an experiment', async () => {
    for (const stage of ['dev', 'prod']) {
      const json = (await templateOf({ stage })).toJSON();
      const resources = Object.values(json.Resources) as Array<{ Type: string; Properties?: any }>;
      const types = new Set(resources.map((r) => r.Type));
      for (const type of ['AWS::S3::Bucket', 'AWS::S3::BucketPolicy', 'AWS::FIS::ExperimentTemplate'])
        expectWith(types.has(type), `${stage} ${type}`).toBe(false);
      for (const fn of resources.filter((r) => r.Type === 'AWS::Lambda::Function')) {
        expectWith(fn.Properties.Layers, stage).toBeUndefined();
        expectWith(Object.keys(fn.Properties.Environment.Variables), stage).not.toEqual(
          expect.arrayContaining([expect.stringMatching(/^AWS_FIS_|^AWS_LAMBDA_EXEC_WRAPPER$/)]),
        );
      }
      expectWith(JSON.stringify(json.Parameters ?? {}), stage).not.toContain('fis');
      expectWith(Object.keys(json.Outputs), stage).not.toContain('GameDayStopFunctionsTemplateId');
    }
  });
});

describe('cdk-nag (AwsSolutions) on every stack of the multi-Region stage', () => {
  it('finds nothing that is not acknowledged', () => {
    for (const synth of [witnessed, threeReplicas]) {
      const report = synth.nag.validateScope(synth.app);
      expect(
        report.violations.map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`),
      ).toEqual([]);
    }
  });
});
