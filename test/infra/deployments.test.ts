import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LambdaDeploymentConfig } from 'aws-cdk-lib/aws-codedeploy';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { AUTHORIZER_FUNCTION, functionNames, routes } from '#shared/routes';
import { DEPLOYMENT_CONFIGS, REQUEST_SECONDS } from '#infra/cdk/config';
import { ROLLBACK_ALARMS } from '#infra/cdk/constructs/deployment';
import type { Template } from 'aws-cdk-lib/assertions';
import { synthesize } from './synth';
import { deployedMethods, resourcesOf, templateOf, underBase } from './templates';
import { expectWith } from '../support/expect-with';

/**
 * Safe deploys on the template: API Gateway invokes each function's `live` alias (never $LATEST),
 * CodeDeploy moves the alias per the stage's deploymentConfig and rolls back on the new version's
 * own alarms; and each method's throttle keeps a burst at the gateway.
 */
let template: Template;
beforeAll(async () => {
  template = await templateOf();
}, 120_000);

const resources = (type: string) => resourcesOf(template, type);
const allFunctions = () => [...functionNames(), AUTHORIZER_FUNCTION];
/** The logical id of a handler file's Lambda function. */
const functionId = (name: string) =>
  Object.entries(resources('AWS::Lambda::Function')).find(
    ([, fn]) => fn.Properties.Description === `tfc-tags-comments: functions/${name}.ts`,
  )![0];

/** The alias a reference names (`{ Ref: alias }`), with the version it points at and that version's function. */
function aliasOf(reference: unknown) {
  const id = (reference as { Ref?: string }).Ref!;
  const alias = resources('AWS::Lambda::Alias')[id];
  expectWith(alias, `${JSON.stringify(reference)} is an AWS::Lambda::Alias`).toBeDefined();
  const versionId = alias!.Properties.FunctionVersion['Fn::GetAtt'][0] as string;
  expect(alias!.Properties.FunctionVersion).toEqual({ 'Fn::GetAtt': [versionId, 'Version'] });
  const version = resources('AWS::Lambda::Version')[versionId]!;
  return {
    id,
    name: alias!.Properties.Name,
    functionRef: alias!.Properties.FunctionName.Ref,
    versionFunctionRef: version.Properties.FunctionName.Ref,
    alias: alias!,
  };
}
/** What an integration or authorizer URI invokes: the reference between `functions/` and `/invocations`. */
const invokedBy = (uri: any) => {
  const parts = uri['Fn::Join'][1] as unknown[];
  return parts[parts.indexOf(parts.find((p) => typeof p === 'string' && p.endsWith('/functions/'))!) + 1];
};

describe('API Gateway invokes each function’s live alias, never $LATEST', () => {
  it('sends every route to the live alias of its function, which points at a published version of that function', () => {
    const methods = deployedMethods(template);
    for (const route of routes) {
      const method = methods.find((m) => m.method === route.method && m.path === underBase(route.path))!;
      const target = aliasOf(invokedBy(method.properties.Integration.Uri));
      expectWith(target.name, `${route.method} ${route.path}`).toBe('live');
      expect(target.functionRef).toBe(functionId(route.function));
      expect(target.versionFunctionRef).toBe(functionId(route.function));
    }
  });

  it('calls the authorizer through its live alias too', () => {
    const [authorizer] = Object.values(resources('AWS::ApiGateway::Authorizer'));
    const target = aliasOf(invokedBy(authorizer!.Properties.AuthorizerUri));
    expect(target).toMatchObject({
      name: 'live',
      functionRef: functionId(AUTHORIZER_FUNCTION),
      versionFunctionRef: functionId(AUTHORIZER_FUNCTION),
    });
  });

  it('grants API Gateway the aliases alone: every invoke permission names an alias, none a function', () => {
    // (EventBridge's to invoke the sweeper, which no client calls, is sweeper.test.ts's.)
    const permissions = Object.values(resources('AWS::Lambda::Permission')).filter(
      (p) => p.Properties.Principal !== 'events.amazonaws.com',
    );
    expect(permissions).toHaveLength(routes.length + 1); // one per method, and the authorizer's
    const aliases = resources('AWS::Lambda::Alias');
    for (const permission of permissions) {
      expect(permission.Properties).toMatchObject({
        Action: 'lambda:InvokeFunction',
        Principal: 'apigateway.amazonaws.com',
      });
      expectWith(
        aliases[permission.Properties.FunctionName.Ref],
        JSON.stringify(permission.Properties.FunctionName),
      ).toBeDefined();
    }
  });

  it('publishes one version and one live alias per function, and deletes a replaced version once the alias has moved', () => {
    expect(Object.keys(resources('AWS::Lambda::Version'))).toHaveLength(allFunctions().length);
    const aliases = Object.values(resources('AWS::Lambda::Alias'));
    expect(aliases.map((a) => a.Properties.FunctionName.Ref).sort()).toEqual(allFunctions().map(functionId).sort());
    for (const version of Object.values(resources('AWS::Lambda::Version')))
      expect((version as any).DeletionPolicy).toBe('Delete');
  });
});

