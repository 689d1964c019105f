import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { APP_NAME } from '#shared/config';
import { AUTHORIZER_FUNCTION, functionNames } from '#shared/routes';
import { SWEEPER_FUNCTION } from '#shared/sweeper';
import { ApiFunction } from '#infra/cdk/constructs/api-function';
import { BUILTINS_BY_REQUIRE } from '#infra/cdk/constructs/bundling';
import { synthesize, type Synthesized } from './synth';
import { resourcesOf, type Resources } from './templates';
import { expectWith } from '../support/expect-with';
import { lambdaContext, proxyEvent } from '../support/lambda-events';

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
  const found = Object.entries(lambdas).filter(
    ([, r]) => r.Properties.Description === `${APP_NAME}: functions/${name}.ts`,
  );
  expectWith(found, `one Lambda for functions/${name}.ts`).toHaveLength(1);
  return { logicalId: found[0]![0], ...(found[0]![1] as any) };
};

/** Every statement of the policies attached to the function's role. */
function statementsOf(name: string): any[] {
  const roleId = lambdaOf(name).Properties.Role['Fn::GetAtt'][0];
  return Object.values(policies)
    .filter((p) => p.Properties.Roles.some((r: any) => r.Ref === roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement);
}

const actionsIn = (statement: any): string[] => [statement.Action].flat();
const dynamoStatements = (name: string) =>
  statementsOf(name).filter((s) => actionsIn(s).some((a) => a.startsWith('dynamodb:')));
const allFunctions = () => [...functionNames(), AUTHORIZER_FUNCTION];
/** And the sweeper, bundled the same way; its settings and access are sweeper.test.ts's. */
const bundledFunctions = () => [...allFunctions(), SWEEPER_FUNCTION];

/**
 * What each function's code calls (shared/store/*), written out here by hand rather than read from
 * the route table: IAM actions (single-item operations only: no transactions) and the
 * partition-key prefixes of the items it touches.
 */
type Access = { actions: string[]; partitions: string[] };
const EXPECTED_TABLE_ACCESS: Record<string, Access | Access[]> = {
  ping: { actions: [], partitions: [] },
  // A list writes out its organization's latest change when a page meets it unwritten: a key's items only.
  'reserved-tag-keys/list': {
    actions: ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'],
    partitions: ['ORG#*', 'RTK#*'],
  },
  // Creates claim their receipt first (and give it back when refused); the commit is the head's Update.
  'reserved-tag-keys/create': {
    actions: ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    partitions: ['ORG#*', 'RECEIPT#*', 'RTK#*'],
  },
  'reserved-tag-keys/update': {
    actions: ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    partitions: ['ORG#*', 'RTK#*'],
  },
  'reserved-tag-keys/delete': {
    actions: ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    partitions: ['ORG#*', 'RTK#*'],
  },
  // A list writes out the run's latest comment (copy and member) when a page meets it unwritten.
  'comments/list': {
    actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query'],
    partitions: ['COMMENT#*', 'RUN#*'],
  },
  'comments/create': {
    actions: ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    partitions: ['COMMENT#*', 'RECEIPT#*', 'RUN#*'],
  },
  'comments/show': { actions: ['dynamodb:GetItem'], partitions: ['COMMENT#*'] },
  // The only reader of notification secrets; registers a run (its record and its listing under the organization).
  'run-notifications/receive': {
    actions: ['dynamodb:GetItem', 'dynamodb:PutItem'],
    partitions: ['NOTIFY#*', 'ORG#*', 'RUN#*'],
  },
  // Tokens by id only (no Query could list them), trusts by issuer.
  authorizer: [
    { actions: ['dynamodb:GetItem'], partitions: ['TOKENS'] },
    { actions: ['dynamodb:Query'], partitions: ['TRUSTS'] },
  ],
};

/** IAM's StringLike: `*` matches any run of characters, `?` any one. */
const matchesLike = (pattern: string, value: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  ).test(value);

describe('one Lambda per route-table function, plus the authorizer', () => {
  it('has exactly one function per handler file and nothing else (and the sweeper)', () => {
    expect(Object.keys(lambdas)).toHaveLength(bundledFunctions().length);
    for (const name of bundledFunctions()) lambdaOf(name);
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
    });
    // No --enable-source-maps: it parses the source map at every cold start (stack-traces.ts reads it on the first error).
    expect(p.Environment.Variables.NODE_OPTIONS).toBeUndefined();
  });

  it('reserves concurrency for each function: 25 per API function, 100 for the authorizer', () => {
    // A flood on one endpoint (or of fresh tokens through the authorizer) is throttled there and
    // never takes the account's other executions: 9 × 25 + 100 = 325 per stage, of 1,000 − 100.
    // The authorizer's covers the bursts of the 9 methods that take a token (deployments.test.ts).
    for (const name of functionNames())
      expectWith(lambdaOf(name).Properties.ReservedConcurrentExecutions, name).toBe(25);
    expect(lambdaOf(AUTHORIZER_FUNCTION).Properties.ReservedConcurrentExecutions).toBe(100);
  });

  it('gives every function a log group with a retention', () => {
    const groups = resourcesOf(synth.template, 'AWS::Logs::LogGroup');
    for (const name of allFunctions()) {
      const group = groups[lambdaOf(name).Properties.LoggingConfig.LogGroup.Ref]!;
      expect(group.Properties.RetentionInDays).toBe(30);
    }
  });
});

