import { runInNewContext } from 'node:vm';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { CUSTOM_DOMAIN, HOSTED_ZONE, templateOf } from './templates';

/**
 * The deployed edge, read from the template against literal values from AWS's documentation and
 * the API contract: gateway response statuses, the 405 and discovery mocks, the host root (custom
 * domain or CloudFront front), the public address links are built from, and the web ACL.
 */
type Resources = Record<string, { Type: string; Properties: any; DependsOn?: string[] }>;
interface Synth {
  resources: Resources;
  outputs: Record<string, { Value: unknown; Description?: string }>;
}

/** The stack's template with these settings (test/infra/templates.ts: synthesized once per run). */
async function synth(context: Record<string, unknown> = {}): Promise<Synth> {
  const json = (await templateOf({ context })).toJSON() as { Resources: Resources; Outputs: Synth['outputs'] };
  return { resources: json.Resources, outputs: json.Outputs };
}
const ofType = (s: Synth, type: string) => Object.entries(s.resources).filter(([, r]) => r.Type === type);
const only = (s: Synth, type: string) => {
  const found = ofType(s, type);
  expect(found.map(([id]) => id)).toHaveLength(1);
  return { logicalId: found[0]![0], ...found[0]![1] };
};
/** `/api/v2/runs/{run_id}/comments` of a method, from its resource chain. */
function pathOf(s: Synth, resourceId: any): string {
  if (resourceId['Fn::GetAtt']) return '';
  const resource = s.resources[resourceId.Ref]!.Properties;
  return `${pathOf(s, resource.ParentId)}/${resource.PathPart}`;
}
const methods = (s: Synth) =>
  ofType(s, 'AWS::ApiGateway::Method').map(([, m]) => ({
    method: m.Properties.HttpMethod,
    path: pathOf(s, m.Properties.ResourceId),
    p: m.Properties,
  }));
const webAcl = (s: Synth) => only(s, 'AWS::WAFv2::WebACL').Properties;
const rule = (s: Synth, name: string) => webAcl(s).Rules.find((r: any) => r.Name === name);

const COMMON = {
  'TFP-API-Version': "'2.6'",
  'TFP-AppName': "'tfc-tags-comments'",
  'X-RateLimit-Limit': "'30'",
  'Cache-Control': "'no-store'",
};

let front: Synth;
let domain: Synth;
let zone: Synth;
beforeAll(async () => {
  front = await synth();
  domain = await synth({ ...CUSTOM_DOMAIN, disableExecuteApiEndpoint: 'true' });
  zone = await synth(HOSTED_ZONE);
}, 120_000);

