import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomAlphanumeric } from '#shared/ids';
import { PROJECT_ROOT } from '#infra/local/assembly';
import type { Assembly } from '#infra/local/assembly';

/**
 * A hand-written cloud assembly for the emulator's own tests: a template in CloudFormation's terms
 * and functions as plain ESM files, so each test states exactly the AWS configuration whose
 * documented behaviour it checks. It lives under cdk.out/ inside the project, so the functions
 * resolve the project's packages (the AWS SDK) as a bundle's dependencies would be bundled.
 */
export interface FixtureFunction {
  /** The module's source: it exports `handler`. */
  code: string;
  timeout?: number;
  environment?: Record<string, unknown>;
  /** IAM statements of the function's role. */
  statements?: unknown[];
  /** More AWS::Lambda::Function properties (or overrides), as the template states them. */
  properties?: Record<string, unknown>;
  /** Publishes a version of the function (`<Name>Version`) behind an alias of this name (`<Name>Alias`). */
  alias?: string;
}

export interface FixtureApi {
  functions: Record<string, FixtureFunction>;
  /** `GET /things/{id}` → function name, or `{ mock: … }` for a MOCK integration. */
  methods: Array<{
    method: string;
    path: string;
    function?: string;
    authorizer?: boolean;
    mock?: Record<string, unknown>;
    timeoutMs?: number;
    /** Invoke the function's alias (its `alias`) rather than the unqualified function ($LATEST). */
    throughAlias?: boolean;
  }>;
  authorizer?: { function: string; ttlSeconds: number; identitySource?: string };
  gatewayResponses?: Array<{
    type: string;
    statusCode?: string;
    parameters?: Record<string, string>;
    templates?: Record<string, string>;
  }>;
  webAcl?: Record<string, unknown>;
  stageVariables?: Record<string, string>;
  /** More AWS::ApiGateway::Stage properties (MethodSettings, …). */
  stage?: Record<string, unknown>;
  /** More resources, as the template states them (a CloudFront distribution, …). */
  resources?: Record<string, unknown>;
}

const STACK = 'fixture';

