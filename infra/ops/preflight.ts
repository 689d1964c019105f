import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { APP_NAME } from '#shared/config';
import { ConfigError, DEFAULT_STAGE, parseStageConfig, type StageConfig } from '#infra/cdk/config';

/**
 * What `npm run deploy`, `diff` and `destroy` check before the CDK CLI synthesizes anything (slow:
 * it bundles every function) and asks AWS: credentials the AWS SDK would find, a region, the
 * stage's settings. Read from the environment and the files the SDK reads (~/.aws/config,
 * ~/.aws/credentials, the SSO token cache); nothing here calls AWS. Each problem is one line: what
 * is missing and what to do.
 */
export const COMMANDS = ['deploy', 'diff', 'destroy'] as const;
export type Command = (typeof COMMANDS)[number];

/** What `cdk destroy` leaves in the account: the template's resources with DeletionPolicy Retain (test/infra/deploy-preflight.test.ts checks it). */
export const RETAINED_ON_DESTROY = [
  {
    type: 'AWS::DynamoDB::GlobalTable',
    what: 'its DynamoDB table (tokens, reserved tag keys, runs, comments: retained and deletion-protected)',
  },
  { type: 'AWS::Logs::LogGroup', what: 'the API access log group' },
] as const;

export interface Problem {
  what: string;
  fix: string;
}

export interface Credentials {
  /** Where the SDK will take them from, for the one line the command prints. */
  source: string;
  /** The profile in use, when credentials come from one. */
  profile?: string;
}

export interface Preflight {
  problems: Problem[];
  credentials?: Credentials;
  region?: string;
  stage: string;
  /** Whether the stage was named (`-c stage=…` or STAGE) rather than defaulted. */
  stageNamed: boolean;
  config?: StageConfig;
  stackName: string;
}

export interface PreflightInput {
  /** The arguments after `npm run deploy --` (passed on to the CDK CLI). */
  args: string[];
  env: NodeJS.ProcessEnv;
  home?: string;
  /** cdk.json's `context`. */
  cdkContext: Record<string, unknown>;
  now?: Date;
}

/** `-c key=value` and `--context key=value` (also `--context=key=value`), as the CDK CLI reads them; `--profile`. */
export function contextArgs(args: string[]): { context: Record<string, string>; profile?: string } {
  const context: Record<string, string> = {};
  let profile: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    let pair: string | undefined;
    if (arg === '-c' || arg === '--context') pair = args[++i];
    else if (arg.startsWith('--context=')) pair = arg.slice('--context='.length);
    else if (arg === '--profile') profile = args[++i];
    else if (arg.startsWith('--profile=')) profile = arg.slice('--profile='.length);
    if (pair?.includes('=')) context[pair.slice(0, pair.indexOf('='))] = pair.slice(pair.indexOf('=') + 1);
  }
  return { context, ...(profile ? { profile } : {}) };
}

export function preflight(input: PreflightInput): Preflight {
  const { env } = input;
  const home = input.home ?? homedir();
  const now = input.now ?? new Date();
  const { context, profile: profileArg } = contextArgs(input.args);
  const problems: Problem[] = [];

  const namedStage = context.stage ?? env.STAGE;
  const stage = namedStage ?? DEFAULT_STAGE;
  let config: StageConfig | undefined;
  try {
    const stages = input.cdkContext.stages as Record<string, Record<string, unknown>> | undefined;
    config = parseStageConfig(stage, (key) => context[key] ?? input.cdkContext[key] ?? stages?.[stage]?.[key]);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push({ what: error.message, fix: 'correct it in -c or in cdk.json' });
  }

  // A multi-Region stage is several stacks (infra/cdk/regions.ts): the CDK CLI wants --all, or their names.
  if (
    config?.multiRegion &&
    !input.args.includes('--all') &&
    !input.args.some((arg) => arg.startsWith(`${APP_NAME}-${stage}-`))
  ) {
    problems.push({
      what: `the multi-Region stage ${stage} is ${config.multiRegion.regions.length + 1} stacks (the table's, then one per Region)`,
      fix: "add --all (CDK handles the table's stack first)",
    });
  }

  const setup = awsSetup({ env, home, now, ...(profileArg ? { profile: profileArg } : {}) });
  const { credentials, region, problems: awsProblems } = setup;
  problems.push(...awsProblems);
  const regionWrong = regionProblem(
    setup,
    'export AWS_REGION=<region>, e.g. eu-west-1 (else the CDK CLI would pick us-east-1 on its own)',
  );
  if (regionWrong) problems.push(regionWrong);
  return {
    problems,
    ...(credentials ? { credentials } : {}),
    ...(region && !regionWrong ? { region } : {}),
    stage,
    stageNamed: namedStage !== undefined,
    ...(config ? { config } : {}),
    stackName: `${APP_NAME}-${stage}`,
  };
}