describe('gateway responses', () => {
  /** Every type of AWS's "Gateway response types for API Gateway", with the status the contract gives it. */
  const expected: Record<string, [status: string | undefined, title: string]> = {
    UNAUTHORIZED: ['401', 'unauthorized'],
    ACCESS_DENIED: ['401', 'unauthorized'], // the authorizer rejects a token with a Deny
    INVALID_SIGNATURE: ['401', 'unauthorized'],
    EXPIRED_TOKEN: ['401', 'unauthorized'],
    INVALID_API_KEY: ['401', 'unauthorized'],
    MISSING_AUTHENTICATION_TOKEN: ['404', 'not found'], // unknown route: AWS's 403 would be wrong
    RESOURCE_NOT_FOUND: ['404', 'not found'],
    WAF_FILTERED: ['403', 'forbidden'],
    REQUEST_TOO_LARGE: ['413', 'payload too large'],
    UNSUPPORTED_MEDIA_TYPE: ['415', 'unsupported media type'],
    BAD_REQUEST_BODY: ['400', 'bad request'],
    BAD_REQUEST_PARAMETERS: ['400', 'bad request'],
    THROTTLED: ['429', 'too many requests'],
    QUOTA_EXCEEDED: ['429', 'too many requests'],
    AUTHORIZER_FAILURE: ['503', 'service unavailable'],
    AUTHORIZER_CONFIGURATION_ERROR: ['503', 'service unavailable'],
    INTEGRATION_TIMEOUT: ['504', 'gateway timeout'],
    INTEGRATION_FAILURE: ['504', 'gateway timeout'],
    API_CONFIGURATION_ERROR: ['500', 'internal server error'],
    DEFAULT_4XX: [undefined, 'bad request'],
    DEFAULT_5XX: [undefined, 'internal server error'],
  };
  const responses = () =>
    Object.fromEntries(
      ofType(front, 'AWS::ApiGateway::GatewayResponse').map(([, r]) => [r.Properties.ResponseType, r.Properties]),
    );

  it('customizes every response type, and only those', () => {
    expect(Object.keys(responses()).sort()).toEqual(Object.keys(expected).sort());
  });

  it.each(Object.entries(expected))(
    '%s: %s with a JSON:API body, the contract headers and X-Request-Id',
    (type: string, [status, title]: [string | undefined, string]) => {
      const response = responses()[type];
      // A status on DEFAULT_4XX/5XX would become the status of every type not customized itself.
      expect(response.StatusCode).toBe(status);
      for (const media of ['application/json', 'application/vnd.api+json']) {
        const body = JSON.parse(response.ResponseTemplates[media]);
        expect(body.errors).toHaveLength(1);
        expect(body.errors[0]).toMatchObject({ status: status ?? expect.stringMatching(/^[45]\d\d$/), title });
      }
      expect(response.ResponseParameters).toMatchObject({
        'gatewayresponse.header.Content-Type': "'application/vnd.api+json'",
        'gatewayresponse.header.X-Request-Id': 'context.requestId',
        ...Object.fromEntries(Object.entries(COMMON).map(([name, value]) => [`gatewayresponse.header.${name}`, value])),
      });
    },
  );

  it('tells a throttled client when to retry in whole and float seconds, and an unavailable one in whole seconds', () => {
    for (const type of ['THROTTLED', 'QUOTA_EXCEEDED']) {
      expect(responses()[type].ResponseParameters).toMatchObject({
        'gatewayresponse.header.Retry-After': "'1'",
        'gatewayresponse.header.X-RateLimit-Reset': "'1.000'",
      });
    }
    for (const type of ['AUTHORIZER_FAILURE', 'AUTHORIZER_CONFIGURATION_ERROR']) {
      expect(responses()[type].ResponseParameters['gatewayresponse.header.Retry-After']).toBe("'1'");
    }
  });
});

describe('the 405 and discovery mocks', () => {
  it('answers 405 with Allow listing the methods of each path, and X-Request-Id', () => {
    const allow = Object.fromEntries(
      methods(front)
        .filter((m) => m.method === 'ANY')
        .map((m) => {
          const [response] = m.p.Integration.IntegrationResponses;
          expect(m.p.Integration.Type).toBe('MOCK');
          expect(response.StatusCode).toBe('405');
          expect(JSON.parse(response.ResponseTemplates['application/json'])).toEqual({
            errors: [{ status: '405', title: 'method not allowed' }],
          });
          expect(response.ResponseParameters['method.response.header.X-Request-Id']).toBe('context.requestId');
          expect(m.p.MethodResponses[0].ResponseParameters['method.response.header.Allow']).toBe(true);
          return [m.path, response.ResponseParameters['method.response.header.Allow']];
        }),
    );
    expect(allow).toEqual({
      '/api/v2/ping': "'GET'",
      '/api/v2/organizations/{organization_name}/reserved-tag-keys': "'GET, POST'",
      '/api/v2/reserved-tags/{reserved_tag_key_id}': "'DELETE, PATCH'",
      '/api/v2/reserved-tag-keys/{reserved_tag_key_id}': "'DELETE, PATCH'",
      '/api/v2/runs/{run_id}/comments': "'GET, POST'",
      '/api/v2/comments/{comment_id}': "'GET'",
      '/api/v2/run-notifications/{organization_name}': "'POST'",
      '/.well-known/terraform.json': "'GET'",
    });
  });

  it('answers Terraform service discovery at the host root without a token, as HCP Terraform does for tfe', () => {
    const [discovery] = methods(front).filter((m) => m.method === 'GET' && m.path === '/.well-known/terraform.json');
    expect(discovery!.p.AuthorizationType).toBe('NONE');
    expect(discovery!.p.Integration.Type).toBe('MOCK');
    const [response] = discovery!.p.Integration.IntegrationResponses;
    expect(response.StatusCode).toBe('200');
    expect(JSON.parse(response.ResponseTemplates['application/json'])).toEqual({
      'tfe.v2': '/api/v2/',
      'tfe.v2.1': '/api/v2/',
      'tfe.v2.2': '/api/v2/',
    });
    // Terraform's discovery client refuses any other media type.
    expect(response.ResponseParameters['method.response.header.Content-Type']).toBe("'application/json'");
    expect(response.ResponseParameters['method.response.header.X-Request-Id']).toBe('context.requestId');
  });
});

