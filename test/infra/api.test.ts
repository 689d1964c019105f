import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTHORIZER_CACHE_TTL_SECONDS, MAX_BODY_BYTES, RATE_LIMIT_PER_SECOND } from '#shared/config';
import { GATEWAY_ERRORS, gatewayErrorResponse, type GatewayErrorType } from '#shared/http/gateway-responses';
import { COMMON_HEADERS } from '#shared/http/responses';
import { routes } from '#shared/routes';
import { TABLE_KEYS } from '#shared/store/table';
import { startGateway, type LocalGateway } from '#infra/local/gateway';
import { ACCESS_LOG_FIELDS } from '#infra/cdk/constructs/json-api-gateway';
import { deployedMethods, resourcesOf, synthesize, underBase, type Synthesized } from './synth';

/** The template without bundling (same resources; only asset hashes differ), synthesized once. */
let synth: Synthesized;
beforeAll(() => {
  synth = synthesize({ bundle: false });
}, 120_000);

const single = (type: string) => {
  const found = Object.entries(resourcesOf(synth.template, type));
  expect(found, type).toHaveLength(1);
  return { logicalId: found[0]![0], ...(found[0]![1] as any) };
};
const routeKey = (method: string, path: string) => `${method} ${path}`;
const METHOD_NOT_ALLOWED_BODY = { errors: [{ status: '405', title: 'method not allowed' }] };
const contractHeaders = { 'Content-Type': 'application/vnd.api+json', ...COMMON_HEADERS };
/** A concrete URL path for a route path: `{run_id}` → `run-x`. */
const concrete = (path: string) => path.replace(/\{(\w+)\}/g, 'x-1');

describe('routes', () => {
  it('deploys exactly the route table: every method and path under /api/v2', () => {
    const deployed = deployedMethods(synth.template).filter((m) => m.method !== 'ANY').map((m) => routeKey(m.method, m.path));
    const table = routes.map((r) => routeKey(r.method, underBase(r.path)));
    expect(new Set(deployed)).toEqual(new Set(table));
    expect(deployed).toHaveLength(table.length);
  });

  it('sends each route to its function’s Lambda; the PATCH and DELETE aliases share one', () => {
    const lambdas = resourcesOf(synth.template, 'AWS::Lambda::Function');
    const methods = deployedMethods(synth.template);
    for (const route of routes) {
      const method = methods.find((m) => m.method === route.method && m.path === underBase(route.path))!;
      expect(method.properties.Integration.Type).toBe('AWS_PROXY');
      const target = JSON.stringify(method.properties.Integration.Uri).match(/"Fn::GetAtt":\["(\w+)","Arn"\]/)![1]!;
      expect((lambdas[target] as any).Properties.Description).toMatch(new RegExp(`functions/${route.function}\\.ts$`));
    }
  });

  it('guards every route with a role by the REQUEST authorizer, and only those', () => {
    const authorizer = single('AWS::ApiGateway::Authorizer');
    for (const route of routes) {
      const method = deployedMethods(synth.template).find((m) => m.method === route.method && m.path === underBase(route.path))!;
      if (route.role === null) {
        expect(method.properties.AuthorizationType).toBe('NONE');
      } else {
        expect(method.properties.AuthorizationType).toBe('CUSTOM');
        expect(method.properties.AuthorizerId).toEqual({ Ref: authorizer.logicalId });
      }
    }
    expect(deployedMethods(synth.template).find((m) => m.path === underBase('/ping'))!.properties.AuthorizationType).toBe('NONE');
  });

  it('answers 405 with the contract body on every routed path for any other method (ANY mock)', () => {
    const methods = deployedMethods(synth.template);
    const routedPaths = new Set(routes.map((r) => underBase(r.path)));
    const anyPaths = methods.filter((m) => m.method === 'ANY').map((m) => m.path);
    expect(new Set(anyPaths)).toEqual(routedPaths);
    for (const any of methods.filter((m) => m.method === 'ANY')) {
      const { Integration: integration, MethodResponses: responses, AuthorizationType } = any.properties;
      expect(AuthorizationType).toBe('NONE');
      expect(integration.Type).toBe('MOCK');
      expect(integration.RequestTemplates['application/json']).toBe('{"statusCode": 405}');
      const [response] = integration.IntegrationResponses;
      expect(response.StatusCode).toBe('405');
      expect(JSON.parse(response.ResponseTemplates['application/json'])).toEqual(METHOD_NOT_ALLOWED_BODY);
      expect(JSON.parse(response.ResponseTemplates['application/vnd.api+json'])).toEqual(METHOD_NOT_ALLOWED_BODY);
      expect(response.ResponseParameters).toEqual(Object.fromEntries(
        Object.entries(contractHeaders).map(([name, value]) => [`method.response.header.${name}`, `'${value}'`]),
      ));
      expect(responses).toEqual([{
        StatusCode: '405',
        ResponseParameters: Object.fromEntries(Object.keys(contractHeaders).map((name) => [`method.response.header.${name}`, true])),
      }]);
    }
  });
});

