import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createToken } from '#shared/store/tokens';
import { freePort } from '../support/processes';
import { admin } from '../support/admin-cli';
import { expectWith } from '../support/expect-with';

describe('npm run admin: mistakes in the command line', () => {
  it.each<[string[], string]>([
    [['tokn', 'list'], 'admin: unknown command tokn; did you mean token list?'],
    [['tokens', 'create', '--org', 'acme'], 'admin: unknown command tokens; did you mean token create?'],
    [['token', 'lsit'], 'admin: unknown command token lsit; did you mean token list?'],
    [['token', 'frobnicate'], 'admin: unknown command token frobnicate; token has create, list, revoke'],
    [['token'], 'admin: token needs a command: create, list, revoke'],
    [['token', 'create', '--org', 'acme'], 'admin: --role is required'],
    [
      ['token', 'create', '--org', 'acme', '--rol', 'owner'],
      'admin: unknown flag --rol; did you mean --role? (this command takes --org, --role, --subject, --expires-in-days, --json)',
    ],
    [
      ['token', 'create', '--org', 'acme', '--role', 'owner', '--expires-in-days', '-3'],
      'admin: --expires-in-days must be a whole number of days, 1 or more (not -3); leave it out for a token that never expires',
    ],
    [['token', 'create', '--org', '--role', 'owner'], 'admin: --org needs a value, not the flag --role'],
    [
      ['token', 'create', '--org', 'acme', '--role', 'admin'],
      'admin: --role must be one of reader, member, owner, not admin',
    ],
    [['token', 'revoke'], 'admin: the token id is required: token revoke at-… (token list shows the ids)'],
    [['token', 'list', 'extra'], 'admin: unexpected argument extra'],
    [['trust', 'delete'], 'admin: the trust id is required: trust delete trust-… (trust list --org ORG shows the ids)'],
    [
      ['trust', 'delete', 'xyz'],
      'admin: xyz is not a trust id (trust- and 16 letters or digits): trust list --org ORG shows the ids',
    ],
    [['run', 'regster', 'run-x'], 'admin: unknown command run regster; did you mean run register?'],
    [['run', 'list'], 'admin: --org is required'],
    [
      ['notifications', 'rotate', '--org', 'acme', '--grace-hours', '-1'],
      'admin: --grace-hours must be a whole number from 0 to 720 (not -1)',
    ],
  ])(
    'npm run admin -- %j: exit 2, one line naming the mistake, before any store is opened',
    async (args, line) => {
      const env = {
        DATA_DIR: mkdtempSync(join(tmpdir(), 'tfc-admin-')),
        DDB_PORT: String(await freePort()),
        TABLE_NAME: undefined,
        AWS_ENDPOINT_URL_DYNAMODB: undefined,
      };
      const result = await admin(args, env);
      expectWith(result.code, result.output).toBe(2);
      expect(result.output.split('\n')).toContain(line);
      // No temporary DynamoDB Local was started over the data folder to find that out.
      expect(result.output).not.toContain('DynamoDB Local');
      expect(readdirSync(env.DATA_DIR)).toEqual([]);
    },
    30_000,
  );

  it.each([
    ['token', '--help'],
    ['token', 'help'],
    ['token', '-h'],
  ])(
    "npm run admin -- %s %s prints the token group's usage alone, exit 0",
    async (...args) => {
      const result = await admin(args, { TABLE_NAME: undefined, AWS_ENDPOINT_URL_DYNAMODB: undefined });
      expectWith(result.code, result.output).toBe(0);
      const lines = result.output.trim().split('\n');
      expect(lines[0]).toBe('Usage:');
      expect(lines.slice(1).map((line) => line.trim().split(' ').slice(4, 6).join(' '))).toEqual([
        'token create',
        'token list',
        'token revoke',
      ]);
    },
    30_000,
  );

  it('asks for --url with TABLE_NAME before reaching the table', async () => {
    const result = await admin(['notifications', 'show', '--org', 'acme', '--json'], {
      TABLE_NAME: 'no-such-table',
      AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:9',
    });
    expect(result.code).toBe(2);
    expect(result.output).toContain('{"error":"--url is required with TABLE_NAME: the stage\'s TfeAddress output"}');
    expect(result.output).not.toContain('admin: table no-such-table');
  });
});