export function fixtureAssembly(api: FixtureApi): Assembly & { remove(): void } {
  const directory = join(PROJECT_ROOT, 'cdk.out', 'fixtures', randomAlphanumeric(10));
  mkdirSync(directory, { recursive: true });
  const resources: Record<string, any> = {
    Api: { Type: 'AWS::ApiGateway::RestApi', Properties: { Name: 'fixture' } },
    Stage: {
      Type: 'AWS::ApiGateway::Stage',
      Properties: {
        RestApiId: { Ref: 'Api' },
        StageName: 'test',
        ...(api.stageVariables ? { Variables: api.stageVariables } : {}),
        ...api.stage,
      },
    },
    Table: {
      Type: 'AWS::DynamoDB::GlobalTable',
      Properties: {
        KeySchema: [
          { AttributeName: 'PK', KeyType: 'HASH' },
          { AttributeName: 'SK', KeyType: 'RANGE' },
        ],
      },
    },
  };
  const files: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(api.functions)) {
    const hash = `${name.toLowerCase()}${randomAlphanumeric(8).toLowerCase()}`;
    mkdirSync(join(directory, `asset.${hash}`));
    writeFileSync(join(directory, `asset.${hash}`, 'index.mjs'), fn.code);
    files[hash] = { source: { path: `asset.${hash}`, packaging: 'zip' } };
    resources[`${name}Role`] = { Type: 'AWS::IAM::Role', Properties: {} };
    resources[`${name}Policy`] = {
      Type: 'AWS::IAM::Policy',
      Properties: {
        PolicyDocument: { Statement: fn.statements ?? [], Version: '2012-10-17' },
        Roles: [{ Ref: `${name}Role` }],
      },
    };
    resources[name] = {
      Type: 'AWS::Lambda::Function',
      Properties: {
        Code: { S3Bucket: 'assets', S3Key: `${hash}.zip` },
        Handler: 'index.handler',
        Runtime: 'nodejs24.x',
        Timeout: fn.timeout ?? 10,
        MemorySize: 128,
        Role: { 'Fn::GetAtt': [`${name}Role`, 'Arn'] },
        Environment: { Variables: { TABLE_NAME: { Ref: 'Table' }, ...fn.environment } },
        ...fn.properties,
      },
    };
    if (fn.alias) {
      resources[`${name}Version`] = { Type: 'AWS::Lambda::Version', Properties: { FunctionName: { Ref: name } } };
      resources[`${name}Alias`] = {
        Type: 'AWS::Lambda::Alias',
        Properties: {
          FunctionName: { Ref: name },
          FunctionVersion: { 'Fn::GetAtt': [`${name}Version`, 'Version'] },
          Name: fn.alias,
        },
      };
    }
  }
  const uri = (fn: string, throughAlias = false) => ({
    'Fn::Join': [
      '',
      [
        'arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/',
        throughAlias ? { Ref: `${fn}Alias` } : { 'Fn::GetAtt': [fn, 'Arn'] },
        '/invocations',
      ],
    ],
  });
  if (api.authorizer) {
    resources.Authorizer = {
      Type: 'AWS::ApiGateway::Authorizer',
      Properties: {
        Type: 'REQUEST',
        RestApiId: { Ref: 'Api' },
        AuthorizerUri: uri(api.authorizer.function),
        AuthorizerResultTtlInSeconds: api.authorizer.ttlSeconds,
        IdentitySource: api.authorizer.identitySource ?? 'method.request.header.Authorization',
      },
    };
  }
  const resourceIds = new Map<string, string>();
  const resourceFor = (path: string): unknown => {
    if (path === '') return { 'Fn::GetAtt': ['Api', 'RootResourceId'] };
    let id = resourceIds.get(path);
    if (!id) {
      id = `Resource${resourceIds.size}`;
      resourceIds.set(path, id);
      const parent = path.slice(0, path.lastIndexOf('/'));
      resources[id] = {
        Type: 'AWS::ApiGateway::Resource',
        Properties: {
          RestApiId: { Ref: 'Api' },
          ParentId: resourceFor(parent),
          PathPart: path.slice(path.lastIndexOf('/') + 1),
        },
      };
    }
    return { Ref: id };
  };
  api.methods.forEach((m, i) => {
    resources[`Method${i}`] = {
      Type: 'AWS::ApiGateway::Method',
      Properties: {
        RestApiId: { Ref: 'Api' },
        ResourceId: resourceFor(m.path),
        HttpMethod: m.method,
        AuthorizationType: m.authorizer ? 'CUSTOM' : 'NONE',
        ...(m.authorizer ? { AuthorizerId: { Ref: 'Authorizer' } } : {}),
        Integration: m.mock
          ? { Type: 'MOCK', ...m.mock }
          : {
              Type: 'AWS_PROXY',
              IntegrationHttpMethod: 'POST',
              Uri: uri(m.function!, m.throughAlias),
              ...(m.timeoutMs ? { TimeoutInMillis: m.timeoutMs } : {}),
            },
      },
    };
  });
  (api.gatewayResponses ?? []).forEach((r, i) => {
    resources[`GatewayResponse${i}`] = {
      Type: 'AWS::ApiGateway::GatewayResponse',
      Properties: {
        RestApiId: { Ref: 'Api' },
        ResponseType: r.type,
        ...(r.statusCode ? { StatusCode: r.statusCode } : {}),
        ResponseParameters: r.parameters,
        ResponseTemplates: r.templates,
      },
    };
  });
  if (api.webAcl) {
    resources.WebAcl = { Type: 'AWS::WAFv2::WebACL', Properties: api.webAcl };
    resources.WebAclAssociation = {
      Type: 'AWS::WAFv2::WebACLAssociation',
      Properties: { ResourceArn: 'stage', WebACLArn: { 'Fn::GetAtt': ['WebAcl', 'Arn'] } },
    };
  }
  Object.assign(resources, api.resources);
  writeFileSync(join(directory, `${STACK}.template.json`), JSON.stringify({ Resources: resources }));
  writeFileSync(join(directory, `${STACK}.assets.json`), JSON.stringify({ files }));
  return {
    directory,
    stackName: STACK,
    synthesized: false,
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}
