import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Stack } from './cloudformation';
import { LOCAL_ACCOUNT } from './cloudformation';
import { MrscEmulation, mrscErrorResponse, type MrscOptions, type MrscRefusal } from './mrsc';

/**
 * The local stand-in for IAM, for the one service the functions call: each role's identity
 * policies, read from the template, decide every DynamoDB request a function sends. Each function
 * gets credentials of its role; a proxy in front of DynamoDB Local reads who signed a request,
 * what it does to which table and keys, and answers AccessDeniedException as DynamoDB does.
 */
export interface Statement {
  Effect: 'Allow' | 'Deny';
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: string | string[];
  NotResource?: string | string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}

/** One authorization question: an action on a resource, with the request's partition key values. */
export interface AccessRequest {
  action: string;
  resource: string;
  /** `dynamodb:LeadingKeys`: undefined when the request names no partition key (e.g. Scan). */
  leadingKeys?: string[];
}

export interface DynamoDbCall {
  /** The calling function's role (logical id). */
  role: string;
  /** The DynamoDB API called, e.g. `Query`, `TransactWriteItems`. */
  operation: string;
  requests: AccessRequest[];
  /** IAM's decision. */
  allowed: boolean;
  /** Set when the MRSC emulation (infra/local/aws/mrsc.ts) refused the call, allowed by IAM: it never reached DynamoDB Local. */
  mrsc?: MrscRefusal;
}

/** Condition keys and operators this evaluator implements; anything else stops the start. */
const SUPPORTED_CONDITIONS: Record<string, string[]> = {
  'dynamodb:LeadingKeys': ['ForAllValues:StringEquals', 'ForAllValues:StringLike', 'StringEquals', 'StringLike'],
};
/** Managed policies that grant nothing on DynamoDB (Lambda's logging and tracing policies, CodeDeploy's for Lambda deployments). */
const MANAGED_WITHOUT_DYNAMODB =
  /:policy\/(service-role\/)?(AWSLambdaBasicExecutionRole|AWSXRayDaemonWriteAccess|AWSXrayWriteOnlyAccess|AWSCodeDeployRoleForLambdaLimited)$/;

export class IamPolicies {
  private readonly statements = new Map<string, Statement[]>();

  constructor(stack: Stack) {
    for (const [logicalId, role] of stack.resourcesOf('AWS::IAM::Role')) {
      const statements: Statement[] = [];
      for (const policy of role.Properties?.Policies ?? [])
        statements.push(...(stack.resolve(policy.PolicyDocument.Statement) as Statement[]));
      for (const arn of stack.resolve(role.Properties?.ManagedPolicyArns ?? []) as string[]) {
        if (!MANAGED_WITHOUT_DYNAMODB.test(arn))
          throw new Error(`IAM role ${logicalId}: managed policy ${arn} is not emulated`);
      }
      this.statements.set(logicalId, statements);
    }
    for (const [logicalId, policy] of stack.resourcesOf('AWS::IAM::Policy')) {
      const statements = stack.resolve(policy.Properties.PolicyDocument.Statement) as Statement[];
      for (const role of policy.Properties.Roles ?? []) {
        const roleId = role.Ref as string | undefined;
        if (!roleId || !this.statements.has(roleId))
          throw new Error(`IAM policy ${logicalId}: attached to a role outside the template`);
        this.statements.get(roleId)!.push(...statements);
      }
    }
    for (const [role, statements] of this.statements)
      for (const statement of statements) assertSupported(role, statement);
  }

  allows(role: string, request: AccessRequest): boolean {
    return policyAllows(this.statements.get(role) ?? [], request);
  }
}

/**
 * AWS's evaluation of one identity policy: an explicit Deny wins, otherwise an Allow is needed.
 * API Gateway evaluates a Lambda authorizer's policy the same way (`execute-api:Invoke`).
 */
export function policyAllows(statements: Statement[], request: AccessRequest): boolean {
  const matching = statements.filter((statement) => matches(statement, request));
  return matching.some((s) => s.Effect === 'Allow') && !matching.some((s) => s.Effect === 'Deny');
}

function assertSupported(role: string, statement: Statement): void {
  for (const [operator, conditions] of Object.entries(statement.Condition ?? {})) {
    for (const key of Object.keys(conditions)) {
      if (!SUPPORTED_CONDITIONS[key]?.includes(operator)) {
        throw new Error(`IAM role ${role}: condition ${operator} on ${key} is not emulated by the local stack`);
      }
    }
  }
}

const list = (value: string | string[] | undefined) => (value === undefined ? undefined : [value].flat());

/** IAM wildcards: `*` any run of characters, `?` one; actions compare case-insensitively. */
function like(pattern: string, value: string, ignoreCase = false): boolean {
  const source = pattern
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, ignoreCase ? 'i' : '').test(value);
}