describe('npm run admin against a deployed table (TABLE_NAME)', () => {
  const env = () => ({
    TABLE_NAME: process.env.TABLE_NAME,
    AWS_ENDPOINT_URL_DYNAMODB: process.env.AWS_ENDPOINT_URL_DYNAMODB,
  });

  it('lists tokens under a header, with their dates and state', async () => {
    const live = await createToken({
      subject: 'user-listed',
      grants: { 'list-org': 'reader' },
      expiresAt: '2099-03-04T05:06:07.000Z',
    });
    const listed = await admin(['token', 'list'], env());
    expectWith(listed.code, listed.output).toBe(0);
    const lines = listed.output.split('\n');
    const header = lines.find((line) => line.startsWith('TOKEN ID'))!;
    expect(header.split(/\s{2,}/)).toEqual(['TOKEN ID', 'SUBJECT', 'ROLES', 'CREATED (UTC)', 'EXPIRES (UTC)', 'STATE']);
    const row = lines.find((line) => line.startsWith(live.record.tokenId))!;
    expect(row.split(/\s{2,}/)).toEqual([
      live.record.tokenId,
      'user-listed',
      'reader@list-org',
      `${live.record.createdAt.slice(0, 10)} ${live.record.createdAt.slice(11, 16)}`,
      '2099-03-04 05:06',
      'active',
    ]);
  });

  it("revokes a token and says how to end API Gateway's cached answers for it on a deployed stage", async () => {
    const { record } = await createToken({ subject: 'user-leaked', grants: { 'leak-org': 'owner' } });
    const revoked = await admin(['token', 'revoke', record.tokenId], env());
    expectWith(revoked.code, revoked.output).toBe(0);
    expect(revoked.output).toMatch(
      new RegExp(
        `Revoked ${record.tokenId} \\(user-leaked\\) at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z: the authorizer refuses it from now on\\.`,
      ),
    );
    expect(revoked.output).toContain(
      `A deployed stage may still accept ${record.tokenId} for up to authorizerCacheTtlSeconds (60 s by default)`,
    );
    expect(revoked.output).toContain(
      '  aws apigateway flush-stage-authorizers-cache --rest-api-id <id> --stage-name <stage>\n',
    );
    expect(revoked.output).toContain(
      `  (<id>: aws apigateway get-rest-apis --query "items[?name=='tfc-tags-comments-<stage>'].id" --output text)`,
    );
    const listed = await admin(['token', 'list'], env());
    expect(listed.output).toMatch(new RegExp(`${record.tokenId} .* revoked \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d\\n`));
  });
});