describe('the deployed routes and the local gateway’s are the same', () => {
  let local: LocalGateway;
  beforeAll(async () => {
    local = await startGateway();
  });
  afterAll(async () => {
    await local?.close();
  });

  const call = (method: string, path: string) => fetch(`${local.url}${concrete(path)}`, { method });

  it('serves every deployed method locally: public ones answer, the others ask for a token', async () => {
    for (const deployed of deployedMethods(synth.template).filter((m) => m.method !== 'ANY')) {
      const response = await call(deployed.method, deployed.path);
      const isPublic = deployed.properties.AuthorizationType === 'NONE';
      expect([deployed.method, deployed.path, response.status]).toEqual([deployed.method, deployed.path, isPublic ? expect.any(Number) : 401]);
      expect(response.status).not.toBe(404);
      expect(response.status).not.toBe(405);
    }
  });

  it('answers 405 locally wherever the template answers 405, with the same body', async () => {
    const methods = deployedMethods(synth.template);
    for (const any of methods.filter((m) => m.method === 'ANY')) {
      const served = new Set(methods.filter((m) => m.path === any.path).map((m) => m.method));
      for (const method of ['GET', 'POST', 'PATCH', 'DELETE', 'PUT'].filter((m) => !served.has(m))) {
        const response = await call(method, any.path);
        expect([method, any.path, response.status]).toEqual([method, any.path, 405]);
        expect(await response.json()).toEqual(JSON.parse(any.properties.Integration.IntegrationResponses[0].ResponseTemplates['application/json']));
      }
    }
  });

  it('answers an unknown path 404 locally, as the MISSING_AUTHENTICATION_TOKEN gateway response does', async () => {
    const response = await call('GET', '/api/v2/no-such-thing');
    expect(response.status).toBe(404);
    const deployed = Object.values(resourcesOf(synth.template, 'AWS::ApiGateway::GatewayResponse'))
      .find((r) => r.Properties.ResponseType === 'MISSING_AUTHENTICATION_TOKEN')!;
    expect(await response.json()).toEqual(JSON.parse(deployed.Properties.ResponseTemplates['application/json']));
  });
});

describe('the REQUEST authorizer', () => {
  it('reads the Authorization header and caches its answer per token', () => {
    const authorizer = single('AWS::ApiGateway::Authorizer');
    expect(authorizer.Properties.Type).toBe('REQUEST');
    expect(authorizer.Properties.IdentitySource).toBe('method.request.header.Authorization');
    expect(authorizer.Properties.AuthorizerResultTtlInSeconds).toBe(AUTHORIZER_CACHE_TTL_SECONDS);
    expect(JSON.stringify(authorizer.Properties.AuthorizerUri)).toMatch(/AuthorizerFunction\w+/);
  });

  it('may be invoked by this API only', () => {
    const permissions = Object.values(resourcesOf(synth.template, 'AWS::Lambda::Permission'))
      .filter((p) => JSON.stringify(p.Properties.FunctionName).includes('AuthorizerFunction'));
    expect(permissions).toHaveLength(1);
    expect(permissions[0]!.Properties.Principal).toBe('apigateway.amazonaws.com');
    expect(JSON.stringify(permissions[0]!.Properties.SourceArn)).toMatch(/authorizers/);
  });
});