describe('without a domain: a CloudFront front at the root of its own host', () => {
  const distribution = () => only(front, 'AWS::CloudFront::Distribution');

  it('forwards every request to the stage, uncached, with every viewer header but Host, over HTTPS only', () => {
    const config = distribution().Properties.DistributionConfig;
    const behavior = config.DefaultCacheBehavior;
    expect(behavior.AllowedMethods.sort()).toEqual(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT']);
    expect(behavior.CachePolicyId).toBe('4135ea2d-6df8-44a3-9df3-4b5a84be39ad'); // managed CachingDisabled
    expect(behavior.OriginRequestPolicyId).toBe('b689b0a8-53d0-40ab-baf2-68738e2966ac'); // managed AllViewerExceptHostHeader
    expect(behavior.ViewerProtocolPolicy).toBe('https-only');
    const [origin] = config.Origins;
    expect(origin.OriginPath).toBe('/test');
    expect(origin.CustomOriginConfig).toEqual({ OriginProtocolPolicy: 'https-only', OriginSSLProtocols: ['TLSv1.2'] });
    const restApi = only(front, 'AWS::ApiGateway::RestApi').logicalId;
    expect(origin.DomainName).toEqual({
      'Fn::Join': ['', [{ Ref: restApi }, '.execute-api.eu-west-1.', { Ref: 'AWS::URLSuffix' }]],
    });
  });

  it('puts the viewer address in X-Tfe-Client-Ip, overwriting what the client sent, before the request leaves the edge', () => {
    const [association] = distribution().Properties.DistributionConfig.DefaultCacheBehavior.FunctionAssociations;
    expect(association.EventType).toBe('viewer-request');
    const fn = front.resources[association.FunctionARN['Fn::GetAtt'][0]]!.Properties;
    expect(fn.FunctionConfig.Runtime).toBe('cloudfront-js-2.0');
    const event = {
      viewer: { ip: '203.0.113.7' },
      request: {
        method: 'GET',
        uri: '/api/v2/ping',
        headers: { 'x-tfe-client-ip': { value: '10.0.0.1' }, authorization: { value: 'Bearer t' } },
      },
    };
    const request = runInNewContext(`${fn.FunctionCode}\nhandler(event);`, { event }) as any;
    expect(request.headers).toEqual({
      'x-tfe-client-ip': { value: '203.0.113.7' },
      authorization: { value: 'Bearer t' },
    });
  });

  it('proves itself to WAF with a generated secret that only CloudFormation resolves', () => {
    const [origin] = distribution().Properties.DistributionConfig.Origins;
    const secret = only(front, 'AWS::SecretsManager::Secret');
    const reference = {
      'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: secret.logicalId }, ':SecretString:::}}']],
    };
    expect(origin.OriginCustomHeaders).toEqual([{ HeaderName: 'X-Tfe-Origin-Verify', HeaderValue: reference }]);
    expect(secret.Properties.GenerateSecretString).toMatchObject({ ExcludePunctuation: true, PasswordLength: 48 });
    expect(rule(front, 'OnlyThroughFront')).toMatchObject({
      Priority: 0,
      Action: { Block: {} }, // no custom response: API Gateway's WAF_FILTERED, a JSON:API 403 with X-Request-Id
      Statement: {
        NotStatement: {
          Statement: {
            ByteMatchStatement: {
              FieldToMatch: { SingleHeader: { Name: 'x-tfe-origin-verify' } },
              PositionalConstraint: 'EXACTLY',
              SearchString: reference,
              TextTransformations: [{ Priority: 0, Type: 'NONE' }],
            },
          },
        },
      },
    });
  });

  it('builds links from https:// and the distribution domain, and prints that address', () => {
    const address = { 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distribution().logicalId, 'DomainName'] }]] };
    expect(only(front, 'AWS::ApiGateway::Stage').Properties.Variables).toEqual({ publicAddress: address });
    expect(front.outputs.TfeAddress!.Value).toEqual(address);
    expect(front.outputs.ApiUrl).toBeUndefined();
    expect(ofType(front, 'AWS::ApiGateway::DomainName')).toEqual([]);
  });

  it('limits each client address by the header the front sets', () => {
    expect(rule(front, 'PerClientIpRateLimit').Statement.RateBasedStatement).toEqual({
      Limit: 6000,
      EvaluationWindowSec: 60,
      AggregateKeyType: 'FORWARDED_IP',
      ForwardedIPConfig: { HeaderName: 'X-Tfe-Client-Ip', FallbackBehavior: 'MATCH' },
    });
  });
});