export const NO_REGION = 'no AWS region (AWS_REGION, AWS_DEFAULT_REGION, or region in the profile)';

/**
 * An AWS region's name: `eu-west-1`, `us-gov-west-1`, `cn-northwest-1`, `us-isob-east-1`,
 * `eusc-de-east-1`. An availability zone is a region and a letter (`eu-west-1a`), or a Local Zone's
 * (`us-west-2-lax-1a`).
 */
const REGION = /^[a-z]{2,4}(?:-[a-z]+)+-\d{1,2}$/;
const ZONE = /^([a-z]{2,4}(?:-[a-z]+)+-\d{1,2})(?:-[a-z]+-\d+)?[a-z]$/;

/**
 * What is wrong with a region's spelling, and the region it probably means: the SDK would refuse
 * `eu_west_1` or `"eu-west-1 "` with a stack trace ("not a valid hostname component"), and try
 * `eu-west-1a` as a region no endpoint answers for.
 */
export function regionShapeFault(region: string): { why: string; meant?: string } | undefined {
  if (REGION.test(region)) return undefined;
  const cleaned = region
    .trim()
    .toLowerCase()
    .replace(/[_\s]+/g, '-');
  const zone = ZONE.exec(cleaned);
  if (zone) return { why: 'an availability zone, not a region', meant: zone[1]! };
  const meant = REGION.test(cleaned) ? cleaned : undefined;
  const why =
    region.trim() !== region
      ? 'it has a space around it'
      : /\s/.test(region)
        ? 'it has a space in it'
        : 'not a region name (like eu-west-1)';
  return { why, ...(meant ? { meant } : {}) };
}

/**
 * The region's problem, for the deploy's pre-flight and the operator CLI alike: none (undefined),
 * none at all (`missingFix` says what to do, in the caller's words), or a name that is not a
 * region's, naming where it was set and, where it can tell, the region meant.
 */
export function regionProblem(setup: AwsSetup, missingFix: string): Problem | undefined {
  const { region, regionFrom } = setup;
  if (!region) return { what: NO_REGION, fix: missingFix };
  const fault = regionShapeFault(region);
  if (!fault) return undefined;
  const fixed = fault.meant ?? '<region>, e.g. eu-west-1';
  const variable = regionFrom === 'AWS_DEFAULT_REGION' ? 'AWS_DEFAULT_REGION' : 'AWS_REGION';
  return {
    what: `${regionFrom ?? 'the region'} is ${JSON.stringify(region)}: ${fault.why}`,
    fix: regionFrom?.startsWith('region of')
      ? `correct it there (region = ${fixed}), or export AWS_REGION=${fixed}`
      : `export ${variable}=${fixed}`,
  };
}

/** What awsSetup found: where the SDK's credentials come from, the region and where it was set. */
export interface AwsSetup {
  credentials?: Credentials;
  region?: string;
  /** `AWS_REGION`, `AWS_DEFAULT_REGION`, or `region of profile NAME in FILE`. */
  regionFrom?: string;
  problems: Problem[];
}

/**
 * The credentials and the region the AWS SDK would find, read offline, with what is wrong with the
 * credentials (the region is regionProblem's to judge: CDK and the SDK each do without one differently).
 * Also the operator CLI's (infra/admin/aws.ts), before and after it reaches a deployed table.
 */
export function awsSetup(input: { env: NodeJS.ProcessEnv; home?: string; now?: Date; profile?: string }): AwsSetup {
  const { env, profile } = input;
  const home = input.home ?? homedir();
  const problems: Problem[] = [];
  const files = awsFiles(env, home);
  const credentials = findCredentials(env, files, profile, home, input.now ?? new Date(), problems);
  const profileName = credentials?.profile ?? profile ?? env.AWS_PROFILE ?? 'default';
  const [region, regionFrom] = env.AWS_REGION
    ? [env.AWS_REGION, 'AWS_REGION']
    : env.AWS_DEFAULT_REGION
      ? [env.AWS_DEFAULT_REGION, 'AWS_DEFAULT_REGION']
      : [files.profileSetting(profileName, 'region'), `region of profile ${profileName} in ${files.configPath}`];
  return { ...(credentials ? { credentials } : {}), ...(region ? { region, regionFrom } : {}), problems };
}

