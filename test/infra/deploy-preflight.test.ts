import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { runToEnd } from '../support/processes';
import { expectWith } from '../support/expect-with';
import { templateOf } from './templates';
import { failureHint, preflight, RETAINED_ON_DESTROY, whatItDoes } from '#infra/ops/preflight';
import { awsFailureLines, deployedRegion } from '#infra/admin/aws';
import cdkJson from '../../cdk.json' with { type: 'json' };

/**
 * `npm run deploy`, `npm run diff` and `npm run destroy` say what is missing before anything is
 * synthesized: each problem in one line with what to do, within a fraction of the ~20 s a synth takes.
 */
const AWS_VARIABLES = [
  'AWS_PROFILE',
  'AWS_DEFAULT_PROFILE',
  'AWS_REGION',
  'AWS_DEFAULT_REGION',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AWS_ROLE_ARN',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONFIG_FILE',
  'AWS_SHARED_CREDENTIALS_FILE',
  'STAGE',
];
/** A refusal before any synthesis answers in seconds; a synthesis (esbuild bundling every function) takes tens of them. */
const SOONER_THAN_A_SYNTHESIS = 10;

const emptyHome = () => mkdtempSync(join(process.env.TMPDIR!, 'home-'));
/** This machine's AWS set-up out of the way: a home without ~/.aws, no AWS variables. */
const noAws = (home: string) => Object.fromEntries([...AWS_VARIABLES.map((name) => [name, undefined]), ['HOME', home]]);

async function timed(args: string[], env: Record<string, string | undefined>) {
  const started = performance.now();
  const result = await runToEnd(args, env);
  return {
    ...result,
    seconds: (performance.now() - started) / 1000,
    lines: result.output.split('\n').filter((line) => line.trim() !== ''),
  };
}

describe('npm run deploy / diff / destroy without AWS credentials', () => {
  it.each(['deploy', 'diff'])(
    'npm run %s: one line for the credentials, one for the region, exit 1, no synthesis, under 3 s',
    async (command) => {
      const { code, lines, seconds } = await timed(['npm', 'run', '--silent', command], noAws(emptyHome()));
      expect(code).toBe(1);
      expect(lines).toEqual([
        `${command}: no AWS credentials (no AWS_PROFILE, no AWS_ACCESS_KEY_ID, no default profile in ~/.aws): aws configure sso, then export AWS_PROFILE=<that profile> (or export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY).`,
        `${command}: no AWS region (AWS_REGION, AWS_DEFAULT_REGION, or region in the profile): export AWS_REGION=<region>, e.g. eu-west-1 (else the CDK CLI would pick us-east-1 on its own).`,
      ]);
      expect(seconds).toBeLessThan(SOONER_THAN_A_SYNTHESIS);
    },
  );

  it('with a region set, only the credentials are missing: one line', async () => {
    const { code, lines, seconds } = await timed(['npm', 'run', '--silent', 'deploy', '--', '-c', 'stage=dev'], {
      ...noAws(emptyHome()),
      AWS_REGION: 'eu-west-1',
    });
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^deploy: no AWS credentials .*: aws configure sso, then export AWS_PROFILE=<that profile>/,
    );
    expect(seconds).toBeLessThan(SOONER_THAN_A_SYNTHESIS);
  });

  it('npm run destroy: the stage must be named, and the credentials and the region are missing', async () => {
    const { code, lines, seconds } = await timed(['npm', 'run', '--silent', 'destroy'], noAws(emptyHome()));
    expect(code).toBe(1);
    expect(lines).toEqual([
      "destroy: no stage named: npm run destroy -- -c stage=<stage> (destroy deletes that stage's stack; there is no default).",
      expect.stringMatching(/^destroy: no AWS credentials /),
      expect.stringMatching(/^destroy: no AWS region /),
      // No terminal here either (as in CI): destroy would have nobody to ask.
      'destroy: no terminal to confirm the deletion on (stdout is not a TTY, as in CI): npm run destroy -- -c stage=<stage> --force, once you mean it.',
    ]);
    expect(seconds).toBeLessThan(SOONER_THAN_A_SYNTHESIS);
  });

  it('a setting that cannot work is named in the same pass, before any synthesis', async () => {
    const { code, lines } = await timed(
      ['npm', 'run', '--silent', 'deploy', '--', '-c', 'stage=prod', '-c', 'memorySize=64'],
      { ...noAws(emptyHome()), AWS_REGION: 'eu-west-1' },
    );
    expect(code).toBe(1);
    expect(lines).toEqual([
      'deploy: Invalid context "memorySize" = "64": a whole number from 128 to 10240: correct it in -c or in cdk.json.',
      expect.stringMatching(/^deploy: no AWS credentials /),
    ]);
  });

  it('--help says what is checked', async () => {
    const { code, output } = await timed(['npm', 'run', '--silent', 'destroy', '--', '--help'], {});
    expect(code).toBe(0);
    expect(output).toContain('Usage: npm run destroy -- [-c stage=NAME]');
    expect(output).toContain('The stage must be named');
  });
});