describe('with a domain: an API Gateway custom domain mapped at its root', () => {
  it('serves the stage at the root of the domain, regional, TLS 1.2, with the execute-api endpoint off when asked', () => {
    const custom = only(domain, 'AWS::ApiGateway::DomainName').Properties;
    expect(custom).toMatchObject({
      DomainName: 'tfe.example.com',
      RegionalCertificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc-123',
      EndpointConfiguration: { Types: ['REGIONAL'] },
      SecurityPolicy: 'TLS_1_2',
    });
    const mapping = only(domain, 'AWS::ApiGateway::BasePathMapping').Properties;
    expect(mapping.BasePath ?? '').toBe('');
    expect(mapping.Stage).toEqual({ Ref: only(domain, 'AWS::ApiGateway::Stage').logicalId });
    expect(only(domain, 'AWS::ApiGateway::RestApi').Properties.DisableExecuteApiEndpoint).toBe(true);
    expect(ofType(domain, 'AWS::CloudFront::Distribution')).toEqual([]);
  });

  it('builds links from and prints https://DOMAIN, and where to point its DNS', () => {
    expect(only(domain, 'AWS::ApiGateway::Stage').Properties.Variables).toEqual({
      publicAddress: 'https://tfe.example.com',
    });
    expect(domain.outputs.TfeAddress!.Value).toBe('https://tfe.example.com');
    expect(domain.outputs.DomainDnsTarget!.Value).toEqual({
      'Fn::GetAtt': [only(domain, 'AWS::ApiGateway::DomainName').logicalId, 'RegionalDomainName'],
    });
  });

  it('limits each client address by its source address, and needs no front secret', () => {
    expect(rule(domain, 'PerClientIpRateLimit').Statement.RateBasedStatement).toEqual({
      Limit: 6000,
      EvaluationWindowSec: 60,
      AggregateKeyType: 'IP',
    });
    expect(rule(domain, 'OnlyThroughFront')).toBeUndefined();
    expect(ofType(domain, 'AWS::SecretsManager::Secret')).toEqual([]);
  });

  it('creates the certificate (DNS-validated) and an alias record when given the hosted zone', () => {
    const certificate = only(zone, 'AWS::CertificateManager::Certificate').Properties;
    expect(certificate).toMatchObject({
      DomainName: 'tfe.example.com',
      ValidationMethod: 'DNS',
      DomainValidationOptions: [{ DomainName: 'tfe.example.com', HostedZoneId: 'Z0123456789ABCDEFGHIJ' }],
    });
    const record = only(zone, 'AWS::Route53::RecordSet').Properties;
    expect(record).toMatchObject({ Name: 'tfe.example.com.', Type: 'A', HostedZoneId: 'Z0123456789ABCDEFGHIJ' });
    expect(zone.outputs.DomainDnsTarget).toBeUndefined();
  });
});

