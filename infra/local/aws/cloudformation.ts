import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The local stand-in for CloudFormation: it reads a synthesized stack (template and asset
 * manifest) and resolves the intrinsic functions the emulated services need, with the values
 * this machine gives the resources (the local table's name, local ARNs, the local address).
 */
export interface TemplateResource {
  Type: string;
  Properties?: any;
  DependsOn?: string | string[];
}

export interface Template {
  Resources: Record<string, TemplateResource>;
  Outputs?: Record<string, { Value: unknown }>;
}

export const LOCAL_ACCOUNT = '000000000000';
export const LOCAL_REGION = 'us-east-1';

/** A DynamoDB table's ARN on this machine (what `Fn::GetAtt [Table, Arn]` resolves to). */
export const localTableArn = (tableName: string) =>
  `arn:aws:dynamodb:${LOCAL_REGION}:${LOCAL_ACCOUNT}:table/${tableName}`;

/** What the local machine gives a resource in place of what CloudFormation would create. */
export interface PhysicalValues {
  /** Ref of a logical id (a table's name, a function's name). */
  ref?: Record<string, string>;
  /** Fn::GetAtt, as `LogicalId.Attribute`. */
  attributes?: Record<string, string>;
}

export class Stack {
  readonly template: Template;
  readonly directory: string;
  readonly stackName: string;
  private readonly physical: PhysicalValues;
  private assetManifest?: { files: Record<string, { source: { path: string } }> };

  constructor(directory: string, stackName: string, physical: PhysicalValues = {}) {
    this.directory = directory;
    this.stackName = stackName;
    this.physical = physical;
    this.template = JSON.parse(readFileSync(join(directory, `${stackName}.template.json`), 'utf8')) as Template;
  }

  /** Every resource of one type, by logical id. */
  resourcesOf(type: string): Array<[string, TemplateResource]> {
    return Object.entries(this.template.Resources).filter(([, resource]) => resource.Type === type);
  }

  resource(logicalId: string): TemplateResource {
    const resource = this.template.Resources[logicalId];
    if (!resource) throw new Error(`The template has no resource ${logicalId}`);
    return resource;
  }

  /** The asset folder of a Lambda function's code (`S3Key: <hash>.zip` → `asset.<hash>`). */
  assetDirectory(code: { S3Key?: unknown }): string {
    const manifest = (this.assetManifest ??= JSON.parse(
      readFileSync(join(this.directory, `${this.stackName}.assets.json`), 'utf8'),
    ) as {
      files: Record<string, { source: { path: string } }>;
    });
    const key = String(this.resolve(code.S3Key));
    const hash = key.replace(/\.zip$/, '');
    const file = manifest.files[hash];
    if (!file) throw new Error(`No asset ${key} in the assembly's manifest`);
    return join(this.directory, file.source.path);
  }

  /** `Ref` and `Fn::GetAtt` of a logical id, as strings (physical names and ARNs). `physical` may be filled after construction. */
  ref(logicalId: string): string {
    const given = this.physical.ref?.[logicalId];
    if (given !== undefined) return given;
    // AWS::Lambda::Version and AWS::Lambda::Alias: Ref is the qualified ARN (`…:function:NAME:1`, `…:function:NAME:live`).
    const { Type, Properties } = this.resource(logicalId);
    if (Type === 'AWS::Lambda::Version')
      return `${this.functionArnOf(Properties?.FunctionName)}:${this.versionNumber(logicalId)}`;
    if (Type === 'AWS::Lambda::Alias')
      return `${this.functionArnOf(Properties?.FunctionName)}:${this.string(Properties?.Name)}`;
    return logicalId; // CloudFormation's physical id; locally the logical id names it
  }

  /**
   * A version's number, as Lambda gives it: 1, 2, … in the order the function's versions are
   * published (here, their order in the template).
   */
  versionNumber(logicalId: string): string {
    const functionOf = (id: string) => JSON.stringify(this.resource(id).Properties?.FunctionName);
    const siblings = this.resourcesOf('AWS::Lambda::Version')
      .filter(([id]) => functionOf(id) === functionOf(logicalId))
      .map(([id]) => id);
    return String(siblings.indexOf(logicalId) + 1);
  }

  /** The unqualified ARN of the function a version or alias names (by Ref, name or ARN). */
  private functionArnOf(functionName: unknown): string {
    const name = this.string(functionName);
    return name.startsWith('arn:')
      ? name.split(':').slice(0, 7).join(':')
      : `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${name}`;
  }

  getAtt(logicalId: string, attribute: string): string {
    const given = this.physical.attributes?.[`${logicalId}.${attribute}`];
    if (given !== undefined) return given;
    const { Type } = this.resource(logicalId);
    if (Type === 'AWS::Lambda::Version' && attribute === 'Version') return this.versionNumber(logicalId);
    if (Type === 'AWS::Lambda::Version' && attribute === 'FunctionArn') return this.ref(logicalId);
    if (Type === 'AWS::Lambda::Alias' && attribute === 'AliasArn') return this.ref(logicalId);
    if (attribute !== 'Arn') return `${logicalId}.${attribute}`;
    const name = this.ref(logicalId);
    switch (Type) {
      case 'AWS::DynamoDB::GlobalTable':
      case 'AWS::DynamoDB::Table':
        return localTableArn(name);
      case 'AWS::Lambda::Function':
        return `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${name}`;
      case 'AWS::Events::Rule':
        return `arn:aws:events:${LOCAL_REGION}:${LOCAL_ACCOUNT}:rule/${name}`;
      case 'AWS::IAM::Role':
        return `arn:aws:iam::${LOCAL_ACCOUNT}:role/${name}`;
      case 'AWS::Logs::LogGroup':
        return `arn:aws:logs:${LOCAL_REGION}:${LOCAL_ACCOUNT}:log-group:${name}:*`;
      default:
        return `arn:aws:local:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${logicalId}`;
    }
  }

  /**
   * Evaluates the intrinsic functions CDK emits (Ref, Fn::GetAtt, Fn::Join, Fn::Select,
   * Fn::Split, Fn::Sub) and the pseudo parameters. An unknown function fails loudly: a value
   * silently left unresolved would make an emulated check pass that AWS would not.
   */
  resolve(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((item) => this.resolve(item));
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value);
    if (entries.length === 1) {
      const [name, argument] = entries[0]! as [string, any];
      switch (name) {
        case 'Ref':
          return PSEUDO_PARAMETERS[argument as string] ?? this.ref(argument as string);
        case 'Fn::GetAtt': {
          const [logicalId, attribute] = typeof argument === 'string' ? argument.split('.') : argument;
          return this.getAtt(logicalId, attribute);
        }
        case 'Fn::Join':
          return (this.resolve(argument[1]) as unknown[]).join(argument[0] as string);
        case 'Fn::Select':
          return (this.resolve(argument[1]) as unknown[])[Number(this.resolve(argument[0]))];
        case 'Fn::Split':
          return String(this.resolve(argument[1])).split(argument[0] as string);
        case 'Fn::Sub':
          return this.substitute(argument);
        default:
          if (name.startsWith('Fn::')) throw new Error(`The local stack cannot evaluate ${name} in the template`);
      }
    }
    return Object.fromEntries(entries.map(([key, item]) => [key, this.resolve(item)]));
  }

  private substitute(argument: string | [string, Record<string, unknown>]): string {
    const [text, variables] = typeof argument === 'string' ? [argument, {}] : argument;
    return text.replace(/\$\{([^}]+)\}/g, (_, name: string) => {
      if (name in variables) return String(this.resolve(variables[name]));
      if (name in PSEUDO_PARAMETERS) return PSEUDO_PARAMETERS[name]!;
      const [logicalId, attribute] = name.split('.');
      return attribute ? this.getAtt(logicalId!, attribute) : this.ref(logicalId!);
    });
  }

  /** The resolved value as a string (environment variables, names, ARNs). */
  string(value: unknown): string {
    return String(this.resolve(value));
  }
}

