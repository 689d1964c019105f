import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from '@jest/globals';
import { parseStageConfig, stageConfigFrom } from '#infra/cdk/config';
import { synthesize } from './synth';
import { resourcesOf, templateOf } from './templates';

const settings = (values: Record<string, unknown>) => (key: string) => values[key];
const parse = (values: Record<string, unknown>, stage = 'prod') => parseStageConfig(stage, settings(values));

describe('stage settings from context', () => {
  it('has a default for everything', () => {
    expect(parse({})).toEqual({
      stage: 'prod',
      memorySize: 1024,
      throttleRateLimit: 50,
      throttleBurstLimit: 5,
      accountThrottleRateLimit: 10_000,
      reservedConcurrency: 25,
      authorizerReservedConcurrency: 100,
      accountConcurrency: 1_000,
      logRetentionDays: 30,
      authorizerCacheTtlSeconds: 60,
      alarmEmail: undefined,
      deploymentConfig: 'LambdaCanary10Percent5Minutes',
      runbookUrl: 'docs/runbooks.md',
      domainName: undefined,
      certificateArn: undefined,
      hostedZone: undefined,
      disableExecuteApiEndpoint: false,
      tableName: undefined,
      apiGatewayCloudWatchRole: false,
      healthRoute: false,
      multiRegion: undefined,
    });
  });

  it('reads `-c key=value` strings as numbers and booleans', () => {
    const config = parse({
      memorySize: '2048',
      logRetentionDays: '90',
      apiGatewayCloudWatchRole: 'true',
      reservedConcurrency: 'none',
    });
    expect(config).toMatchObject({
      memorySize: 2048,
      logRetentionDays: 90,
      apiGatewayCloudWatchRole: true,
      reservedConcurrency: undefined,
    });
  });

  it('takes a top-level key over the stage’s own object in cdk.json, and that over the default', () => {
    const app = new App({
      context: {
        memorySize: 512,
        stages: { prod: { memorySize: 2048, tableName: 'restored-prod' }, dev: { tableName: 'dev' } },
      },
    });
    expect(stageConfigFrom(app.node, 'prod')).toMatchObject({ memorySize: 512, tableName: 'restored-prod' });
    expect(stageConfigFrom(app.node, 'dev')).toMatchObject({ memorySize: 512, tableName: 'dev' });
    expect(stageConfigFrom(app.node, 'qa')).toMatchObject({ memorySize: 512, tableName: undefined });
  });

  it.each([
    [{ memorySize: 64 }, 'Invalid context "memorySize" = 64: a whole number from 128 to 10240'],
    [{ memorySize: 'lots' }, 'Invalid context "memorySize" = "lots": a whole number from 128 to 10240'],
    [{ throttleBurstLimit: 6000 }, 'Invalid context "throttleBurstLimit" = 6000: a whole number from 0 to 5000'],
    [{ reservedConcurrency: 0 }, 'Invalid context "reservedConcurrency" = 0: a whole number from 1 to 10000000'],
    [
      { logRetentionDays: 45 },
      'Invalid context "logRetentionDays" = 45: one of 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653',
    ],
    [
      { authorizerCacheTtlSeconds: 7200 },
      'Invalid context "authorizerCacheTtlSeconds" = 7200: a whole number from 0 to 3600',
    ],
    [{ alarmEmail: 'ops' }, 'Invalid context "alarmEmail" = "ops": an e-mail address'],
    [{ tableName: 'a b' }, 'Invalid context "tableName" = "a b": a DynamoDB table name: 3-255 of A-Z a-z 0-9 _ - .'],
    [{ apiGatewayCloudWatchRole: 'yes' }, 'Invalid context "apiGatewayCloudWatchRole" = "yes": true or false'],
    [
      { deploymentConfig: 'LambdaAllAtOnce' },
      'Invalid context "deploymentConfig" = "LambdaAllAtOnce": for prod (never all at once), one of LambdaCanary10Percent5Minutes, LambdaCanary10Percent10Minutes, LambdaCanary10Percent15Minutes, LambdaCanary10Percent30Minutes, LambdaLinear10PercentEvery1Minute, LambdaLinear10PercentEvery2Minutes, LambdaLinear10PercentEvery3Minutes, LambdaLinear10PercentEvery10Minutes',
    ],
    [
      { deploymentConfig: 'Canary' },
      'Invalid context "deploymentConfig" = "Canary": for prod (never all at once), one of LambdaCanary10Percent5Minutes,',
    ],
    [
      { runbookUrl: 'ftp://x' },
      'Invalid context "runbookUrl" = "ftp://x": an https:// address or a path of the repository, such as docs/runbooks.md',
    ],
    [
      { certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc' },
      'Invalid context "certificateArn" = "arn:aws:acm:us-east-1:123456789012:certificate/abc": needs domainName',
    ],
    [
      { domainName: 'api.example.com', hostedZoneId: 'Z0123456789ABC' },
      'Invalid context "hostedZoneId" = "Z0123456789ABC": hostedZoneId and hostedZoneName go together',
    ],
    [
      { domainName: 'api.example.com', hostedZoneId: 'Z0123456789ABC', hostedZoneName: 'example.org' },
      'Invalid context "hostedZoneName" = "example.org": must be api.example.com or one of its parent domains',
    ],
  ])('refuses %j in one line naming the key', (values, message) => {
    expect(() => parse(values)).toThrow(message);
    try {
      parse(values);
    } catch (error) {
      expect((error as Error).message).not.toContain('\n');
    }
  });

  it('refuses a stage name API Gateway or CloudFormation would refuse', () => {
    expect(() => parse({}, 'Prod_1')).toThrow(
      'Invalid context "stage" = "Prod_1": lowercase letters, digits and "-", starting with a letter, at most 31 characters',
    );
  });

  it('gives the local stage (npm start, the tests) the throttle of 250 a second, burst 125, and no reservations', () => {
    expect(parse({}, 'local')).toMatchObject({
      throttleRateLimit: 250,
      throttleBurstLimit: 125,
      reservedConcurrency: undefined,
      authorizerReservedConcurrency: undefined,
    });
    expect(parse({ reservedConcurrency: '10' }, 'local').reservedConcurrency).toBe(10);
    expect(parse({}, 'dev')).toMatchObject({
      throttleRateLimit: 50,
      throttleBurstLimit: 5,
      reservedConcurrency: 25,
      authorizerReservedConcurrency: 100,
    });
  });

  it('deploys all at once by default except prod, which shifts 10% first; any stage may choose another CodeDeploy configuration', () => {
    expect(parse({}, 'dev').deploymentConfig).toBe('LambdaAllAtOnce');
    expect(parse({}, 'local').deploymentConfig).toBe('LambdaAllAtOnce');
    expect(parse({}, 'prod').deploymentConfig).toBe('LambdaCanary10Percent5Minutes');
    expect(
      parse({ deploymentConfig: 'CodeDeployDefault.LambdaLinear10PercentEvery2Minutes' }, 'prod').deploymentConfig,
    ).toBe('LambdaLinear10PercentEvery2Minutes');
    expect(parse({ deploymentConfig: 'LambdaCanary10Percent15Minutes' }, 'dev').deploymentConfig).toBe(
      'LambdaCanary10Percent15Minutes',
    );
    expect(() => parse({ deploymentConfig: 'AllAtOnce' }, 'dev')).toThrow(
      'Invalid context "deploymentConfig" = "AllAtOnce": one of LambdaAllAtOnce, LambdaCanary10Percent5Minutes,',
    );
  });
});

describe('a multi-Region stage (regions, witnessRegion)', () => {
  const domain = { domainName: 'tfe.example.com', hostedZoneId: 'Z0123456789ABC', hostedZoneName: 'example.com' };

  it('takes two replica Regions and a witness, or three replicas, of one MRSC Region set', () => {
    expect(parse({ ...domain, regions: 'us-east-1,us-east-2', witnessRegion: 'us-west-2' }).multiRegion).toEqual({
      regions: ['us-east-1', 'us-east-2'],
      witnessRegion: 'us-west-2',
    });
    expect(parse({ ...domain, regions: 'eu-west-1, eu-central-1 ,eu-west-3' }).multiRegion).toEqual({
      regions: ['eu-west-1', 'eu-central-1', 'eu-west-3'],
      witnessRegion: undefined,
    });
    // cdk.json may give the list as JSON.
    expect(
      parse({ ...domain, regions: ['ap-northeast-1', 'ap-northeast-3'], witnessRegion: 'ap-northeast-2' }).multiRegion,
    ).toEqual({ regions: ['ap-northeast-1', 'ap-northeast-3'], witnessRegion: 'ap-northeast-2' });
    expect(parse(domain).multiRegion).toBeUndefined();
  });

  it.each([
    [
      { ...domain, regions: 'us-east-1,eu-west-1', witnessRegion: 'us-west-2' },
      'Invalid context "regions" = "eu-west-1": is not in the US Region set of us-east-1 (us-east-1, us-east-2, us-west-2): an MRSC table\'s Regions are all in one set',
    ],
    [
      { ...domain, regions: 'eu-west-1,eu-west-2', witnessRegion: 'us-west-2' },
      'Invalid context "witnessRegion" = "us-west-2": is not in the EU Region set of eu-west-1',
    ],
    [
      { ...domain, regions: 'us-east-1,sa-east-1,us-west-2' },
      'Invalid context "regions" = "us-east-1,sa-east-1,us-west-2": comma-separated Regions of one MRSC Region set (US: us-east-1, us-east-2, us-west-2; EU: eu-west-1, eu-west-2, eu-west-3, eu-central-1; AP: ap-northeast-1, ap-northeast-2, ap-northeast-3)',
    ],
    [
      { ...domain, regions: 'us-east-1,us-east-2' },
      'Invalid context "regions" = "us-east-1,us-east-2": 2 replica Regions: MRSC takes exactly 3 Regions, three replicas or two and witnessRegion',
    ],
    [
      { ...domain, regions: 'eu-west-1,eu-west-2,eu-west-3,eu-central-1' },
      'Invalid context "regions" = "eu-west-1,eu-west-2,eu-west-3,eu-central-1": 4 replica Regions: MRSC takes exactly 3 Regions',
    ],
    [
      { ...domain, regions: 'us-east-1,us-east-2,us-west-2', witnessRegion: 'us-west-2' },
      'Invalid context "witnessRegion" = "us-west-2": is one of the replica regions: the witness must be a third Region',
    ],
    [
      { ...domain, regions: 'us-east-1', witnessRegion: 'us-west-2' },
      'Invalid context "regions" = "us-east-1": 1 replica Region and a witness: MRSC takes exactly 3 Regions',
    ],
    [
      { ...domain, regions: 'us-east-1,us-east-1', witnessRegion: 'us-west-2' },
      'Invalid context "regions" = "us-east-1,us-east-1": names us-east-1 twice',
    ],
    [{ ...domain, witnessRegion: 'us-west-2' }, 'Invalid context "witnessRegion" = "us-west-2": needs regions'],
    [
      { regions: 'us-east-1,us-east-2', witnessRegion: 'us-west-2' },
      'Invalid context "regions" = "us-east-1,us-east-2": needs domainName, hostedZoneId and hostedZoneName',
    ],
    [
      {
        domainName: 'tfe.example.com',
        certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc',
        regions: 'us-east-1,us-east-2',
        witnessRegion: 'us-west-2',
      },
      'Invalid context "regions" = "us-east-1,us-east-2": needs domainName, hostedZoneId and hostedZoneName',
    ],
    [
      {
        ...domain,
        certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc',
        regions: 'us-east-1,us-east-2',
        witnessRegion: 'us-west-2',
      },
      'Invalid context "certificateArn" = "arn:aws:acm:us-east-1:123456789012:certificate/abc": an ACM certificate serves one Region',
    ],
    [
      { ...domain, domainName: 'example.com', regions: 'us-east-1,us-east-2', witnessRegion: 'us-west-2' },
      'Invalid context "domainName" = "example.com": with regions, a name under example.com, not the zone\'s apex',
    ],
    [
      { ...domain, tableName: 'old-table', regions: 'us-east-1,us-east-2', witnessRegion: 'us-west-2' },
      'Invalid context "tableName" = "old-table": with regions, leave it out: the stage creates its global table, which must start empty',
    ],
    [
      { ...domain, disableExecuteApiEndpoint: true, regions: 'us-east-1,us-east-2', witnessRegion: 'us-west-2' },
      'Invalid context "disableExecuteApiEndpoint" = true: with regions, leave it out',
    ],
  ])('refuses %j in one line naming the key', (values, message) => {
    expect(() => parse(values)).toThrow(message);
    try {
      parse(values);
    } catch (error) {
      expect((error as Error).message).not.toContain('\n');
    }
  });
});

describe('capacity checked at synth against the account', () => {
  it('refuses a per-method rate whose total over all methods exceeds the account’s rate', () => {
    // 1,000 req/s on each method: with the route table's methods that is well past 10,000.
    expect(() => synthesize({ context: { throttleRateLimit: 1000 } })).toThrow(
      /^Invalid context "throttleRateLimit" = 1000: \d+ methods × 1000 req\/s = \d+ req\/s exceeds accountThrottleRateLimit 10000$/,
    );
    // A raised account quota, stated in context, lets it through (with reservations that hold the rate: see deployments.test.ts).
    expect(() =>
      synthesize({
        context: {
          throttleRateLimit: 1000,
          accountThrottleRateLimit: 50_000,
          reservedConcurrency: 'none',
          authorizerReservedConcurrency: 'none',
        },
      }),
    ).not.toThrow();
  });

  it('refuses reservations that would leave the account fewer than 100 unreserved executions', () => {
    expect(() => synthesize({ context: { reservedConcurrency: 200 } })).toThrow(
      'Invalid context "reservedConcurrency" = 200: 9 functions × 200 + authorizer 100 = 1900 exceeds accountConcurrency 1000 − 100 unreserved',
    );
  });
});

describe('a custom domain the stack could not serve', () => {
  it('refuses a domain it could not serve, and turning execute-api off without a domain', () => {
    expect(() => synthesize({ context: { domainName: 'tfe.example.com' } })).toThrow(/certificateArn/);
    expect(() => synthesize({ context: { disableExecuteApiEndpoint: 'true' } })).toThrow(/needs domainName/);
  });
});

describe('settings reach the template', () => {
  it('sets memory, log retention, authorizer cache, per-method throttle and reserved concurrency', () => {
    const { template } = synthesize({
      context: {
        stages: { test: { memorySize: 2048, logRetentionDays: 90, authorizerCacheTtlSeconds: 300 } },
        throttleRateLimit: '100',
        throttleBurstLimit: '50',
        reservedConcurrency: 'none',
        authorizerReservedConcurrency: '600',
      },
    });
    for (const fn of Object.values(resourcesOf(template, 'AWS::Lambda::Function'))) {
      expect(fn.Properties.MemorySize).toBe(2048);
    }
    const functionLogs = Object.values(resourcesOf(template, 'AWS::Logs::LogGroup')).filter(
      (g) => g.Properties.RetentionInDays !== 90,
    );
    expect(functionLogs.length).toBeLessThanOrEqual(1); // only the API access log keeps its own retention
    expect(
      Object.values(resourcesOf(template, 'AWS::ApiGateway::Authorizer'))[0]!.Properties.AuthorizerResultTtlInSeconds,
    ).toBe(300);
    expect(Object.values(resourcesOf(template, 'AWS::ApiGateway::Stage'))[0]!.Properties.MethodSettings).toEqual([
      expect.objectContaining({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 50 }),
    ]);
    const reservations = Object.values(resourcesOf(template, 'AWS::Lambda::Function')).map(
      (f) => f.Properties.ReservedConcurrentExecutions,
    );
    expect(reservations.filter((r) => r === undefined)).toHaveLength(reservations.length - 1); // all but the authorizer's
    expect(reservations).toContain(600); // 9 methods with a token × (50 + 100 × 0.1) = 540 ≤ 600
  });

  it('subscribes the alarm e-mail to the alarm topic', () => {
    const { template } = synthesize({ context: { alarmEmail: 'ops@example.com' } });
    expect(Object.values(resourcesOf(template, 'AWS::SNS::Subscription')).map((s) => s.Properties)).toEqual([
      expect.objectContaining({ Protocol: 'email', Endpoint: 'ops@example.com' }),
    ]);
  });
});

describe('the account’s API Gateway logging role', () => {
  const accounts = async (context: Record<string, unknown>) => {
    const template = await templateOf({ context });
    return {
      accounts: resourcesOf(template, 'AWS::ApiGateway::Account'),
      roles: resourcesOf(template, 'AWS::IAM::Role'),
    };
  };
  const pushesLogs = (role: any) =>
    JSON.stringify(role.Properties.ManagedPolicyArns ?? []).includes('AmazonAPIGatewayPushToCloudWatchLogs');

  it('is not owned by a stage by default', async () => {
    const { accounts: found, roles } = await accounts({});
    expect(found).toEqual({});
    expect(Object.values(roles).filter(pushesLogs)).toEqual([]);
  });

  it('is created, and retained on delete, when the stage is asked to own it', async () => {
    const { accounts: found, roles } = await accounts({ apiGatewayCloudWatchRole: true });
    expect(Object.values(found)).toHaveLength(1);
    expect((Object.values(found)[0] as any).DeletionPolicy).toBe('Retain');
    expect(Object.values(roles).filter(pushesLogs)).toHaveLength(1);
  });
});

describe('adopting an existing table (a restore, or a redeploy after destroy)', () => {
  const adopted = 'tfc-tags-comments-prod-restored';
  const tableArn = `arn:aws:dynamodb:eu-west-1:123456789012:table/${adopted}`;

  it('creates no table and points every function and policy at the adopted one', () => {
    const { template } = synthesize({ context: { tableName: adopted } });
    expect(resourcesOf(template, 'AWS::DynamoDB::GlobalTable')).toEqual({});
    expect(resourcesOf(template, 'AWS::DynamoDB::Table')).toEqual({});
    for (const fn of Object.values(resourcesOf(template, 'AWS::Lambda::Function'))) {
      expect(fn.Properties.Environment.Variables.TABLE_NAME).toBe(adopted);
    }
    const tableStatements = Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
      .flatMap((p) => p.Properties.PolicyDocument.Statement)
      .filter((s: any) => [s.Action].flat().some((a: string) => a.startsWith('dynamodb:')));
    expect(tableStatements.length).toBeGreaterThan(0);
    // The table, or (the sweeper's Query) its Expiry index.
    for (const statement of tableStatements)
      expect([tableArn, `${tableArn}/index/Expiry`]).toContainEqual(statement.Resource);
    expect(template.toJSON().Outputs.TableName.Value).toBe(adopted);
  });

  it('still watches the adopted table', () => {
    const { template } = synthesize({ context: { tableName: adopted } });
    const tableAlarms = Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm')).filter((a) =>
      JSON.stringify(a.Properties).includes('AWS/DynamoDB'),
    );
    expect(tableAlarms.length).toBeGreaterThan(0);
    for (const alarm of tableAlarms)
      expect(JSON.stringify(alarm.Properties)).toContain(`{"Name":"TableName","Value":"${adopted}"}`);
  });
});

describe('feature flags', () => {
  it('sets every flag aws-cdk-lib recommends for new projects, at its recommended value', () => {
    const root = join(import.meta.dirname, '../..');
    const recommended = JSON.parse(
      readFileSync(join(root, 'node_modules/aws-cdk-lib/recommended-feature-flags.json'), 'utf8'),
    );
    const { context } = JSON.parse(readFileSync(join(root, 'cdk.json'), 'utf8'));
    expect(context).toMatchObject(recommended);
  });
});