describe('the web ACL', () => {
  const tooMany = (bodyKey: string) => ({
    ResponseCode: 429,
    CustomResponseBodyKey: bodyKey,
    ResponseHeaders: [
      { Name: 'TFP-API-Version', Value: '2.6' },
      { Name: 'TFP-AppName', Value: 'tfc-tags-comments' },
      { Name: 'X-RateLimit-Limit', Value: '30' },
      { Name: 'Cache-Control', Value: 'no-store' },
      { Name: 'Retry-After', Value: '60' },
      { Name: 'X-RateLimit-Reset', Value: '60.000' },
    ],
  });
  const RATE_RULES = {
    PerClientIpRateLimit: 'TooManyRequestsPerAddress',
    PerTokenRateLimit: 'TooManyRequestsPerToken',
    RunNotificationsPerOrganization: 'TooManyRunNotifications',
  };

  it('evaluates the front check, body size, per address, per token, then AWS’s managed groups', () => {
    expect(webAcl(front).Rules.map((r: any) => [r.Priority, r.Name])).toEqual([
      [0, 'OnlyThroughFront'],
      [1, 'BodyOver64KiB'],
      [2, 'PerClientIpRateLimit'],
      [3, 'PerTokenRateLimit'],
      [4, 'RunNotificationsPerOrganization'],
      [5, 'AWSManagedRulesCommonRuleSet'],
      [6, 'AWSManagedRulesKnownBadInputsRuleSet'],
    ]);
  });

  it('says in each rate rule’s 429 which limit was passed, as the rule counts it, and to wait Retry-After', () => {
    const whose = {
      PerClientIpRateLimit: 'this client address',
      PerTokenRateLimit: 'this token',
      RunNotificationsPerOrganization: 'this organization',
    };
    for (const [name, bodyKey] of Object.entries(RATE_RULES)) {
      const r = rule(front, name);
      const { Limit, EvaluationWindowSec } = r.Statement.RateBasedStatement;
      const retryAfter = r.Action.Block.CustomResponse.ResponseHeaders.find(
        (h: { Name: string }) => h.Name === 'Retry-After',
      ).Value;
      const body = webAcl(front).CustomResponseBodies[bodyKey];
      expect(body.ContentType).toBe('APPLICATION_JSON');
      const [error] = JSON.parse(body.Content).errors;
      expect(error).toMatchObject({ status: '429', title: 'too many requests' });
      expect(error.detail).toContain(`over ${whose[name as keyof typeof whose]}`);
      expect(error.detail).toContain(
        `limit of ${Limit.toLocaleString('en')} requests per ${EvaluationWindowSec} s (${Limit / EvaluationWindowSec} req/s`,
      );
      expect(error.detail).toContain(`wait Retry-After (${retryAfter} s)`);
    }
  });

  it('counts one bucket per token: Authorization lower-cased, then every run of white space made one space', () => {
    const r = rule(front, 'PerTokenRateLimit');
    expect(r.Statement.RateBasedStatement).toEqual({
      Limit: 1800,
      EvaluationWindowSec: 60,
      AggregateKeyType: 'CUSTOM_KEYS',
      CustomKeys: [
        {
          Header: {
            Name: 'Authorization',
            TextTransformations: [
              { Priority: 0, Type: 'LOWERCASE' },
              { Priority: 1, Type: 'COMPRESS_WHITE_SPACE' },
            ],
          },
        },
      ],
    });
  });

  it('counts run notifications (no token) in one bucket per URL as routed, i.e. per organization: 600 a minute', () => {
    // Percent-decoded, dot segments and repeated slashes resolved, lower-cased: another spelling of
    // an organization's URL is neither a bucket of its own nor outside the scope-down.
    const asRouted = [
      { Priority: 0, Type: 'URL_DECODE' },
      { Priority: 1, Type: 'NORMALIZE_PATH' },
      { Priority: 2, Type: 'LOWERCASE' },
    ];
    expect(rule(front, 'RunNotificationsPerOrganization').Statement.RateBasedStatement).toEqual({
      Limit: 600,
      EvaluationWindowSec: 60,
      AggregateKeyType: 'CUSTOM_KEYS',
      CustomKeys: [{ UriPath: { TextTransformations: asRouted } }],
      // CONTAINS: on the execute-api endpoint the stage name comes first in the path.
      ScopeDownStatement: {
        ByteMatchStatement: {
          FieldToMatch: { UriPath: {} },
          PositionalConstraint: 'CONTAINS',
          SearchString: '/api/v2/run-notifications/',
          TextTransformations: asRouted,
        },
      },
    });
  });

  it('answers every rate limit 429 with numeric X-RateLimit-Reset and Retry-After', () => {
    for (const [name, bodyKey] of Object.entries(RATE_RULES))
      expect(rule(front, name).Action).toEqual({ Block: { CustomResponse: tooMany(bodyKey) } });
  });

  it('blocks bodies over 64 KiB with a 413, inspecting 64 KiB', () => {
    expect(rule(front, 'BodyOver64KiB').Statement.SizeConstraintStatement).toEqual({
      FieldToMatch: { Body: { OversizeHandling: 'MATCH' } },
      ComparisonOperator: 'GT',
      Size: 65536,
      TextTransformations: [{ Priority: 0, Type: 'NONE' }],
    });
    expect(rule(front, 'BodyOver64KiB').Action.Block.CustomResponse.ResponseCode).toBe(413);
    expect(webAcl(front).AssociationConfig).toEqual({
      RequestBody: { API_GATEWAY: { DefaultSizeInspectionLimit: 'KB_64' } },
    });
  });

  it('runs AWS’s common and known-bad-inputs rules, counting only those that would block a valid comment body', () => {
    const managed = (name: string) => rule(front, name);
    const counted = (name: string) =>
      managed(name)
        .Statement.ManagedRuleGroupStatement.RuleActionOverrides.map((o: any) => {
          expect(o.ActionToUse).toEqual({ Count: {} });
          return o.Name;
        })
        .sort();
    for (const name of ['AWSManagedRulesCommonRuleSet', 'AWSManagedRulesKnownBadInputsRuleSet']) {
      expect(managed(name).OverrideAction).toEqual({ None: {} });
      expect(managed(name).Statement.ManagedRuleGroupStatement).toMatchObject({ VendorName: 'AWS', Name: name });
    }
    expect(counted('AWSManagedRulesCommonRuleSet')).toEqual([
      'CrossSiteScripting_BODY',
      'EC2MetaDataSSRF_BODY',
      'GenericLFI_BODY',
      'GenericRFI_BODY',
      'SizeRestrictions_BODY',
    ]);
    expect(counted('AWSManagedRulesKnownBadInputsRuleSet')).toEqual(['JavaDeserializationRCE_BODY', 'Log4JRCE_BODY']);
  });

  it('keeps no sampled requests (they would hold Authorization headers)', () => {
    expect(webAcl(front).VisibilityConfig.SampledRequestsEnabled).toBe(false);
    for (const r of webAcl(front).Rules) expect(r.VisibilityConfig.SampledRequestsEnabled).toBe(false);
  });
});