/** The SDK's order (AWS SDK for JavaScript v3, defaultProvider): a named profile wins over the environment's keys. */
function findCredentials(
  env: NodeJS.ProcessEnv,
  files: AwsFiles,
  profileArg: string | undefined,
  home: string,
  now: Date,
  problems: Problem[],
): Credentials | undefined {
  const named = profileArg ?? env.AWS_PROFILE;
  if (!named) {
    if (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY)
      return { source: `environment (AWS_ACCESS_KEY_ID${env.AWS_SESSION_TOKEN ? ', with a session token' : ''})` };
    if (env.AWS_ACCESS_KEY_ID || env.AWS_SECRET_ACCESS_KEY) {
      problems.push({
        what: `${env.AWS_ACCESS_KEY_ID ? 'AWS_ACCESS_KEY_ID' : 'AWS_SECRET_ACCESS_KEY'} is set without ${env.AWS_ACCESS_KEY_ID ? 'AWS_SECRET_ACCESS_KEY' : 'AWS_ACCESS_KEY_ID'}`,
        fix: 'set both, or unset it and use a profile (export AWS_PROFILE=<profile>)',
      });
      return undefined;
    }
    if (env.AWS_WEB_IDENTITY_TOKEN_FILE && env.AWS_ROLE_ARN) {
      if (existsSync(env.AWS_WEB_IDENTITY_TOKEN_FILE))
        return { source: `web identity (AWS_ROLE_ARN ${env.AWS_ROLE_ARN})` };
      problems.push({
        what: `AWS_WEB_IDENTITY_TOKEN_FILE ${env.AWS_WEB_IDENTITY_TOKEN_FILE} does not exist`,
        fix: 'point it at the identity token, or unset it',
      });
      return undefined;
    }
    if (env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI || env.AWS_CONTAINER_CREDENTIALS_FULL_URI)
      return { source: "the container's role (ECS, CodeBuild)" };
  }
  const profile = named ?? 'default';
  const section = files.profile(profile);
  const keysInCredentials = files.credentialsSection(profile);
  if (keysInCredentials?.aws_access_key_id) return { source: `profile ${profile} (${files.credentialsPath})`, profile };
  if (section) {
    const ssoSession = section.sso_session;
    const startUrl = ssoSession ? files.section(`sso-session ${ssoSession}`)?.sso_start_url : section.sso_start_url;
    if (ssoSession || section.sso_start_url) {
      const expiry = ssoExpiry(home, ssoSession ?? startUrl ?? '', now);
      if (expiry === 'none' || expiry === 'expired') {
        problems.push({
          what: `the AWS SSO session of profile ${profile} ${expiry === 'none' ? 'has no login on this machine' : 'has expired'}`,
          fix: `aws sso login --profile ${profile}`,
        });
        return undefined;
      }
      return {
        source: `profile ${profile} (IAM Identity Center, logged in until ${expiry.toISOString().slice(0, 16).replace('T', ' ')} UTC)`,
        profile,
      };
    }
    if (section.aws_access_key_id) return { source: `profile ${profile} (${files.configPath})`, profile };
    if (section.credential_process) return { source: `profile ${profile} (credential_process)`, profile };
    if (section.role_arn && (section.source_profile || section.credential_source))
      return { source: `profile ${profile} (assumes ${section.role_arn})`, profile };
    if (section.role_arn && section.web_identity_token_file)
      return { source: `profile ${profile} (web identity, assumes ${section.role_arn})`, profile };
    if (section.login_session) return { source: `profile ${profile} (aws login)`, profile };
  }
  if (named) {
    problems.push({
      what: `AWS profile ${profile} ${section ? 'has no credentials' : `is in neither ${files.configPath} nor ${files.credentialsPath}`}`,
      fix: `aws configure sso --profile ${profile} (or aws configure --profile ${profile})`,
    });
  } else {
    problems.push({
      what: 'no AWS credentials (no AWS_PROFILE, no AWS_ACCESS_KEY_ID, no default profile in ~/.aws)',
      fix: 'aws configure sso, then export AWS_PROFILE=<that profile> (or export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)',
    });
  }
  return undefined;
}

/**
 * When the SSO token the AWS CLI cached for a session (or a legacy start URL) expires: its cache file
 * is ~/.aws/sso/cache/<sha1 of the session name or start URL>.json. An expired access token with a
 * refresh token whose client registration is still valid is refreshed by the SDK on its own.
 */