function matches(statement: Statement, request: AccessRequest): boolean {
  const actions = list(statement.Action);
  const notActions = list(statement.NotAction);
  if (actions && !actions.some((a) => like(a, request.action, true))) return false;
  if (notActions?.some((a) => like(a, request.action, true))) return false;
  const resources = list(statement.Resource);
  const notResources = list(statement.NotResource);
  if (resources && !resources.some((r) => like(r, request.resource))) return false;
  if (notResources?.some((r) => like(r, request.resource))) return false;
  return Object.entries(statement.Condition ?? {}).every(([operator, conditions]) =>
    Object.entries(conditions).every(([, expected]) => condition(operator, [expected].flat(), request.leadingKeys)),
  );
}

/**
 * IAM condition operators on a multivalued key (IAM: "Single-valued vs. multivalued context
 * keys"): ForAllValues holds when every request value matches one expected value, and holds for a
 * request without the key; a plain operator needs the key present.
 */
function condition(operator: string, expected: string[], values: string[] | undefined): boolean {
  const [qualifier, comparison] = operator.includes(':') ? (operator.split(':') as [string, string]) : ['', operator];
  const compare =
    comparison === 'StringLike' ? (e: string, v: string) => like(e, v) : (e: string, v: string) => e === v;
  const matchesOne = (value: string) => expected.some((e) => compare(e, value));
  if (qualifier === 'ForAllValues') return (values ?? []).every(matchesOne);
  return values !== undefined && values.length > 0 && values.some(matchesOne);
}

/** The access requests one DynamoDB API call makes (DynamoDB: "API permissions reference"). */
export function accessRequests(
  operation: string,
  body: any,
  tableArn: (table: string) => string,
  partitionKeyOf: (table: string) => string,
): AccessRequest[] {
  const keyValue = (table: string, item: Record<string, any> | undefined) => {
    const attribute = item?.[partitionKeyOf(table)];
    return attribute === undefined ? [] : [String(attribute.S ?? attribute.N ?? attribute.B)];
  };
  const one = (action: string, table: string, leadingKeys?: string[]) => ({
    action: `dynamodb:${action}`,
    resource: tableArn(table) + (body?.IndexName ? `/index/${body.IndexName}` : ''),
    leadingKeys,
  });
  switch (operation) {
    case 'GetItem':
    case 'DeleteItem':
    case 'UpdateItem':
      return [one(operation, body.TableName, keyValue(body.TableName, body.Key))];
    case 'PutItem':
      return [one(operation, body.TableName, keyValue(body.TableName, body.Item))];
    case 'Query':
      return [one(operation, body.TableName, queryPartitionKey(body, partitionKeyOf(body.TableName)))];
    case 'TransactWriteItems':
      return (body.TransactItems as any[]).map((item) => {
        const [kind, spec] = Object.entries(item)[0] as [string, any];
        const action = (
          {
            Put: 'PutItem',
            Update: 'UpdateItem',
            Delete: 'DeleteItem',
            ConditionCheck: 'ConditionCheckItem',
          } as Record<string, string>
        )[kind]!;
        return {
          action: `dynamodb:${action}`,
          resource: tableArn(spec.TableName),
          leadingKeys: keyValue(spec.TableName, spec.Key ?? spec.Item),
        };
      });
    case 'TransactGetItems':
      return (body.TransactItems as any[]).map(({ Get }) => ({
        action: 'dynamodb:GetItem',
        resource: tableArn(Get.TableName),
        leadingKeys: keyValue(Get.TableName, Get.Key),
      }));
    case 'BatchGetItem':
    case 'BatchWriteItem':
      return Object.entries(body.RequestItems as Record<string, any>).map(([table, requests]) => {
        const items =
          operation === 'BatchGetItem'
            ? (requests.Keys as any[])
            : (requests as any[]).map((r) => r.PutRequest?.Item ?? r.DeleteRequest?.Key);
        return {
          action: `dynamodb:${operation}`,
          resource: tableArn(table),
          leadingKeys: items.flatMap((item) => keyValue(table, item)),
        };
      });
    case 'ListTables':
      return [{ action: 'dynamodb:ListTables', resource: '*' }];
    default:
      // Scan, DescribeTable and the rest: the table, no partition key in the request.
      return [one(operation, body?.TableName ?? '*', undefined)];
  }
}

/** The partition key value a Query's key condition fixes (`#pk = :pk` or `PK = :v`). */
function queryPartitionKey(body: any, partitionKey: string): string[] | undefined {
  const names: Record<string, string> = body.ExpressionAttributeNames ?? {};
  const values: Record<string, any> = body.ExpressionAttributeValues ?? {};
  if (body.KeyConditions) {
    const value = body.KeyConditions[partitionKey]?.AttributeValueList?.[0];
    return value ? [String(value.S ?? value.N ?? value.B)] : undefined;
  }
  for (const match of String(body.KeyConditionExpression ?? '').matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
    const name = match[1]!.startsWith('#') ? names[match[1]!] : match[1];
    const value = values[match[2]!];
    if (name === partitionKey && value) return [String(value.S ?? value.N ?? value.B)];
  }
  return undefined;
}