describe('least privilege: each function its own actions on its own partitions', () => {
  it('knows every deployed function', () => {
    expect(Object.keys(EXPECTED_TABLE_ACCESS).sort()).toEqual(allFunctions().sort());
  });

  it.each(allFunctions())('%s may do exactly what its code does, only on its partitions', (name) => {
    const expected = [EXPECTED_TABLE_ACCESS[name]!].flat().filter((access) => access.actions.length > 0);
    const statements = dynamoStatements(name);
    expect(statements).toHaveLength(expected.length);
    statements.forEach((statement, i) => {
      expect(statement.Effect).toBe('Allow');
      expect(actionsIn(statement).sort()).toEqual(expected[i]!.actions);
      expect(statement.Resource).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^Table/), 'Arn'] });
      // Every partition key the request touches must match (ForAllValues), never just one of them.
      expect(statement.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': expect.any(Array) } });
      expect([...statement.Condition['ForAllValues:StringLike']['dynamodb:LeadingKeys']].sort()).toEqual(
        expected[i]!.partitions,
      );
    });
  });

  it('lets no function but the authorizer near a token or a trust, and the authorizer near nothing else', () => {
    const partitionsOf = (name: string): string[] =>
      dynamoStatements(name).flatMap((s) => s.Condition['ForAllValues:StringLike']['dynamodb:LeadingKeys']);
    for (const name of functionNames()) {
      for (const pattern of partitionsOf(name)) {
        for (const secret of ['TOKENS', 'TRUSTS'])
          expectWith(matchesLike(pattern, secret), `${name}: ${pattern}`).toBe(false);
      }
    }
    const authorizer = partitionsOf(AUTHORIZER_FUNCTION);
    for (const other of [
      'ORG#my-org',
      'RTK#rtk-jjnTseo8NN1jACbk',
      'RUN#run-CZcmD7eagjhyX0vN',
      'COMMENT#wsc-JdFX3u8o114F4CWf',
      'TOKENSX',
      'TRUSTSX',
    ]) {
      expectWith(
        authorizer.some((pattern) => matchesLike(pattern, other)),
        other,
      ).toBe(false);
    }
  });

  it('grants no Scan, no batch and no PartiQL to anyone (a Scan names no partition, so LeadingKeys could not bound it)', () => {
    for (const name of allFunctions()) {
      for (const action of dynamoStatements(name).flatMap(actionsIn)) {
        expect(action).toMatch(/^dynamodb:(GetItem|Query|PutItem|UpdateItem|DeleteItem|ConditionCheckItem)$/);
      }
    }
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
        if (actions.some((a) => a.startsWith('dynamodb:')))
          expect(s.Resource).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^Table/), 'Arn'] });
        if (actions.some((a) => a.startsWith('logs:')))
          expect(s.Resource).toEqual({ 'Fn::GetAtt': [p.LoggingConfig.LogGroup.Ref, 'Arn'] });
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

  it.each(bundledFunctions())('%s is one minified ESM file with a source map and the AWS SDK inside', (name) => {
    const file = bundleOf(name);
    expect(existsSync(file)).toBe(true);
    expect(existsSync(`${file}.map`)).toBe(true);
    const code = readFileSync(file, 'utf8');
    expect(code.startsWith("import { createRequire } from 'node:module';")).toBe(true);
    expect(code).not.toMatch(/from\s*["']#shared\//); // package.json imports resolved by esbuild
    expect(code).not.toMatch(/(from\s*|import\()["']@aws-sdk\//); // bundled, never external
    if (name === SWEEPER_FUNCTION || [EXPECTED_TABLE_ACCESS[name]!].flat().some((access) => access.actions.length > 0))
      expect(code).toContain('dynamodb'); // the DynamoDB client is inside
    expect(code.length / code.split('\n').length).toBeGreaterThan(1_000); // minified
  });

  it.each(bundledFunctions())(
    '%s takes node:http and node:https as CommonJS exports, never through an ES module import',
    (name) => {
      const code = readFileSync(bundleOf(name), 'utf8');
      // An ES module import of a built-in reads every export: node:http's then load all of undici.
      for (const builtin of BUILTINS_BY_REQUIRE)
        expect(code).not.toMatch(new RegExp(`(from\\s*|import\\()["'](node:)?${builtin}["']`));
      expect(code).toContain('process.getBuiltinModule("node:http")');
    },
  );

  it.each(bundledFunctions())(
    "%s carries only the environment's credentials, not the rest of the SDK's default chain",
    (name) => {
      const code = readFileSync(bundleOf(name), 'utf8');
      // Lambda puts the execution role's credentials there (infra/cdk/bundle-shims/lambda-credentials.ts).
      if (code.includes('dynamodb')) expect(code).toContain('no AWS credentials in the environment');
      // What the chain's other sources would bring: web identity, SSO, a profile's credential process.
      for (const source of ['AWS_WEB_IDENTITY_TOKEN_FILE', 'sso_start_url', 'credential_process'])
        expect(code).not.toContain(source);
    },
  );

  it.each(bundledFunctions())(
    '%s can send no transaction: a global table in multi-Region strong consistency refuses them',
    (name) => {
      // Every change commits with one single-item write (docs/design.md, "Commit points").
      const code = readFileSync(bundleOf(name), 'utf8');
      for (const operation of ['TransactWriteItems', 'TransactGetItems', 'ExecuteTransaction'])
        expect(code).not.toContain(operation);
    },
  );

  it('serves ping from the bundle as deployed: 204 with the contract headers', async () => {
    const { handler } = (await import(pathToFileURL(bundleOf('ping')).href)) as {
      handler: (e: unknown, c: unknown) => Promise<any>;
    };
    const result = await handler(proxyEvent({ path: '/api/v2/ping' }), lambdaContext('ping'));
    expect(result.statusCode).toBe(204);
    expect(result.headers).toMatchObject({
      'TFP-API-Version': '2.6',
      'X-RateLimit-Limit': '30',
      'TFP-AppName': APP_NAME,
    });
  });

  it('denies a request without a token in the authorizer bundle, without a function error (API Gateway turns it into a 401)', async () => {
    const { handler } = (await import(pathToFileURL(bundleOf(AUTHORIZER_FUNCTION)).href)) as {
      handler: (e: unknown) => Promise<any>;
    };
    const result = await handler({
      type: 'REQUEST',
      methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:api/test/GET/api/v2/comments/x',
      headers: {},
    });
    expect(result.policyDocument.Statement).toEqual([
      {
        Action: 'execute-api:Invoke',
        Effect: 'Deny',
        Resource: 'arn:aws:execute-api:eu-west-1:123456789012:api/test/*',
      },
    ]);
    expect(result.context).toEqual({
      reason: 'malformed',
      detail: 'no Authorization header: send Authorization: Bearer <token>',
    });
  });
});