function ssoExpiry(home: string, key: string, now: Date): Date | 'none' | 'expired' {
  const file = join(home, '.aws', 'sso', 'cache', `${createHash('sha1').update(key).digest('hex')}.json`);
  let token: { expiresAt?: string; refreshToken?: string; registrationExpiresAt?: string };
  try {
    token = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return 'none';
  }
  const expires = new Date(token.expiresAt ?? 0);
  if (expires > now) return expires;
  if (token.refreshToken && token.registrationExpiresAt && new Date(token.registrationExpiresAt) > now)
    return new Date(token.registrationExpiresAt);
  return 'expired';
}

interface AwsFiles {
  configPath: string;
  credentialsPath: string;
  section(name: string): Record<string, string> | undefined;
  /** `[default]` or `[profile NAME]` of the config file. */
  profile(name: string): Record<string, string> | undefined;
  credentialsSection(name: string): Record<string, string> | undefined;
  profileSetting(name: string, key: string): string | undefined;
}

function awsFiles(env: NodeJS.ProcessEnv, home: string): AwsFiles {
  const configPath = env.AWS_CONFIG_FILE ?? join(home, '.aws', 'config');
  const credentialsPath = env.AWS_SHARED_CREDENTIALS_FILE ?? join(home, '.aws', 'credentials');
  const config = readIni(configPath);
  const credentials = readIni(credentialsPath);
  const profile = (name: string) =>
    config[name === 'default' ? 'default' : `profile ${name}`] ??
    (name === 'default' ? config['profile default'] : undefined);
  return {
    configPath: configPath.replace(home, '~'),
    credentialsPath: credentialsPath.replace(home, '~'),
    section: (name) => config[name],
    profile,
    credentialsSection: (name) => credentials[name],
    profileSetting: (name, key) => profile(name)?.[key] ?? credentials[name]?.[key],
  };
}

/** The INI dialect of the AWS config files: `[section]`, `key = value`, `#`/`;` comments; nested blocks are skipped. */
function readIni(path: string): Record<string, Record<string, string>> {
  const sections: Record<string, Record<string, string>> = {};
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return sections;
  }
  let current: Record<string, string> | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/^\s*[#;].*$/, '');
    const header = /^\s*\[\s*([^\]]+?)\s*\]\s*$/.exec(line);
    if (header) {
      current = sections[header[1]!.replace(/\s+/g, ' ')] ??= {};
      continue;
    }
    if (/^\s/.test(line)) continue; // a nested value (s3 = …) belongs to the key above
    const pair = /^([^=]+?)\s*=\s*(.*?)\s*$/.exec(line);
    if (pair && current) current[pair[1]!.trim()] = pair[2]!;
  }
  return sections;
}

/**
 * `cdk destroy` asks before it deletes, and the CDK CLI refuses to ask without a terminal on its
 * stdout (as in CI): that is known now, before a synthesis, and `--force` is the answer.
 */
export function confirmationProblem(command: Command, args: string[], terminal: boolean): Problem | undefined {
  if (command !== 'destroy' || terminal || args.includes('--force') || args.includes('-f')) return undefined;
  const { context } = contextArgs(args);
  return {
    what: 'no terminal to confirm the deletion on (stdout is not a TTY, as in CI)',
    fix: `npm run destroy -- -c stage=${context.stage ?? '<stage>'} --force, once you mean it`,
  };
}

/**
 * What to do after the CDK CLI failed, from the cause it printed (its output, colours removed):
 * a confirmation it could not ask for, credentials it could not use, a missing bootstrap, else
 * CloudFormation's own account of the failure.
 */
export function failureHint(command: Command, output: string, check: Preflight): string {
  const failed = `${command}: cdk ${command} failed`;
  if (/terminal \(TTY\) is not attached/.test(output)) {
    return command === 'destroy'
      ? `${failed}: it asks before deleting and there is no terminal to ask on: npm run destroy -- -c stage=${check.stage} --force, once you mean it.`
      : `${failed}: it asks to approve security-related changes and there is no terminal to ask on: review them (npm run diff -- -c stage=${check.stage}), then npm run ${command} -- -c stage=${check.stage} --require-approval never.`;
  }
  if (
    /no credentials have been configured|Could not load credentials|Unable to resolve AWS account|ExpiredToken|InvalidClientTokenId|security token included in the request is (invalid|expired)|SSO session .*(expired|invalid)/i.test(
      output,
    )
  ) {
    return `${failed}: CDK could not use the credentials from ${check.credentials?.source ?? 'the environment'}: aws sts get-caller-identity should answer with them (aws sso login, or fresh keys), then run it again.`;
  }
  if (/bootstrap/i.test(output)) {
    return `${failed}: the account and region are not bootstrapped for CDK: npx cdk bootstrap aws://<account>/${check.region}, once.`;
  }
  const events = `aws cloudformation describe-stack-events --stack-name ${check.stackName} says why`;
  return command === 'deploy'
    ? `${failed}. A failed update is rolled back by CloudFormation: ${events}.`
    : `${failed}: ${events}.`;
}

