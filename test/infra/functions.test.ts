import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { APP_NAME } from '#shared/config';
import { AUTHORIZER_FUNCTION, functionNames, routes, type TableAccess } from '#shared/routes';
import { ApiFunction } from '#infra/cdk/constructs/api-function';
import { resourcesOf, synthesize, type Resources, type Synthesized } from './synth';

/** The functions as deployed: bundled by esbuild, exactly as `npm run synth` does (slow: once). */
let synth: Synthesized;
let lambdas: Resources;
let policies: Resources;
beforeAll(() => {
  synth = synthesize({ bundle: true });
  lambdas = resourcesOf(synth.template, 'AWS::Lambda::Function');
  policies = resourcesOf(synth.template, 'AWS::IAM::Policy');
}, 180_000);

const lambdaOf = (name: string) => {
  const found = Object.entries(lambdas).filter(([, r]) => r.Properties.Description === `${APP_NAME}: functions/${name}.ts`);
  expect(found, `one Lambda for functions/${name}.ts`).toHaveLength(1);
  return { logicalId: found[0]![0], ...(found[0]![1] as any) };
};

/** Every action the function's role may take, from the policies attached to that role. */
function actionsOf(name: string): string[] {
  const roleId = lambdaOf(name).Properties.Role['Fn::GetAtt'][0];
  return Object.values(policies)
    .filter((p) => p.Properties.Roles.some((r: any) => r.Ref === roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement)
    .flatMap((s: any) => [s.Action].flat());
}

const dynamoActions = (name: string) => actionsOf(name).filter((a) => a.startsWith('dynamodb:')).sort();
const WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem', 'dynamodb:ConditionCheckItem', 'dynamodb:PartiQLInsert', 'dynamodb:PartiQLUpdate', 'dynamodb:PartiQLDelete'];
const accessOf = (name: string): TableAccess =>
  name === AUTHORIZER_FUNCTION ? 'read' : routes.find((r) => r.function === name)!.access;
const allFunctions = () => [...functionNames(), AUTHORIZER_FUNCTION];

describe('one Lambda per route-table function, plus the authorizer', () => {
  it('has exactly one function per handler file and nothing else', () => {
    expect(Object.keys(lambdas)).toHaveLength(allFunctions().length);
    for (const name of allFunctions()) lambdaOf(name);
  });

  it.each(allFunctions())('%s runs Node 24 on arm64 with tracing, its log group and the table name', (name) => {
    const { Properties: p } = lambdaOf(name);
    expect(p.Runtime).toBe('nodejs24.x');
    expect(p.Architectures).toEqual(['arm64']);
    expect(p.Handler).toBe('index.handler');
    expect(p.MemorySize).toBe(ApiFunction.MEMORY_MB);
    expect(p.Timeout).toBe(ApiFunction.TIMEOUT.toSeconds());
    expect(p.TracingConfig).toEqual({ Mode: 'Active' });
    expect(p.LoggingConfig.LogGroup.Ref).toMatch(/Logs/);
    expect(p.Environment.Variables).toMatchObject({
      TABLE_NAME: { Ref: expect.stringMatching(/^Table/) },
      POWERTOOLS_SERVICE_NAME: APP_NAME,
      POWERTOOLS_LOG_LEVEL: 'INFO',
      NODE_OPTIONS: '--enable-source-maps',
    });
  });

  it('gives every function a log group with a retention', () => {
    const groups = resourcesOf(synth.template, 'AWS::Logs::LogGroup');
    for (const name of allFunctions()) {
      const group = groups[lambdaOf(name).Properties.LoggingConfig.LogGroup.Ref]!;
      expect(group.Properties.RetentionInDays).toBe(30);
    }
  });
});

describe('least privilege, from the route table access', () => {
  it.each(functionNames())('%s holds exactly the table actions of its access level', (name) => {
    const actions = dynamoActions(name);
    switch (accessOf(name)) {
      case 'none':
        expect(actions).toEqual([]);
        break;
      case 'read':
        expect(actions).toEqual(['dynamodb:GetItem', 'dynamodb:Query']);
        expect(actions.filter((a) => WRITE_ACTIONS.includes(a))).toEqual([]);
        break;
      case 'write':
        expect(actions).toEqual([
          'dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem',
        ]);
        break;
    }
    expect(actions).not.toContain('dynamodb:Scan');
    expect(actions.some((a) => a.includes('*'))).toBe(false);
  });

  it('lets the authorizer read one item and nothing else', () => {
    expect(dynamoActions(AUTHORIZER_FUNCTION)).toEqual(['dynamodb:GetItem']);
  });

  it('scopes table actions to the table, and log writes to the function’s own log group', () => {
    for (const name of allFunctions()) {
      const { Properties: p } = lambdaOf(name);
      const roleId = p.Role['Fn::GetAtt'][0];
      const statements = Object.values(policies)
        .filter((pol) => pol.Properties.Roles.some((r: any) => r.Ref === roleId))
        .flatMap((pol) => pol.Properties.PolicyDocument.Statement);
      for (const s of statements) {
        const actions = [s.Action].flat() as string[];
        if (actions.some((a) => a.startsWith('dynamodb:'))) expect(s.Resource).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^Table/), 'Arn'] });
        if (actions.some((a) => a.startsWith('logs:'))) expect(s.Resource).toEqual({ 'Fn::GetAtt': [p.LoggingConfig.LogGroup.Ref, 'Arn'] });
        if (s.Resource === '*') expect(actions.sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
      }
    }
  });

  it('attaches no managed policy to a function role (no blanket logs:* from AWSLambdaBasicExecutionRole)', () => {
    const roles = resourcesOf(synth.template, 'AWS::IAM::Role');
    for (const name of allFunctions()) {
      const role = roles[lambdaOf(name).Properties.Role['Fn::GetAtt'][0]]!;
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });
});