describe("where the credentials come from (the AWS SDK's order, read offline)", () => {
  const check = (env: Record<string, string>, home = emptyHome(), args: string[] = []) =>
    preflight({ args, env, home, cdkContext: cdkJson.context, now: new Date('2026-11-25T10:00:00Z') });

  it('environment keys', () => {
    const result = check({
      AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'x',
      AWS_SESSION_TOKEN: 't',
      AWS_REGION: 'eu-west-1',
    });
    expect(result.problems).toEqual([]);
    expect(result.credentials?.source).toBe('environment (AWS_ACCESS_KEY_ID, with a session token)');
    expect(result.region).toBe('eu-west-1');
  });

  it('half a key pair is named', () => {
    expect(check({ AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE', AWS_REGION: 'eu-west-1' }).problems).toEqual([
      { what: 'AWS_ACCESS_KEY_ID is set without AWS_SECRET_ACCESS_KEY', fix: expect.any(String) },
    ]);
  });

  it('a profile that does not exist, and one that does with its region', () => {
    const home = emptyHome();
    expect(check({ AWS_PROFILE: 'nope', AWS_REGION: 'eu-west-1' }, home).problems).toEqual([
      {
        what: 'AWS profile nope is in neither ~/.aws/config nor ~/.aws/credentials',
        fix: 'aws configure sso --profile nope (or aws configure --profile nope)',
      },
    ]);
    mkdirSync(join(home, '.aws'));
    writeFileSync(
      join(home, '.aws', 'config'),
      '[profile ops]\nregion = eu-central-1\ncredential_process = /usr/local/bin/creds\n',
    );
    const ops = check({ AWS_PROFILE: 'ops' }, home);
    expect(ops.problems).toEqual([]);
    expect(ops.credentials?.source).toBe('profile ops (credential_process)');
    expect(ops.region).toBe('eu-central-1');
    // --profile on the command line, as the CDK CLI takes it.
    expect(check({}, home, ['--profile', 'ops']).credentials?.source).toBe('profile ops (credential_process)');
  });

  it('an IAM Identity Center (SSO) profile: logged in, or told to log in', () => {
    const home = emptyHome();
    mkdirSync(join(home, '.aws', 'sso', 'cache'), { recursive: true });
    writeFileSync(
      join(home, '.aws', 'config'),
      [
        '[profile dev]',
        'sso_session = corp',
        'sso_account_id = 123456789012',
        'sso_role_name = Deployer',
        'region = eu-west-1',
        '[sso-session corp]',
        'sso_start_url = https://corp.awsapps.com/start',
        'sso_region = eu-west-1',
        '',
      ].join('\n'),
    );
    expect(check({ AWS_PROFILE: 'dev' }, home).problems).toEqual([
      { what: 'the AWS SSO session of profile dev has no login on this machine', fix: 'aws sso login --profile dev' },
    ]);
    const cache = join(home, '.aws', 'sso', 'cache', `${createHash('sha1').update('corp').digest('hex')}.json`);
    writeFileSync(cache, JSON.stringify({ accessToken: 'x', expiresAt: '2026-11-25T09:00:00Z' }));
    expect(check({ AWS_PROFILE: 'dev' }, home).problems).toEqual([
      { what: 'the AWS SSO session of profile dev has expired', fix: 'aws sso login --profile dev' },
    ]);
    writeFileSync(cache, JSON.stringify({ accessToken: 'x', expiresAt: '2026-11-25T18:00:00Z' }));
    const dev = check({ AWS_PROFILE: 'dev' }, home);
    expect(dev.problems).toEqual([]);
    expect(dev.credentials?.source).toBe('profile dev (IAM Identity Center, logged in until 2026-11-25 18:00 UTC)');
  });

  it('the default profile of ~/.aws/credentials, with the region of ~/.aws/config', () => {
    const home = emptyHome();
    mkdirSync(join(home, '.aws'));
    writeFileSync(
      join(home, '.aws', 'credentials'),
      '[default]\naws_access_key_id = AKIAEXAMPLE\naws_secret_access_key = x\n',
    );
    writeFileSync(join(home, '.aws', 'config'), '[default]\nregion = us-west-2\n');
    const result = check({}, home);
    expect(result.problems).toEqual([]);
    expect(result.credentials?.source).toBe('profile default (~/.aws/credentials)');
    expect(result.region).toBe('us-west-2');
  });
});

describe("the region's shape, checked first (the deploy's pre-flight and the operator CLI share the check)", () => {
  const keys = { AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE', AWS_SECRET_ACCESS_KEY: 'x' };
  const check = (env: Record<string, string>, home = emptyHome()) =>
    preflight({ args: ['-c', 'stage=dev'], env, home, cdkContext: cdkJson.context });
  const cases: Array<[string, string]> = [
    ['eu_west_1', 'AWS_REGION is "eu_west_1": not a region name (like eu-west-1): export AWS_REGION=eu-west-1'],
    ['eu-west-1 ', 'AWS_REGION is "eu-west-1 ": it has a space around it: export AWS_REGION=eu-west-1'],
    ['eu-west-1a', 'AWS_REGION is "eu-west-1a": an availability zone, not a region: export AWS_REGION=eu-west-1'],
    [
      'us-west-2-lax-1a',
      'AWS_REGION is "us-west-2-lax-1a": an availability zone, not a region: export AWS_REGION=us-west-2',
    ],
    [
      'Ireland',
      'AWS_REGION is "Ireland": not a region name (like eu-west-1): export AWS_REGION=<region>, e.g. eu-west-1',
    ],
  ];

  it.each(cases)('AWS_REGION=%j: one problem naming it and the fix', (region, line) => {
    const result = check({ ...keys, AWS_REGION: region });
    expect(result.problems.map(({ what, fix }) => `${what}: ${fix}`)).toEqual([line]);
    expect(result.region).toBeUndefined();
  });

  it.each(cases)('the operator CLI refuses AWS_REGION=%j with the same line, before the SDK starts', (region, line) => {
    expect(() =>
      deployedRegion({
        ...keys,
        AWS_REGION: region,
        HOME: emptyHome(),
        AWS_CONFIG_FILE: '/nonexistent',
        AWS_SHARED_CREDENTIALS_FILE: '/nonexistent',
      }),
    ).toThrow(line);
  });

  it("accepts every shape of region AWS has, and names a profile's region where it is set", () => {
    for (const region of [
      'eu-west-1',
      'us-gov-west-1',
      'cn-northwest-1',
      'us-isob-east-1',
      'eusc-de-east-1',
      'ap-southeast-5',
      'il-central-1',
    ]) {
      expectWith(check({ ...keys, AWS_REGION: region }).problems, region).toEqual([]);
    }
    const home = emptyHome();
    mkdirSync(join(home, '.aws'));
    writeFileSync(
      join(home, '.aws', 'config'),
      '[profile ops]\nregion = eu_central_1\ncredential_process = /usr/local/bin/creds\n',
    );
    expect(check({ AWS_PROFILE: 'ops' }, home).problems).toEqual([
      {
        what: 'region of profile ops in ~/.aws/config is "eu_central_1": not a region name (like eu-west-1)',
        fix: 'correct it there (region = eu-central-1), or export AWS_REGION=eu-central-1',
      },
    ]);
  });

  it('npm run deploy stops at a region that is not one: one line, exit 1, no synthesis', async () => {
    const { code, lines, seconds } = await timed(['npm', 'run', '--silent', 'deploy', '--', '-c', 'stage=dev'], {
      ...noAws(emptyHome()),
      ...keys,
      AWS_REGION: 'eu_west_1',
    });
    expect(code).toBe(1);
    expect(lines).toEqual([
      'deploy: AWS_REGION is "eu_west_1": not a region name (like eu-west-1): export AWS_REGION=eu-west-1.',
    ]);
    expect(seconds).toBeLessThan(SOONER_THAN_A_SYNTHESIS);
  });

  it('the operator CLI names a missing profile and the missing region together, as the deploy does', () => {
    const env = {
      AWS_PROFILE: 'nope',
      HOME: emptyHome(),
      AWS_CONFIG_FILE: '/nonexistent/config',
      AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/credentials',
    };
    expect(() => deployedRegion(env)).toThrow(
      [
        'AWS profile nope is in neither /nonexistent/config nor /nonexistent/credentials: aws configure sso --profile nope (or aws configure --profile nope).',
        "no AWS region (AWS_REGION, AWS_DEFAULT_REGION, or region in the profile): export AWS_REGION=<the stage's region> (a table lives in one region)",
      ].join('\n'),
    );
  });
});

describe('the operator CLI on a DynamoDB nothing answered for', () => {
  /** What the SDK throws when no answer came: a Node network error, with the retry's $metadata and no HTTP status. */
  const unreached = (code: string, message: string) =>
    Object.assign(new Error(message), { code, $metadata: { attempts: 2, totalRetryDelay: 40 } });

  it('says it could not reach the endpoint, and what to check, not that DynamoDB answered', () => {
    expect(
      awsFailureLines(unreached('ENOTFOUND', 'getaddrinfo ENOTFOUND dynamodb.eu-west-1.amazonaws.com'), 't', {
        AWS_REGION: 'eu-west-1',
      }),
    ).toEqual([
      'could not reach dynamodb.eu-west-1.amazonaws.com (ENOTFOUND): check AWS_REGION and the network or proxy',
    ]);
    expect(
      awsFailureLines(unreached('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9'), 't', {
        AWS_REGION: 'eu-west-1',
        AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:9',
      }),
    ).toEqual(['could not reach 127.0.0.1:9 (ECONNREFUSED): check AWS_ENDPOINT_URL_DYNAMODB and the network or proxy']);
    expect(
      awsFailureLines(Object.assign(new Error('timed out'), { name: 'TimeoutError', $metadata: {} }), 't', {
        AWS_REGION: 'eu-west-1',
      }),
    ).toEqual([
      'could not reach dynamodb.eu-west-1.amazonaws.com (TimeoutError): check AWS_REGION and the network or proxy',
    ]);
  });

  it('still says what DynamoDB answered when it did', () => {
    const answered = Object.assign(new Error('Requested resource not found'), {
      name: 'ResourceNotFoundException',
      $metadata: { httpStatusCode: 400 },
    });
    expect(awsFailureLines(answered, 't', { AWS_REGION: 'eu-west-1' })![0]).toMatch(
      /^no table t in eu-west-1 \(TABLE_NAME\)/,
    );
  });
});

describe('what destroy says it keeps, and how a later deploy adopts it', () => {
  const passed = (args: string[]) =>
    preflight({
      args,
      env: { AWS_ACCESS_KEY_ID: 'A', AWS_SECRET_ACCESS_KEY: 'B', AWS_REGION: 'eu-west-1' },
      home: emptyHome(),
      cdkContext: cdkJson.context,
    });

  it('names the retained table and access log group, and the deploy that adopts the table', () => {
    expect(whatItDoes('destroy', passed(['-c', 'stage=dev']))).toEqual([
      'destroy: stage dev (stack tfc-tags-comments-dev, eu-west-1), credentials from environment (AWS_ACCESS_KEY_ID). CloudFormation deletes the stack, and keeps:',
      'destroy:   its DynamoDB table (tokens, reserved tag keys, runs, comments: retained and deletion-protected);',
      'destroy:   the API access log group;',
      'destroy: a later deploy adopts the table instead of creating an empty one: npm run deploy -- -c stage=dev -c tableName=<table>',
      'destroy:   the table\'s name: aws dynamodb list-tables --query "TableNames[?starts_with(@, \'tfc-tags-comments-dev-\')]" (docs/runbooks.md, "Redeploying a destroyed stage").',
    ]);
  });

  it("a stage that adopted a table is told the table was never the stack's", () => {
    expect(
      whatItDoes('destroy', passed(['-c', 'stage=prod', '-c', 'tableName=tfc-tags-comments-prod-restored-1']))[1],
    ).toBe(
      'destroy:   the table tfc-tags-comments-prod-restored-1, which this stage adopted (tableName): the stack never owned it; a deploy with the same tableName uses it again.',
    );
  });

  it('is what the template retains: DeletionPolicy Retain on exactly those resources', async () => {
    const template = await templateOf();
    const retained = Object.entries(
      template.toJSON().Resources as Record<string, { Type: string; DeletionPolicy?: string }>,
    ).filter(([, resource]) => resource.DeletionPolicy === 'Retain');
    expect(retained.map(([, resource]) => resource.Type).sort()).toEqual(
      RETAINED_ON_DESTROY.map((kept) => kept.type).sort(),
    );
    // The log group kept is the access log's: the functions' own logs go with the stack.
    expect(retained.filter(([, resource]) => resource.Type === 'AWS::Logs::LogGroup').map(([id]) => id)).toEqual([
      expect.stringMatching(/^GatewayAccessLogs/),
    ]);
  }, 120_000);

  it('deploy names the bootstrap to run if the account and region need it', () => {
    expect(whatItDoes('deploy', passed(['-c', 'stage=dev']))).toEqual([
      'deploy: stage dev (stack tfc-tags-comments-dev, eu-west-1), credentials from environment (AWS_ACCESS_KEY_ID). Synthesizing (about 20 s), then CloudFormation: a first deploy takes several minutes, most of them the CloudFront distribution.',
      'deploy: if CDK says the environment is not bootstrapped (a first deploy to this account and region), run once: npx cdk bootstrap aws://<account>/eu-west-1',
    ]);
  });
});

describe('a multi-Region stage', () => {
  const env = { AWS_ACCESS_KEY_ID: 'A', AWS_SECRET_ACCESS_KEY: 'B', AWS_REGION: 'eu-west-1' };
  const settings = [
    '-c',
    'stage=prod',
    '-c',
    'regions=us-east-1,us-east-2',
    '-c',
    'witnessRegion=us-west-2',
    '-c',
    'domainName=tfe.example.com',
    '-c',
    'hostedZoneId=Z0123456789ABCDEFGHIJ',
    '-c',
    'hostedZoneName=example.com',
  ];
  const check = (args: string[]) => preflight({ args, env, home: emptyHome(), cdkContext: cdkJson.context });

  it('asks for --all, in one line, since it is several stacks', () => {
    expect(check(settings).problems).toEqual([
      {
        what: "the multi-Region stage prod is 3 stacks (the table's, then one per Region)",
        fix: "add --all (CDK handles the table's stack first)",
      },
    ]);
    expect(check([...settings, '--all']).problems).toEqual([]);
    expect(check([...settings, 'tfc-tags-comments-prod-table']).problems).toEqual([]);
  });

  it('refuses its settings as the synth would, before it', () => {
    expect(
      check(['-c', 'stage=prod', '-c', 'regions=us-east-1,us-east-2', '--all']).problems.map((p) => p.what),
    ).toEqual([
      'Invalid context "regions" = "us-east-1,us-east-2": 2 replica Regions: MRSC takes exactly 3 Regions, three replicas or two and witnessRegion',
    ]);
  });

  it('names its stacks and Regions, the bootstrap of each Region, and what destroy keeps', () => {
    expect(whatItDoes('deploy', check([...settings, '--all']))).toEqual([
      "deploy: multi-Region stage prod (stacks tfc-tags-comments-prod-table (us-east-1), tfc-tags-comments-prod-us-east-1, tfc-tags-comments-prod-us-east-2; each in its own Region), credentials from environment (AWS_ACCESS_KEY_ID). Synthesizing, then CloudFormation: the global table first, then each Region's API.",
      'deploy: if CDK says an environment is not bootstrapped, run once for each Region: npx cdk bootstrap aws://<account>/us-east-1; npx cdk bootstrap aws://<account>/us-east-2',
    ]);
    expect(whatItDoes('destroy', check([...settings, '--all']))[1]).toBe(
      "destroy:   the global table tfc-tags-comments-prod (every replica retained and deletion-protected) and each Region's API access log group;",
    );
  });
});

describe("the CDK CLI's telemetry", () => {
  it('is off for this project (cdk.json), so synth, deploy, diff and destroy send it nothing', async () => {
    expect(cdkJson.context['cli-telemetry']).toBe(false);
    // The endpoint points at a closed local port, should the switch ever be lost: no test reaches AWS.
    const { code, output } = await runToEnd(['node_modules/.bin/cdk', 'cli-telemetry', '--status'], {
      ...noAws(emptyHome()),
      TELEMETRY_ENDPOINT: 'http://127.0.0.1:9/metrics',
    });
    expect(code).toBe(0);
    expect(output).toContain('CLI Telemetry is disabled');
  });
});

describe('hints that match the cause', () => {
  /** Credentials that look usable offline, and every AWS call sent to a closed local port: nothing here reaches AWS. */
  const unreachableAws = (home: string) => ({
    ...noAws(home),
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
    HTTPS_PROXY: 'http://127.0.0.1:9',
    HTTP_PROXY: 'http://127.0.0.1:9',
  });

  it('npm run destroy without a terminal (CI) asks for --force before any synthesis, not CloudFormation', async () => {
    const { code, lines, seconds } = await timed(['npm', 'run', '--silent', 'destroy', '--', '-c', 'stage=dev'], {
      ...unreachableAws(emptyHome()),
      AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'x',
      AWS_REGION: 'eu-west-1',
    });
    expect(code).toBe(1);
    expect(lines).toEqual([
      'destroy: no terminal to confirm the deletion on (stdout is not a TTY, as in CI): npm run destroy -- -c stage=dev --force, once you mean it.',
    ]);
    expect(seconds).toBeLessThan(SOONER_THAN_A_SYNTHESIS);
  });

  it('credentials CDK cannot resolve are named as such, not as a missing bootstrap', async () => {
    const home = emptyHome();
    mkdirSync(join(home, '.aws'));
    // Found offline (a credential_process), refused when CDK runs it.
    writeFileSync(
      join(home, '.aws', 'config'),
      '[profile broken]\nregion = eu-west-1\ncredential_process = /bin/false\n',
    );
    const { code, lines } = await timed(['npm', 'run', '--silent', 'deploy', '--', '-c', 'stage=dev'], {
      ...unreachableAws(home),
      AWS_PROFILE: 'broken',
    });
    expect(code).toBe(1);
    expect(lines.at(-1)).toBe(
      'deploy: cdk deploy failed: CDK could not use the credentials from profile broken (credential_process): aws sts get-caller-identity should answer with them (aws sso login, or fresh keys), then run it again.',
    );
    // One hint after the failure, the credentials' (it was "Not bootstrapped? npx cdk bootstrap …" whatever the cause).
    expect(lines.filter((line) => line.startsWith('deploy: cdk deploy failed'))).toHaveLength(1);
  }, 180_000);

  it('each cause the CDK CLI prints gets its own hint', () => {
    const check = preflight({
      args: ['-c', 'stage=dev'],
      env: { AWS_ACCESS_KEY_ID: 'A', AWS_SECRET_ACCESS_KEY: 'B', AWS_REGION: 'eu-west-1' },
      home: emptyHome(),
      cdkContext: cdkJson.context,
    });
    const tty =
      'Destroying stacks is an irreversible action, but terminal (TTY) is not attached so we are unable to get a confirmation from the user';
    expect(failureHint('destroy', tty, check)).toBe(
      'destroy: cdk destroy failed: it asks before deleting and there is no terminal to ask on: npm run destroy -- -c stage=dev --force, once you mean it.',
    );
    expect(
      failureHint(
        'deploy',
        '"--require-approval" is enabled and stack includes security-sensitive updates, but terminal (TTY) is not attached so we are unable to get a confirmation from the user',
        check,
      ),
    ).toMatch(
      /no terminal to ask on: review them \(npm run diff -- -c stage=dev\), then npm run deploy -- -c stage=dev --require-approval never\.$/,
    );
    expect(
      failureHint(
        'deploy',
        'Need to perform AWS calls for account 123456789012, but no credentials have been configured',
        check,
      ),
    ).toMatch(/CDK could not use the credentials from environment/);
    expect(
      failureHint(
        'deploy',
        "SSM parameter /cdk-bootstrap/hnb659fds/version not found in aws://123456789012/eu-west-1. Has the environment been bootstrapped? Please run 'cdk bootstrap'",
        check,
      ),
    ).toBe(
      'deploy: cdk deploy failed: the account and region are not bootstrapped for CDK: npx cdk bootstrap aws://<account>/eu-west-1, once.',
    );
    expect(
      failureHint(
        'destroy',
        'tfc-tags-comments-dev: destroy failed Error: The stack named tfc-tags-comments-dev is in a failed state',
        check,
      ),
    ).toBe(
      'destroy: cdk destroy failed: aws cloudformation describe-stack-events --stack-name tfc-tags-comments-dev says why.',
    );
  });
});