describe('npm run admin against a deployed table: what the AWS SDK lacks, in one line', () => {
  /**
   * No AWS set-up of this machine: no AWS variables, empty config and credentials files, no EC2
   * instance metadata. The endpoint is always the test's DynamoDB Local: nothing here reaches AWS.
   */
  const bare = () => {
    const home = mkdtempSync(join(tmpdir(), 'tfc-admin-home-'));
    const empty = join(home, 'empty');
    writeFileSync(empty, '');
    return {
      HOME: home,
      AWS_CONFIG_FILE: empty,
      AWS_SHARED_CREDENTIALS_FILE: empty,
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_PROFILE: undefined,
      AWS_DEFAULT_PROFILE: undefined,
      AWS_REGION: undefined,
      AWS_DEFAULT_REGION: undefined,
      AWS_ACCESS_KEY_ID: undefined,
      AWS_SECRET_ACCESS_KEY: undefined,
      AWS_SESSION_TOKEN: undefined,
      AWS_WEB_IDENTITY_TOKEN_FILE: undefined,
      AWS_ROLE_ARN: undefined,
      AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: undefined,
      AWS_CONTAINER_CREDENTIALS_FULL_URI: undefined,
      AWS_ENDPOINT_URL_DYNAMODB: process.env.AWS_ENDPOINT_URL_DYNAMODB,
      TABLE_NAME: process.env.TABLE_NAME,
    };
  };
  const create = ['token', 'create', '--org', 'acme', '--role', 'owner'];
  const lines = (output: string) => output.split('\n').filter((line) => line.trim() !== '');

  it('no region: refused before the SDK starts, naming the variable (and, as npm run deploy does, the missing credentials)', async () => {
    const result = await admin(create, bare());
    expectWith(result.code, result.output).toBe(1);
    expect(lines(result.output)).toEqual([
      expect.stringMatching(/^admin: no AWS credentials \(.*\): aws configure sso, /),
      "admin: no AWS region (AWS_REGION, AWS_DEFAULT_REGION, or region in the profile): export AWS_REGION=<the stage's region> (a table lives in one region)",
    ]);
    const keyed = await admin(create, { ...bare(), AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' });
    expect(lines(keyed.output)).toEqual([expect.stringMatching(/^admin: no AWS region /)]);
  });

  it.each([
    ['eu_west_1', 'admin: AWS_REGION is "eu_west_1": not a region name (like eu-west-1): export AWS_REGION=eu-west-1'],
    ['eu-west-1 ', 'admin: AWS_REGION is "eu-west-1 ": it has a space around it: export AWS_REGION=eu-west-1'],
    [
      'eu-west-1a',
      'admin: AWS_REGION is "eu-west-1a": an availability zone, not a region: export AWS_REGION=eu-west-1',
    ],
  ])("AWS_REGION=%j: one line naming it, not the SDK's stack trace", async (region, line) => {
    const result = await admin(create, {
      ...bare(),
      AWS_REGION: region,
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    });
    expectWith(result.code, result.output).toBe(1);
    expect(lines(result.output)).toEqual([line]);
  });

  it('a profile that does not exist and no region: both, in one line each', async () => {
    const result = await admin(create, { ...bare(), AWS_PROFILE: 'nope' });
    expectWith(result.code, result.output).toBe(1);
    expect(lines(result.output)).toEqual([
      expect.stringMatching(
        /^admin: AWS profile nope is in neither \S+ nor \S+: aws configure sso --profile nope \(or aws configure --profile nope\)\.$/,
      ),
      "admin: no AWS region (AWS_REGION, AWS_DEFAULT_REGION, or region in the profile): export AWS_REGION=<the stage's region> (a table lives in one region)",
    ]);
  });

  it('an endpoint nothing answers on: it could not be reached, and what to check', async () => {
    const closed = `127.0.0.1:${await freePort()}`;
    const result = await admin(create, {
      ...bare(),
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_ENDPOINT_URL_DYNAMODB: `http://${closed}`,
    });
    expectWith(result.code, result.output).toBe(1);
    expect(lines(result.output).at(-1)).toBe(
      `admin: could not reach ${closed} (ECONNREFUSED): check AWS_ENDPOINT_URL_DYNAMODB and the network or proxy`,
    );
  });

  it('no credentials: the line npm run deploy prints, naming how to get them', async () => {
    const result = await admin(create, { ...bare(), AWS_REGION: 'eu-west-1' });
    expectWith(result.code, result.output).toBe(1);
    expect(lines(result.output)).toEqual([
      expect.stringMatching(/^admin: table \S+ \(TABLE_NAME\), region eu-west-1, endpoint http:\/\/127\.0\.0\.1:\d+$/),
      'admin: no AWS credentials (no AWS_PROFILE, no AWS_ACCESS_KEY_ID, no default profile in ~/.aws): aws configure sso, then export AWS_PROFILE=<that profile> (or export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY).',
    ]);
  });

  it('a mistyped table: one line naming the table, the region and where its name comes from', async () => {
    const result = await admin(create, {
      ...bare(),
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      TABLE_NAME: 'tfc-tags-comments-dev-Tabel',
    });
    expectWith(result.code, result.output).toBe(1);
    expect(lines(result.output)).toEqual([
      expect.stringMatching(/^admin: table tfc-tags-comments-dev-Tabel \(TABLE_NAME\), region eu-west-1, endpoint /),
      expect.stringMatching(
        /^admin: no table tfc-tags-comments-dev-Tabel in eu-west-1 at http:\/\/127\.0\.0\.1:\d+ \(TABLE_NAME\): set TABLE_NAME to the stage's TableName output \(aws cloudformation describe-stacks --stack-name tfc-tags-comments-<stage> .*\), and AWS_REGION to the stage's region\.$/,
      ),
    ]);
  });
});