describe('the bundles', () => {
  /** The asset directory is named after the hash in the code's S3 key. */
  const bundleOf = (name: string) => {
    const hash = (lambdaOf(name).Properties.Code.S3Key as string).replace(/\.zip$/, '');
    return join(synth.outdir, `asset.${hash}`, 'index.mjs');
  };

  it.each(allFunctions())('%s is one minified ESM file with a source map and the AWS SDK inside', (name) => {
    const file = bundleOf(name);
    expect(existsSync(file)).toBe(true);
    expect(existsSync(`${file}.map`)).toBe(true);
    const code = readFileSync(file, 'utf8');
    expect(code.startsWith("import { createRequire } from 'node:module';")).toBe(true);
    expect(code).not.toMatch(/from\s*["']#shared\//); // package.json imports resolved by esbuild
    expect(code).not.toMatch(/(from\s*|import\()["']@aws-sdk\//); // bundled, never external
    if (accessOf(name) !== 'none') expect(code).toContain('dynamodb'); // the DynamoDB client is inside
    expect(code.length / code.split('\n').length).toBeGreaterThan(1_000); // minified
  });

  it('serves ping from the bundle as deployed: 204 with the contract headers', async () => {
    const { handler } = (await import(pathToFileURL(bundleOf('ping')).href)) as { handler: (e: unknown, c: unknown) => Promise<any> };
    const result = await handler(proxyEvent('GET', '/api/v2/ping'), lambdaContext('ping'));
    expect(result.statusCode).toBe(204);
    expect(result.headers).toMatchObject({ 'TFP-API-Version': '2.6', 'X-RateLimit-Limit': '30', 'TFP-AppName': APP_NAME });
  });

  it('rejects a request without a token in the authorizer bundle (API Gateway turns it into a 401)', async () => {
    const { handler } = (await import(pathToFileURL(bundleOf(AUTHORIZER_FUNCTION)).href)) as { handler: (e: unknown) => Promise<unknown> };
    await expect(handler({ type: 'REQUEST', methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:api/test/GET/api/v2/comments/x', headers: {} }))
      .rejects.toThrow('Unauthorized');
  });
});

function proxyEvent(method: string, path: string) {
  return {
    resource: path, path, httpMethod: method, headers: {}, multiValueHeaders: {},
    queryStringParameters: null, multiValueQueryStringParameters: null, pathParameters: null, stageVariables: null,
    body: null, isBase64Encoded: false,
    requestContext: { requestId: 'test', httpMethod: method, path, resourcePath: path, stage: 'test', identity: { sourceIp: '127.0.0.1' } },
  };
}

function lambdaContext(functionName: string) {
  return { functionName, awsRequestId: 'test', invokedFunctionArn: `arn:aws:lambda:eu-west-1:123456789012:function:${functionName}`, memoryLimitInMB: '1024', getRemainingTimeInMillis: () => 10_000 };
}