describe('gateway responses: API Gateway’s own errors are the contract’s', () => {
  const responses = () => Object.values(resourcesOf(synth.template, 'AWS::ApiGateway::GatewayResponse')).map((r) => r.Properties);
  const types = Object.keys(GATEWAY_ERRORS) as GatewayErrorType[];

  it('has one gateway response per gateway error, and no other', () => {
    expect(responses().map((r) => r.ResponseType).sort()).toEqual([...types].sort());
  });

  it.each(types)('%s: status, JSON:API body and headers as the local gateway sends them', (type) => {
    const expected = gatewayErrorResponse(type);
    const response = responses().find((r) => r.ResponseType === type)!;
    expect(response.StatusCode).toBe(String(expected.statusCode));
    for (const template of Object.values(response.ResponseTemplates)) expect(JSON.parse(template as string)).toEqual(JSON.parse(expected.body));
    expect(Object.keys(response.ResponseTemplates).sort()).toEqual(['application/json', 'application/vnd.api+json']);
    expect(response.ResponseParameters).toEqual(Object.fromEntries(
      Object.entries(expected.headers!).map(([name, value]) => [`gatewayresponse.header.${name}`, `'${value}'`]),
    ));
    expect(response.ResponseParameters).toMatchObject(Object.fromEntries(
      Object.entries(contractHeaders).map(([name, value]) => [`gatewayresponse.header.${name}`, `'${value}'`]),
    ));
  });

  it('answers an unknown route 404, not API Gateway’s 403', () => {
    const response = responses().find((r) => r.ResponseType === 'MISSING_AUTHENTICATION_TOKEN')!;
    expect(response.StatusCode).toBe('404');
    expect(JSON.parse(response.ResponseTemplates['application/json'])).toEqual({ errors: [{ status: '404', title: 'not found' }] });
  });

  it('tells a throttled client when to retry, in float seconds and whole seconds', () => {
    for (const type of ['THROTTLED', 'QUOTA_EXCEEDED']) {
      const { StatusCode, ResponseParameters: headers } = responses().find((r) => r.ResponseType === type)!;
      expect(StatusCode).toBe('429');
      expect(headers['gatewayresponse.header.X-RateLimit-Reset']).toMatch(/^'\d+\.\d{3}'$/);
      expect(headers['gatewayresponse.header.Retry-After']).toMatch(/^'\d+'$/);
    }
  });

  it('quotes every header value as a static literal', () => {
    for (const response of responses()) {
      for (const value of Object.values(response.ResponseParameters)) expect(value).toMatch(/^'[^']*'$/);
    }
  });
});

describe('the stage', () => {
  it('is named after the stage, traced, throttled per method and logs errors without request data', () => {
    const stage = single('AWS::ApiGateway::Stage');
    expect(stage.Properties.StageName).toBe('test');
    expect(stage.Properties.TracingEnabled).toBe(true);
    expect(stage.Properties.MethodSettings).toEqual([expect.objectContaining({
      HttpMethod: '*', ResourcePath: '/*', LoggingLevel: 'ERROR', DataTraceEnabled: false, MetricsEnabled: true,
      ThrottlingRateLimit: 250, ThrottlingBurstLimit: 125,
    })]);
    // API Gateway applies it to each method: all methods at their limit fit in the account's
    // 10,000 req/s (shared by every API and stage of the region) with room for a second stage.
    const methods = Object.keys(resourcesOf(synth.template, 'AWS::ApiGateway::Method')).length;
    expect(methods * 250 * 2).toBeLessThanOrEqual(10_000);
  });

  it('writes JSON access logs with the request facts and never a token', () => {
    const { AccessLogSetting: setting } = single('AWS::ApiGateway::Stage').Properties;
    const format = JSON.parse(setting.Format);
    expect(format).toEqual(ACCESS_LOG_FIELDS);
    expect(format).toMatchObject({
      requestId: '$context.requestId', ip: '$context.identity.sourceIp', method: '$context.httpMethod',
      resourcePath: '$context.resourcePath', status: '$context.status', responseLatency: '$context.responseLatency',
    });
    expect(setting.Format.toLowerCase()).not.toMatch(/authorization|header|requestoverride|body/);
    // The log group's ARN without the `:*` of its Arn attribute: what API Gateway stores, so a
    // drift check finds the stage in sync (feature flag logGroupDestinationArnWithoutWildcard).
    expect(setting.DestinationArn).toEqual({ 'Fn::Join': ['', ['arn:aws:logs:eu-west-1:123456789012:log-group:', { Ref: expect.stringMatching(/AccessLogs/) }]] });
  });

  it('is a regional endpoint', () => {
    expect(single('AWS::ApiGateway::RestApi').Properties.EndpointConfiguration).toEqual({ Types: ['REGIONAL'] });
  });
});