describe('CodeDeploy moves each alias and rolls it back on the new version’s alarms', () => {
  const groups = () => resources('AWS::CodeDeploy::DeploymentGroup');

  it('updates every alias through a deployment group of its own, in one application, with automatic rollback', () => {
    const [application] = Object.keys(resources('AWS::CodeDeploy::Application'));
    expect(Object.keys(resources('AWS::CodeDeploy::Application'))).toHaveLength(1);
    expect(Object.keys(groups())).toHaveLength(allFunctions().length);
    for (const [id, alias] of Object.entries(resources('AWS::Lambda::Alias')) as Array<[string, any]>) {
      const update = alias.UpdatePolicy.CodeDeployLambdaAliasUpdate;
      expect(update.ApplicationName).toEqual({ Ref: application });
      const group = groups()[update.DeploymentGroupName.Ref]!.Properties;
      expectWith(group.AutoRollbackConfiguration, id).toEqual({
        Enabled: true,
        Events: ['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_REQUEST', 'DEPLOYMENT_STOP_ON_ALARM'],
      });
      expect(group.DeploymentStyle).toEqual({ DeploymentOption: 'WITH_TRAFFIC_CONTROL', DeploymentType: 'BLUE_GREEN' });
    }
  });

  it('watches, per function, the errors and the p99 duration of the version being deployed, through its alias, and moves the alias only after them', () => {
    const alarms = resources('AWS::CloudWatch::Alarm');
    for (const [id, alias] of Object.entries(resources('AWS::Lambda::Alias')) as Array<[string, any]>) {
      const group = groups()[alias.UpdatePolicy.CodeDeployLambdaAliasUpdate.DeploymentGroupName.Ref]!.Properties;
      expect(group.AlarmConfiguration.Enabled).toBe(true);
      const watched = group.AlarmConfiguration.Alarms.map((a: any) => alarms[a.Name.Ref]!.Properties);
      expectWith(watched.map((a: any) => a.MetricName).sort(), id).toEqual(['Duration', 'Errors']);
      const fn = alias.Properties.FunctionName.Ref;
      for (const alarm of watched) {
        expect(alarm.Namespace).toBe('AWS/Lambda');
        expect(alarm.Period).toBe(60);
        expect(alarm).toMatchObject({
          EvaluationPeriods: ROLLBACK_ALARMS.evaluationPeriods,
          DatapointsToAlarm: ROLLBACK_ALARMS.evaluationPeriods,
          TreatMissingData: 'notBreaching',
        });
        // The new version's own invocations through the alias (ExecutedVersion), not the old one's.
        expect(Object.fromEntries(alarm.Dimensions.map((d: any) => [d.Name, d.Value]))).toEqual({
          FunctionName: { Ref: fn },
          Resource: { 'Fn::Join': ['', [{ Ref: fn }, ':live']] },
          ExecutedVersion: alias.Properties.FunctionVersion,
        });
        expect(alarm.AlarmDescription).toMatch(
          /CodeDeploy rolls the deploy back\. Runbook: docs\/runbooks\.md#rolling-back-a-bad-deploy$/,
        );
      }
      const errors = watched.find((a: any) => a.MetricName === 'Errors');
      expect(errors).toMatchObject({
        Statistic: 'Sum',
        Threshold: ROLLBACK_ALARMS.errors,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
      const latency = watched.find((a: any) => a.MetricName === 'Duration');
      expect(latency).toMatchObject({
        ExtendedStatistic: 'p99',
        Threshold: ROLLBACK_ALARMS.p99DurationMs,
        ComparisonOperator: 'GreaterThanThreshold',
      });
      // CloudFormation points the alarms at the new version before the alias update starts the shift.
      expect([...alias.DependsOn].sort()).toEqual(group.AlarmConfiguration.Alarms.map((a: any) => a.Name.Ref).sort());
    }
  });

  it('gives CodeDeploy one role, with the policy AWS documents for Lambda deployments', () => {
    const roleArns = new Set(Object.values(groups()).map((g) => JSON.stringify(g.Properties.ServiceRoleArn)));
    expect(roleArns.size).toBe(1);
    const roleId = JSON.parse([...roleArns][0]!)['Fn::GetAtt'][0];
    const role = resources('AWS::IAM::Role')[roleId]!.Properties;
    expect(role.AssumeRolePolicyDocument.Statement).toEqual([
      expect.objectContaining({ Principal: { Service: 'codedeploy.amazonaws.com' } }),
    ]);
    expect(JSON.stringify(role.ManagedPolicyArns)).toContain(
      ':iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited',
    );
  });

  const configOf = (of: Template) => [
    ...new Set(
      Object.values(resourcesOf(of, 'AWS::CodeDeploy::DeploymentGroup')).map((g) => g.Properties.DeploymentConfigName),
    ),
  ];

  it.each([
    ['dev', {}, 'CodeDeployDefault.LambdaAllAtOnce'],
    ['local', {}, 'CodeDeployDefault.LambdaAllAtOnce'],
    ['prod', {}, 'CodeDeployDefault.LambdaCanary10Percent5Minutes'],
    [
      'prod',
      { deploymentConfig: 'LambdaLinear10PercentEvery1Minute' },
      'CodeDeployDefault.LambdaLinear10PercentEvery1Minute',
    ],
    [
      'prod',
      { deploymentConfig: 'CodeDeployDefault.LambdaCanary10Percent30Minutes' },
      'CodeDeployDefault.LambdaCanary10Percent30Minutes',
    ],
    ['dev', { deploymentConfig: 'LambdaCanary10Percent10Minutes' }, 'CodeDeployDefault.LambdaCanary10Percent10Minutes'],
  ])(
    'stage %s with %j shifts traffic by %s',
    async (stage, context, expected) => {
      expect(configOf(await templateOf({ stage, context }))).toEqual([expected]);
    },
    120_000,
  );

  it('offers exactly CodeDeploy’s predefined Lambda configurations', () => {
    expect([...DEPLOYMENT_CONFIGS].sort()).toEqual([
      'LambdaAllAtOnce',
      'LambdaCanary10Percent10Minutes',
      'LambdaCanary10Percent15Minutes',
      'LambdaCanary10Percent30Minutes',
      'LambdaCanary10Percent5Minutes',
      'LambdaLinear10PercentEvery10Minutes',
      'LambdaLinear10PercentEvery1Minute',
      'LambdaLinear10PercentEvery2Minutes',
      'LambdaLinear10PercentEvery3Minutes',
    ]);
    // The ones aws-cdk-lib knows as predefined: LambdaDeploymentConfig's static members.
    const predefined = [
      LambdaDeploymentConfig.ALL_AT_ONCE,
      LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
      LambdaDeploymentConfig.CANARY_10PERCENT_10MINUTES,
      LambdaDeploymentConfig.CANARY_10PERCENT_15MINUTES,
      LambdaDeploymentConfig.CANARY_10PERCENT_30MINUTES,
      LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_1MINUTE,
      LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_2MINUTES,
      LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_3MINUTES,
      LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_10MINUTES,
    ].map((config) => config.deploymentConfigName);
    expect(predefined.map((name) => name.replace(/^CodeDeployDefault\./, '')).sort()).toEqual(
      [...DEPLOYMENT_CONFIGS].sort(),
    );
  });
});

describe('a burst is refused at the gateway, not by Lambda', () => {
  it('sizes each method’s throttle so that every method reaching a function, at its burst and rate, fits its reserved concurrency', () => {
    const [stage] = Object.values(resources('AWS::ApiGateway::Stage'));
    const [all] = stage!.Properties.MethodSettings;
    expect(all).toMatchObject({
      HttpMethod: '*',
      ResourcePath: '/*',
      ThrottlingRateLimit: 50,
      ThrottlingBurstLimit: 5,
    });
    const reach = (all.ThrottlingBurstLimit as number) + (all.ThrottlingRateLimit as number) * REQUEST_SECONDS;
    const lambdas = resources('AWS::Lambda::Function');
    const methods = deployedMethods(template).filter((m) => m.properties.Integration.Type === 'AWS_PROXY');
    const reaching = new Map<string, number>();
    for (const method of methods) {
      const fn = aliasOf(invokedBy(method.properties.Integration.Uri)).functionRef;
      reaching.set(fn, (reaching.get(fn) ?? 0) + 1);
    }
    // The authorizer is reached by every method that takes a token (on a cache miss).
    const authorizerFn = functionId(AUTHORIZER_FUNCTION);
    reaching.set(
      authorizerFn,
      deployedMethods(template).filter((m) => m.properties.AuthorizationType === 'CUSTOM').length,
    );
    expect(reaching.size).toBe(allFunctions().length);
    const arithmetic: string[] = [];
    for (const [fn, count] of reaching) {
      const reserved = lambdas[fn]!.Properties.ReservedConcurrentExecutions as number;
      arithmetic.push(`${fn}: ${count} × ${reach} = ${count * reach} ≤ ${reserved}`);
      expectWith(count * reach, `${fn}: ${count} methods × (burst + rate × ${REQUEST_SECONDS} s)`).toBeLessThanOrEqual(
        reserved,
      );
    }
    expect(arithmetic).toContain(`${functionId('reserved-tag-keys/update')}: 2 × 10 = 20 ≤ 25`);
    expect(arithmetic).toContain(`${authorizerFn}: 9 × 10 = 90 ≤ 100`);
  });

  it('refuses a burst that Lambda would have to throttle, naming the function and the arithmetic', () => {
    expect(() => synthesize({ context: { throttleBurstLimit: 125, throttleRateLimit: 250 } })).toThrow(
      'Invalid context "throttleBurstLimit" = 125: 9 methods × (burst 125 + rate 250 req/s × 0.1 s) = 1350 executions can reach functions/authorizer.ts at once, over its authorizerReservedConcurrency 100: lower throttleBurstLimit or throttleRateLimit, or raise authorizerReservedConcurrency',
    );
    expect(() => synthesize({ context: { throttleBurstLimit: 12, authorizerReservedConcurrency: 'none' } })).toThrow(
      'Invalid context "throttleBurstLimit" = 12: 2 methods × (burst 12 + rate 50 req/s × 0.1 s) = 34 executions can reach functions/reserved-tag-keys/update.ts at once, over its reservedConcurrency 25: lower throttleBurstLimit or throttleRateLimit, or raise reservedConcurrency',
    );
    // Raising the reservations makes room for it.
    expect(() =>
      synthesize({ context: { throttleBurstLimit: 12, reservedConcurrency: 40, authorizerReservedConcurrency: 200 } }),
    ).not.toThrow();
  });
});

describe('a bad context setting stops `cdk synth` with one line and no stack trace', () => {
  const root = join(import.meta.dirname, '../..');
  /** The CDK app as the CDK CLI runs it (cdk.json's `app`, the context in CDK_CONTEXT_JSON), without bundling. */
  const synthApp = (context: Record<string, unknown>) => {
    const cdkJson = JSON.parse(readFileSync(join(root, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'infra/cdk/app.ts'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 120_000,
      env: {
        ...process.env,
        CDK_OUTDIR: mkdtempSync(join(tmpdir(), 'cdk-out-')),
        CDK_CONTEXT_JSON: JSON.stringify({ ...cdkJson.context, 'aws:cdk:bundling-stacks': [], ...context }),
      },
    });
    return { code: result.status, stderr: result.stderr, stdout: result.stdout };
  };

  it.each([
    [
      { stage: 'Bad!' },
      'Invalid context "stage" = "Bad!": lowercase letters, digits and "-", starting with a letter, at most 31 characters',
    ],
    [
      { stage: 'dev', deploymentConfig: 'Fast' },
      `Invalid context "deploymentConfig" = "Fast": one of ${DEPLOYMENT_CONFIGS.join(', ')}`,
    ],
    [
      { stage: 'prod', deploymentConfig: 'LambdaAllAtOnce' },
      `Invalid context "deploymentConfig" = "LambdaAllAtOnce": for prod (never all at once), one of ${DEPLOYMENT_CONFIGS.filter((c) => c !== 'LambdaAllAtOnce').join(', ')}`,
    ],
    [{ stage: 'dev', memorySize: '64' }, 'Invalid context "memorySize" = "64": a whole number from 128 to 10240'],
  ])(
    '%j',
    (context, line) => {
      const { code, stderr, stdout } = synthApp(context);
      expect(stderr).toBe(`${line}\n`);
      expect(stdout).toBe('');
      expect(code).toBe(1);
    },
    120_000,
  );
});