/** What this machine gives the resources CloudFormation would create: the local table, the local address. */
export interface LocalDeployment {
  /** The one DynamoDB Local table every table of the template stands for. */
  tableName: string;
  /** The host clients reach the stage at: a CloudFront distribution's `DomainName` (the links in answers). */
  frontHost: string;
}

/**
 * A stack as CloudFormation would deploy it here: every table's `Ref` is the local table, every
 * distribution's `DomainName` the local front's host. Refuses a template with a type not emulated.
 */
export function deployLocally(directory: string, stackName: string, deployment: LocalDeployment): Stack {
  const ref: Record<string, string> = {};
  const attributes: Record<string, string> = {};
  const stack = new Stack(directory, stackName, { ref, attributes });
  assertEmulated(stack);
  for (const [logicalId] of tablesOf(stack)) ref[logicalId] = deployment.tableName;
  for (const [logicalId] of stack.resourcesOf('AWS::CloudFront::Distribution'))
    attributes[`${logicalId}.DomainName`] = deployment.frontHost;
  return stack;
}

/** Each table's physical name → its partition key attribute (its KeySchema's HASH key). */
export function partitionKeys(stack: Stack): Map<string, string> {
  return new Map(
    tablesOf(stack).map(([logicalId, table]) => {
      const hash = (table.Properties.KeySchema as Array<{ AttributeName: string; KeyType: string }>).find(
        (k) => k.KeyType === 'HASH',
      );
      return [stack.ref(logicalId), hash!.AttributeName];
    }),
  );
}

