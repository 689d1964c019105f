import { beforeAll, describe, expect, it } from '@jest/globals';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '#shared/config';
import { COMMON_HEADERS } from '#shared/http/responses';
import { routes } from '#shared/routes';
import { createTableInput, TABLE_KEYS } from '#shared/store/table';
import { EXPIRY_INDEX, EXPIRY_KEYS } from '#shared/store/expiry';
import { ACCESS_LOG_FIELDS } from '#infra/cdk/constructs/json-api-gateway';
import type { Template } from 'aws-cdk-lib/assertions';
import { deployedMethods, resourcesOf, templateOf, underBase } from './templates';
import { LOOPBACK_ISSUERS_ENV } from '#shared/workload-identity/issuer-keys';
import { HEALTH_PARTITION } from '#shared/health';
import { expectWith } from '../support/expect-with';

/** The template without bundling (same resources; only asset hashes differ), synthesized once per run. */
let template: Template;
beforeAll(async () => {
  template = await templateOf();
}, 120_000);

const single = (type: string) => {
  const found = Object.entries(resourcesOf(template, type));
  expectWith(found, type).toHaveLength(1);
  return { logicalId: found[0]![0], ...(found[0]![1] as any) };
};
const routeKey = (method: string, path: string) => `${method} ${path}`;
const METHOD_NOT_ALLOWED_BODY = { errors: [{ status: '405', title: 'method not allowed' }] };
const contractHeaders = { 'Content-Type': 'application/vnd.api+json', ...COMMON_HEADERS };
/** Served by a mock at the host root beside /api/v2 (test/infra/edge.test.ts). */
const DISCOVERY = '/.well-known/terraform.json';
const routeTableMethods = () => deployedMethods(template).filter((m) => m.path !== DISCOVERY);
/** The Lambda function an integration URI invokes: through the alias it names (`Ref`), that alias's function. */
const lambdaInvokedBy = (uri: unknown): any => {
  const aliasId = JSON.stringify(uri).match(/functions\/",\{"Ref":"(\w+)"\}/)![1]!;
  const alias = resourcesOf(template, 'AWS::Lambda::Alias')[aliasId]!;
  return resourcesOf(template, 'AWS::Lambda::Function')[alias.Properties.FunctionName.Ref];
};

describe('routes', () => {
  it('deploys exactly the route table: every method and path under /api/v2', () => {
    const deployed = routeTableMethods()
      .filter((m) => m.method !== 'ANY')
      .map((m) => routeKey(m.method, m.path));
    const table = routes.map((r) => routeKey(r.method, underBase(r.path)));
    expect(new Set(deployed)).toEqual(new Set(table));
    expect(deployed).toHaveLength(table.length);
  });

  it('sends each route to its function’s Lambda (its live alias: deployments.test.ts); the PATCH and DELETE paths share one', () => {
    const methods = deployedMethods(template);
    for (const route of routes) {
      const method = methods.find((m) => m.method === route.method && m.path === underBase(route.path))!;
      expect(method.properties.Integration.Type).toBe('AWS_PROXY');
      expect(lambdaInvokedBy(method.properties.Integration.Uri).Properties.Description).toMatch(
        new RegExp(`functions/${route.function}\\.ts$`),
      );
    }
  });

  it('receives HCP Terraform run notifications at POST /api/v2/run-notifications/{organization_name}, with no authorizer', () => {
    const method = deployedMethods(template).find(
      (m) => m.method === 'POST' && m.path === '/api/v2/run-notifications/{organization_name}',
    )!;
    expect(method.properties.AuthorizationType).toBe('NONE');
    expect(method.properties.AuthorizerId).toBeUndefined();
    expect(lambdaInvokedBy(method.properties.Integration.Uri).Properties.Description).toMatch(
      /functions\/run-notifications\/receive\.ts$/,
    );
  });

  it('guards every route with a role by the REQUEST authorizer, and only those', () => {
    const authorizer = single('AWS::ApiGateway::Authorizer');
    for (const route of routes) {
      const method = deployedMethods(template).find(
        (m) => m.method === route.method && m.path === underBase(route.path),
      )!;
      if (route.role === null) {
        expect(method.properties.AuthorizationType).toBe('NONE');
      } else {
        expect(method.properties.AuthorizationType).toBe('CUSTOM');
        expect(method.properties.AuthorizerId).toEqual({ Ref: authorizer.logicalId });
      }
    }
    expect(deployedMethods(template).find((m) => m.path === underBase('/ping'))!.properties.AuthorizationType).toBe(
      'NONE',
    );
  });

  it('answers 405 with the contract body and Allow on every routed path for any other method (ANY mock)', () => {
    const methods = routeTableMethods();
    const routedPaths = new Set(routes.map((r) => underBase(r.path)));
    const anyPaths = methods.filter((m) => m.method === 'ANY').map((m) => m.path);
    expect(new Set(anyPaths)).toEqual(routedPaths);
    for (const any of methods.filter((m) => m.method === 'ANY')) {
      const { Integration: integration, MethodResponses: responses, AuthorizationType } = any.properties;
      expect(AuthorizationType).toBe('NONE');
      expect(integration.Type).toBe('MOCK');
      expect(integration.RequestTemplates['application/json']).toBe('{"statusCode": 405}');
      // Any other body type passes through to the one (default) integration response: 405, never 415.
      expect(integration.PassthroughBehavior).toBe('WHEN_NO_MATCH');
      expect(integration.IntegrationResponses).toHaveLength(1);
      const [response] = integration.IntegrationResponses;
      expect(response.SelectionPattern).toBeUndefined();
      expect(response.StatusCode).toBe('405');
      expect(JSON.parse(response.ResponseTemplates['application/json'])).toEqual(METHOD_NOT_ALLOWED_BODY);
      expect(JSON.parse(response.ResponseTemplates['application/vnd.api+json'])).toEqual(METHOD_NOT_ALLOWED_BODY);
      const allow = routes
        .filter((r) => underBase(r.path) === any.path)
        .map((r) => r.method)
        .sort()
        .join(', ');
      const headers = { ...contractHeaders, Allow: allow };
      expect(response.ResponseParameters).toEqual({
        ...Object.fromEntries(
          Object.entries(headers).map(([name, value]) => [`method.response.header.${name}`, `'${value}'`]),
        ),
        'method.response.header.X-Request-Id': 'context.requestId',
      });
      expect(responses).toEqual([
        {
          StatusCode: '405',
          ResponseParameters: Object.fromEntries(
            [...Object.keys(headers), 'X-Request-Id'].map((name) => [`method.response.header.${name}`, true]),
          ),
        },
      ]);
    }
  });
});

describe('the gateway responses for a refused token', () => {
  const response = (type: string) =>
    Object.values(resourcesOf(template, 'AWS::ApiGateway::GatewayResponse')).find(
      (r) => r.Properties.ResponseType === type,
    )!.Properties;

  it('say which of three things is wrong: UNAUTHORIZED literally, ACCESS_DENIED from the Deny’s context', () => {
    expect(JSON.parse(response('UNAUTHORIZED').ResponseTemplates['application/json']).errors[0].detail).toBe(
      'no Authorization header: send Authorization: Bearer <token>',
    );
    const denied = response('ACCESS_DENIED');
    expect(denied.StatusCode).toBe('401');
    for (const template of Object.values(denied.ResponseTemplates as Record<string, string>)) {
      expect(JSON.parse(template).errors).toEqual([
        { status: '401', title: 'unauthorized', detail: '$context.authorizer.detail' },
      ]);
    }
  });
});

describe('the REQUEST authorizer', () => {
  it('reads the Authorization header and caches its answer per token', () => {
    const authorizer = single('AWS::ApiGateway::Authorizer');
    expect(authorizer.Properties.Type).toBe('REQUEST');
    expect(authorizer.Properties.IdentitySource).toBe('method.request.header.Authorization');
    expect(authorizer.Properties.AuthorizerResultTtlInSeconds).toBe(AUTHORIZER_CACHE_TTL_SECONDS);
    expect(JSON.stringify(authorizer.Properties.AuthorizerUri)).toMatch(/AuthorizerFunction\w+/);
    // A REQUEST authorizer has no identity validation expression: a JWT (dots and all) reaches it as an operator token does.
    expect(authorizer.Properties.IdentityValidationExpression).toBeUndefined();
  });

  it('fetches loopback (http://127.0.0.1) issuers on the local stage only', async () => {
    const variablesOf = (of: Template) =>
      Object.values(resourcesOf(of, 'AWS::Lambda::Function')).find((fn) =>
        JSON.stringify(fn.Properties.Description ?? '').includes('functions/authorizer.ts'),
      )!.Properties.Environment.Variables;
    expect(variablesOf(template)[LOOPBACK_ISSUERS_ENV]).toBeUndefined();
    expect(variablesOf(await templateOf({ stage: 'local' }))[LOOPBACK_ISSUERS_ENV]).toBe('allowed');
  }, 120_000);

  it('may be invoked by this API only', () => {
    const permissions = Object.values(resourcesOf(template, 'AWS::Lambda::Permission')).filter((p) =>
      JSON.stringify(p.Properties.FunctionName).includes('AuthorizerFunction'),
    );
    expect(permissions).toHaveLength(1);
    expect(permissions[0]!.Properties.Principal).toBe('apigateway.amazonaws.com');
    expect(JSON.stringify(permissions[0]!.Properties.SourceArn)).toMatch(/authorizers/);
  });
});

describe('the stage', () => {
  it('is named after the stage, traced, throttled per method and logs errors without request data', () => {
    const stage = single('AWS::ApiGateway::Stage');
    expect(stage.Properties.StageName).toBe('test');
    expect(stage.Properties.TracingEnabled).toBe(true);
    expect(stage.Properties.MethodSettings).toEqual([
      expect.objectContaining({
        HttpMethod: '*',
        ResourcePath: '/*',
        LoggingLevel: 'ERROR',
        DataTraceEnabled: false,
        MetricsEnabled: true,
        ThrottlingRateLimit: 50,
        ThrottlingBurstLimit: 5,
      }),
    ]);
    // API Gateway applies it to each method: all methods at their limit fit in the account's
    // 10,000 req/s (shared by every API and stage of the region) with room for a second stage.
    // Sized against the functions' reservations: deployments.test.ts.
    const methods = Object.keys(resourcesOf(template, 'AWS::ApiGateway::Method')).length;
    expect(methods * 50 * 2).toBeLessThanOrEqual(10_000);
  });

  it('writes JSON access logs with the request facts and never a token', () => {
    const { AccessLogSetting: setting } = single('AWS::ApiGateway::Stage').Properties;
    const format = JSON.parse(setting.Format);
    expect(format).toEqual(ACCESS_LOG_FIELDS);
    expect(format).toMatchObject({
      requestId: '$context.requestId',
      ip: '$context.identity.sourceIp',
      method: '$context.httpMethod',
      resourcePath: '$context.resourcePath',
      status: '$context.status',
      responseLatency: '$context.responseLatency',
    });
    expect(setting.Format.toLowerCase()).not.toMatch(/authorization|header|requestoverride|body/);
    // The log group's ARN without the `:*` of its Arn attribute: what API Gateway stores, so a
    // drift check finds the stage in sync (feature flag logGroupDestinationArnWithoutWildcard).
    expect(setting.DestinationArn).toEqual({
      'Fn::Join': [
        '',
        ['arn:aws:logs:eu-west-1:123456789012:log-group:', { Ref: expect.stringMatching(/AccessLogs/) }],
      ],
    });
  });

  it('is a regional endpoint', () => {
    expect(single('AWS::ApiGateway::RestApi').Properties.EndpointConfiguration).toEqual({ Types: ['REGIONAL'] });
  });
});

describe('the table', () => {
  it('uses the local store’s keys, on demand, with recovery, deletion protection and encryption, retained', () => {
    const table = single('AWS::DynamoDB::GlobalTable');
    expect(table.Properties.KeySchema).toEqual([
      { AttributeName: TABLE_KEYS.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE_KEYS.sortKey, KeyType: 'RANGE' },
    ]);
    expect(table.Properties.BillingMode).toBe('PAY_PER_REQUEST');
    expect(table.Properties.SSESpecification).toEqual({ SSEEnabled: true, SSEType: 'KMS' });
    expect(table.Properties.Replicas).toEqual([
      expect.objectContaining({
        Region: 'eu-west-1',
        DeletionProtectionEnabled: true,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      }),
    ]);
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
    expect(table.Properties.TableName).toBeUndefined(); // CloudFormation names it: two stages per account
  });

  it('lists expiring items in the sparse Expiry index, keys only, and has no TTL and no local index (MRSC allows neither)', () => {
    const table = single('AWS::DynamoDB::GlobalTable');
    expect(table.Properties.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: EXPIRY_INDEX,
        KeySchema: [
          { AttributeName: EXPIRY_KEYS.shard, KeyType: 'HASH' },
          { AttributeName: EXPIRY_KEYS.sweepAt, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ]);
    expect(new Set(table.Properties.AttributeDefinitions)).toEqual(
      new Set([
        { AttributeName: TABLE_KEYS.partitionKey, AttributeType: 'S' },
        { AttributeName: TABLE_KEYS.sortKey, AttributeType: 'S' },
        { AttributeName: EXPIRY_KEYS.shard, AttributeType: 'S' },
        { AttributeName: EXPIRY_KEYS.sweepAt, AttributeType: 'N' },
      ]),
    );
    expect(table.Properties.TimeToLiveSpecification).toBeUndefined();
    expect(table.Properties.LocalSecondaryIndexes).toBeUndefined();
  });

  it('is the table the local store creates: the same keys, attributes and indexes (shared/store/table.ts)', () => {
    const table = single('AWS::DynamoDB::GlobalTable');
    const local = createTableInput('local');
    expect(table.Properties.KeySchema).toEqual(local.KeySchema);
    expect(new Set(table.Properties.AttributeDefinitions)).toEqual(new Set(local.AttributeDefinitions));
    expect(table.Properties.GlobalSecondaryIndexes).toEqual(local.GlobalSecondaryIndexes);
    expect(local.LocalSecondaryIndexes).toBeUndefined();
  });
});

describe('the deep health route (healthRoute)', () => {
  const routesOf = async (options: Parameters<typeof templateOf>[0]) =>
    deployedMethods(await templateOf(options)).map(({ method, path }) => `${method} ${path}`);

  it('is left out of a single-Region stage unless asked for, and is in the local stage (the local Regions’ front calls it)', async () => {
    expect(await routesOf({})).not.toContain(`GET ${underBase('/health')}`);
    expect(await routesOf({ stage: 'local' })).toContain(`GET ${underBase('/health')}`);
  });

  it('answers without a token, from a function that may read only the health item', async () => {
    const asked = await templateOf({ context: { healthRoute: 'true' } });
    const health = deployedMethods(asked).find(({ path }) => path === underBase('/health'));
    expect(health?.properties.AuthorizationType).toBe('NONE');
    const policies = Object.entries(resourcesOf(asked, 'AWS::IAM::Policy')).filter(([id]) =>
      id.startsWith('HealthFunction'),
    );
    expect(policies).toHaveLength(1);
    const table = policies[0]![1].Properties.PolicyDocument.Statement.filter((s: any) =>
      [s.Action].flat().some((a: string) => a.startsWith('dynamodb:')),
    );
    expect(table.map((s: any) => [s.Action].flat())).toEqual([['dynamodb:GetItem']]);
    expect(JSON.stringify(table[0].Condition)).toContain(HEALTH_PARTITION);
  });
});