export interface DynamoDbProxy {
  endpoint: string;
  /** Credentials of a role: what Lambda gives a function whose execution role it is. */
  credentialsFor(role: string): Record<string, string>;
  /** What this proxy refuses as an MRSC global table does, with the settings in effect. */
  mrsc: MrscEmulation;
  close(): Promise<void>;
}

/**
 * A proxy in front of DynamoDB Local that authorizes each request with the signer's role policy.
 * `tables` maps each local table name to its partition key attribute (from the template). Then
 * what IAM allows, the MRSC emulation (`mrsc`, see infra/local/aws/mrsc.ts) may still refuse.
 */
export async function startDynamoDbProxy(options: {
  policies: IamPolicies;
  target: string;
  tableArn(table: string): string;
  partitionKeyOf(table: string): string;
  onCall?(call: DynamoDbCall): void;
  /** MRSC's refusals: transactions, replicated write conflicts. Defaults in infra/local/aws/mrsc.ts. */
  mrsc?: MrscOptions;
}): Promise<DynamoDbProxy> {
  const roleByAccessKey = new Map<string, string>();
  const accessKeyByRole = new Map<string, string>();
  const target = new URL(options.target);
  const mrsc = new MrscEmulation(options.mrsc, options.partitionKeyOf);

  const server = createServer(async (req, res) => {
    const body = await readAll(req);
    const accessKey = /Credential=([^/]+)\//.exec(req.headers.authorization ?? '')?.[1];
    const role = accessKey ? roleByAccessKey.get(accessKey) : undefined;
    const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    if (!role)
      return deny(res, `The security token included in the request is invalid.`, 'UnrecognizedClientException');
    let requests: AccessRequest[];
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8') || '{}');
      requests = accessRequests(operation, parsed, options.tableArn, options.partitionKeyOf);
    } catch {
      return forward(req, res, body, target); // not a request IAM can read: DynamoDB Local answers its own validation error
    }
    const refused = requests.find((request) => !options.policies.allows(role, request));
    // IAM decides first; what it allows, MRSC may still refuse.
    const admission = refused ? undefined : mrsc.admit(operation, parsed, signedRegion(req.headers.authorization));
    options.onCall?.({
      role,
      operation,
      requests,
      allowed: !refused,
      ...(admission?.refusal ? { mrsc: admission.refusal } : {}),
    });
    if (refused) {
      return deny(
        res,
        `User: arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/${role}/local is not authorized to perform: ${refused.action} on resource: ${refused.resource} because no identity-based policy allows the ${refused.action} action`,
      );
    }
    if (admission!.refusal) {
      const answer = mrscErrorResponse(admission!.refusal);
      res.writeHead(answer.status, answer.headers);
      return res.end(answer.body);
    }
    forward(req, res, body, target, admission!.done);
  });
  // DynamoDB's endpoint keeps an idle connection far longer than Node's default 5 s, and the SDK
  // reuses its sockets with no idle limit: a call made as this server closed one would meet a reset.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    credentialsFor(role) {
      let accessKey = accessKeyByRole.get(role);
      if (!accessKey) {
        accessKey = `ASIA${randomBytes(8).toString('hex').toUpperCase()}`;
        accessKeyByRole.set(role, accessKey);
        roleByAccessKey.set(accessKey, role);
      }
      return {
        AWS_ACCESS_KEY_ID: accessKey,
        AWS_SECRET_ACCESS_KEY: randomBytes(20).toString('hex'),
        AWS_SESSION_TOKEN: randomBytes(32).toString('base64'),
      };
    },
    mrsc,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The Region a SigV4 request was signed for (`Credential=<key>/<date>/<region>/dynamodb/aws4_request`). */
function signedRegion(authorization: string | undefined): string | undefined {
  return /Credential=[^/]+\/\d{8}\/([^/]+)\//.exec(authorization ?? '')?.[1];
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** DynamoDB's error shape: HTTP 400, `__type` naming the exception. */
function deny(res: ServerResponse, message: string, type = 'AccessDeniedException'): void {
  const body = JSON.stringify({ __type: `com.amazon.coral.service#${type}`, Message: message });
  res.writeHead(400, {
    'Content-Type': 'application/x-amz-json-1.0',
    'x-amzn-ErrorType': type,
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** Forwards to DynamoDB Local; `answered` once its answer is in (or the forward failed). */
function forward(req: IncomingMessage, res: ServerResponse, body: Buffer, target: URL, answered?: () => void): void {
  const upstream = httpRequest(
    {
      host: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, host: target.host, 'content-length': String(body.length) },
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.once('end', () => answered?.());
      answer.once('close', () => answered?.());
      answer.pipe(res);
    },
  );
  upstream.on('error', () => {
    answered?.();
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  upstream.end(body);
}