const tablesOf = (stack: Stack) => [
  ...stack.resourcesOf('AWS::DynamoDB::GlobalTable'),
  ...stack.resourcesOf('AWS::DynamoDB::Table'),
];

/**
 * The resource types a template may hold: those the local stack plays (each module checks the
 * properties it reads; eventbridge.ts plays scheduled rules and Lambda's asynchronous invocation
 * settings), and those that act only at deploy time or on observability, never on a request
 * (permissions API Gateway is granted, CodeDeploy's traffic shifting, whose finished state is the
 * alias in the template, alarms, logs, the address this server stands in for).
 */
const EMULATED_TYPES = new Set([
  'AWS::ApiGateway::RestApi',
  'AWS::ApiGateway::Stage',
  'AWS::ApiGateway::Resource',
  'AWS::ApiGateway::Method',
  'AWS::ApiGateway::Authorizer',
  'AWS::ApiGateway::GatewayResponse',
  'AWS::Lambda::Function',
  'AWS::Lambda::Version',
  'AWS::Lambda::Alias',
  'AWS::Lambda::EventInvokeConfig',
  'AWS::Events::Rule',
  'AWS::WAFv2::WebACL',
  'AWS::WAFv2::WebACLAssociation',
  'AWS::CloudFront::Distribution',
  'AWS::CloudFront::Function',
  'AWS::DynamoDB::GlobalTable',
  'AWS::DynamoDB::Table',
  'AWS::IAM::Role',
  'AWS::IAM::Policy',
]);
const OFF_THE_REQUEST_PATH = new Set([
  'AWS::ApiGateway::Deployment',
  'AWS::ApiGateway::Account',
  'AWS::Lambda::Permission',
  'AWS::CodeDeploy::Application',
  'AWS::CodeDeploy::DeploymentGroup',
  'AWS::SecretsManager::Secret',
  'AWS::KMS::Key',
  'AWS::CDK::Metadata',
  'AWS::ApiGateway::DomainName',
  'AWS::ApiGateway::BasePathMapping',
  'AWS::CertificateManager::Certificate',
  'AWS::Route53::RecordSet',
]);
const OFF_THE_REQUEST_PATH_SERVICES = ['AWS::CloudWatch::', 'AWS::Logs::', 'AWS::SNS::', 'AWS::XRay::'];

/** Stops the start with one line naming the first resource whose type the local stack does not emulate. */
export function assertEmulated(stack: Stack): void {
  for (const [logicalId, { Type }] of Object.entries(stack.template.Resources)) {
    if (
      EMULATED_TYPES.has(Type) ||
      OFF_THE_REQUEST_PATH.has(Type) ||
      OFF_THE_REQUEST_PATH_SERVICES.some((service) => Type.startsWith(service))
    )
      continue;
    throw new Error(`The template's ${logicalId} (${Type}) is not emulated by the local stack`);
  }
}

const PSEUDO_PARAMETERS: Record<string, string> = {
  'AWS::AccountId': LOCAL_ACCOUNT,
  'AWS::Region': LOCAL_REGION,
  'AWS::Partition': 'aws',
  'AWS::URLSuffix': 'amazonaws.com',
  'AWS::StackName': 'local',
  'AWS::NoValue': '',
};