/** `npm run deploy -- --help`. */
export const usage = (
  command: string,
) => `Usage: npm run ${command} -- [-c stage=NAME] [-c key=value ...] [cdk ${command} options]
Checks first, without synthesizing or calling AWS: AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID, the default
profile, an SSO login), a region, the stage's settings; then runs \`cdk ${command}\` with the same arguments.
${command === 'destroy' ? "The stage must be named (-c stage=NAME or STAGE): destroy deletes that stage's stack.\n" : ''}The CDK CLI's own options: npx cdk ${command} --help`;

/** What the command says it will do once the check passed: one line per fact, before the CDK CLI starts. */
export function whatItDoes(command: Command, check: Preflight): string[] {
  const multiRegion = check.config?.multiRegion;
  if (multiRegion) return whatMultiRegionDoes(command, check, multiRegion.regions);
  const where = `stage ${check.stage} (stack ${check.stackName}, ${check.region})`;
  const from = `credentials from ${check.credentials!.source}`;
  if (command === 'diff')
    return [`diff: ${where}, ${from}. Synthesizing (about 20 s), then comparing with the deployed stack.`];
  const bootstrap = `if CDK says the environment is not bootstrapped (a first deploy to this account and region), run once: npx cdk bootstrap aws://<account>/${check.region}`;
  if (command === 'deploy') {
    return [
      `deploy: ${where}, ${from}. Synthesizing (about 20 s), then CloudFormation: a first deploy takes several minutes, most of them the CloudFront distribution.`,
      `deploy: ${bootstrap}`,
    ];
  }
  const adopted = check.config?.tableName;
  return [
    `destroy: ${where}, ${from}. CloudFormation deletes the stack, and keeps:`,
    ...(adopted
      ? [
          `destroy:   the table ${adopted}, which this stage adopted (tableName): the stack never owned it; a deploy with the same tableName uses it again.`,
          `destroy:   ${RETAINED_ON_DESTROY[1].what}.`,
        ]
      : [
          ...RETAINED_ON_DESTROY.map((kept) => `destroy:   ${kept.what};`),
          `destroy: a later deploy adopts the table instead of creating an empty one: npm run deploy -- -c stage=${check.stage} -c tableName=<table>`,
          `destroy:   the table's name: aws dynamodb list-tables --query "TableNames[?starts_with(@, '${check.stackName}-')]" (docs/runbooks.md, "Redeploying a destroyed stage").`,
        ]),
  ];
}

/** The same for a multi-Region stage: its stacks, each in its own Region whatever the CLI's; what destroy keeps. */
function whatMultiRegionDoes(command: Command, check: Preflight, regions: readonly string[]): string[] {
  const stacks = [
    `${check.stackName}-table (${regions[0]})`,
    ...regions.map((region) => `${check.stackName}-${region}`),
  ];
  const where = `multi-Region stage ${check.stage} (stacks ${stacks.join(', ')}; each in its own Region)`;
  const from = `credentials from ${check.credentials!.source}`;
  if (command === 'diff') return [`diff: ${where}, ${from}. Synthesizing, then comparing with the deployed stacks.`];
  if (command === 'deploy') {
    return [
      `deploy: ${where}, ${from}. Synthesizing, then CloudFormation: the global table first, then each Region's API.`,
      `deploy: if CDK says an environment is not bootstrapped, run once for each Region: ${regions.map((region) => `npx cdk bootstrap aws://<account>/${region}`).join('; ')}`,
    ];
  }
  return [
    `destroy: ${where}, ${from}. CloudFormation deletes the stacks, and keeps:`,
    `destroy:   the global table ${check.stackName} (every replica retained and deletion-protected) and each Region's API access log group;`,
    'destroy: deploying the same stage again needs that table gone (docs/deploying.md, "Removing a multi-Region stage").',
  ];
}