describe('WAF', () => {
  const acl = () => single('AWS::WAFv2::WebACL').Properties;
  const rule = (name: string) => acl().Rules.find((r: any) => r.Name === name);
  const headersOf = (r: any) => Object.fromEntries(r.Action.Block.CustomResponse.ResponseHeaders.map((h: any) => [h.Name, h.Value]));

  it('is a regional web ACL associated with the stage', () => {
    expect(acl().Scope).toBe('REGIONAL');
    expect(acl().DefaultAction).toEqual({ Allow: {} });
    const association = single('AWS::WAFv2::WebACLAssociation');
    const stage = single('AWS::ApiGateway::Stage');
    expect(association.Properties.WebACLArn).toEqual({ 'Fn::GetAtt': [single('AWS::WAFv2::WebACL').logicalId, 'Arn'] });
    expect(JSON.stringify(association.Properties.ResourceArn)).toContain(`{"Ref":"${stage.logicalId}"}`);
    expect(JSON.stringify(association.Properties.ResourceArn)).toContain('/stages/');
  });

  it('limits each token to 30 requests per second, as 1,800 per 60 s keyed on the raw Authorization header', () => {
    const statement = rule('PerTokenRateLimit').Statement.RateBasedStatement;
    expect(statement).toEqual({
      Limit: RATE_LIMIT_PER_SECOND * 60,
      EvaluationWindowSec: 60,
      AggregateKeyType: 'CUSTOM_KEYS',
      CustomKeys: [{ Header: { Name: 'Authorization', TextTransformations: [{ Priority: 0, Type: 'NONE' }] } }],
    });
    expect(statement.Limit).toBe(1800);
  });

  it('answers a rate-limited request 429 with the contract body, retry headers and common headers', () => {
    const r = rule('PerTokenRateLimit');
    const response = r.Action.Block.CustomResponse;
    expect(response.ResponseCode).toBe(429);
    const body = acl().CustomResponseBodies[response.CustomResponseBodyKey];
    expect(body.ContentType).toBe('APPLICATION_JSON');
    expect(JSON.parse(body.Content)).toEqual({ errors: [{ status: '429', title: 'too many requests' }] });
    const headers = headersOf(r);
    expect(headers['X-RateLimit-Reset']).toMatch(/^\d+\.\d{3}$/);
    expect(Number(headers['X-RateLimit-Reset'])).toBe(Number(headers['Retry-After']));
    expect(headers['Retry-After']).toMatch(/^\d+$/);
    expect(headers).toMatchObject(COMMON_HEADERS);
    expect(Object.keys(headers).map((h) => h.toLowerCase())).not.toContain('content-type'); // WAF refuses it
  });

  it('blocks bodies over 64 KiB with a 413 JSON:API error, inspecting the whole 64 KiB', () => {
    const r = rule('BodyOver64KiB');
    expect(r.Statement.SizeConstraintStatement).toEqual({
      FieldToMatch: { Body: { OversizeHandling: 'MATCH' } },
      ComparisonOperator: 'GT',
      Size: MAX_BODY_BYTES,
      TextTransformations: [{ Priority: 0, Type: 'NONE' }],
    });
    expect(acl().AssociationConfig).toEqual({ RequestBody: { API_GATEWAY: { DefaultSizeInspectionLimit: 'KB_64' } } });
    const response = r.Action.Block.CustomResponse;
    expect(response.ResponseCode).toBe(413);
    const body = JSON.parse(acl().CustomResponseBodies[response.CustomResponseBodyKey].Content);
    expect(body).toEqual(JSON.parse(gatewayErrorResponse('REQUEST_TOO_LARGE').body));
    expect(headersOf(r)).toMatchObject(COMMON_HEADERS);
  });

  it('keeps no sampled requests (they would hold Authorization headers)', () => {
    expect(acl().VisibilityConfig.SampledRequestsEnabled).toBe(false);
    for (const r of acl().Rules) expect(r.VisibilityConfig.SampledRequestsEnabled).toBe(false);
  });
});

describe('the table', () => {
  it('uses the local store’s keys, on demand, with recovery, deletion protection and encryption, retained', () => {
    const table = single('AWS::DynamoDB::GlobalTable');
    expect(table.Properties.KeySchema).toEqual([
      { AttributeName: TABLE_KEYS.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE_KEYS.sortKey, KeyType: 'RANGE' },
    ]);
    expect(table.Properties.AttributeDefinitions).toEqual([
      { AttributeName: TABLE_KEYS.partitionKey, AttributeType: 'S' },
      { AttributeName: TABLE_KEYS.sortKey, AttributeType: 'S' },
    ]);
    expect(table.Properties.BillingMode).toBe('PAY_PER_REQUEST');
    expect(table.Properties.SSESpecification).toEqual({ SSEEnabled: true, SSEType: 'KMS' });
    expect(table.Properties.Replicas).toEqual([expect.objectContaining({
      Region: 'eu-west-1',
      DeletionProtectionEnabled: true,
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    })]);
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
    expect(table.Properties.TableName).toBeUndefined(); // CloudFormation names it: two stages per account
  });
});
