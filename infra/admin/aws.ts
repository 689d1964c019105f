import { APP_NAME } from '#shared/config';
import { awsSetup, regionProblem } from '#infra/ops/preflight';

/**
 * The operator CLI against a deployed table (TABLE_NAME): what the AWS SDK needs and could not
 * find, or what DynamoDB refused, in one line each with what to do, never the SDK's stack trace.
 * The credentials and the region are read as `npm run deploy` reads them (infra/ops/preflight.ts).
 */
export class AwsRefused extends Error {
  /** One line each, as printed after `admin: `. */
  readonly lines: string[];
  constructor(lines: string[]) {
    super(lines.join('\n'));
    this.lines = lines;
  }
}

const TABLE_OUTPUT = `aws cloudformation describe-stacks --stack-name ${APP_NAME}-<stage> --query "Stacks[0].Outputs[?OutputKey=='TableName'].OutputValue" --output text`;

/**
 * The region the SDK will use, checked as `npm run deploy` checks it (infra/ops/preflight.ts):
 * without one the SDK cannot even start ("Region is missing"), and with a name that is not a
 * region's (`eu_west_1`, `"eu-west-1 "`, `eu-west-1a`) it throws a stack trace or asks a host that
 * does not exist, so both are refused here, before the store is opened. What is wrong with the
 * credentials is said with it (a profile that does not exist, say): they are the next thing to fix.
 */
export function deployedRegion(env: NodeJS.ProcessEnv): string {
  const setup = awsSetup({ env });
  const problem = regionProblem(setup, "export AWS_REGION=<the stage's region> (a table lives in one region)");
  if (problem)
    throw new AwsRefused([
      ...setup.problems.map(({ what, fix }) => `${what}: ${fix}.`),
      `${problem.what}: ${problem.fix}`,
    ]);
  return setup.region!;
}

/**
 * The error's code when nothing answered: a name DNS could not resolve (ENOTFOUND, EAI_AGAIN), a
 * refused or reset connection, a timeout, a proxy's or TLS failure. An AWS answer has an HTTP status.
 */
function unreachedCode(error: unknown): string | undefined {
  const {
    code,
    name,
    $metadata: metadata,
  } = (error ?? {}) as { code?: unknown; name?: unknown; $metadata?: { httpStatusCode?: number } };
  if (metadata?.httpStatusCode !== undefined) return undefined;
  if (typeof code === 'string' && code !== '') return code;
  return name === 'TimeoutError' || name === 'RequestTimeout' ? name : undefined;
}

/**
 * The lines for an AWS error met on the table, or undefined for any other error. Credentials are
 * not refused beforehand: the SDK also finds some this check cannot see (an EC2 instance's role).
 */
export function awsFailureLines(error: unknown, table: string, env: NodeJS.ProcessEnv): string[] | undefined {
  const { name, message } = (error ?? {}) as { name?: string; message?: string };
  const region = awsSetup({ env }).region ?? 'no region';
  const where = `${region}${env.AWS_ENDPOINT_URL_DYNAMODB ? ` at ${env.AWS_ENDPOINT_URL_DYNAMODB}` : ''}`;
  const unreached = unreachedCode(error);
  if (unreached) {
    const endpoint = env.AWS_ENDPOINT_URL_DYNAMODB || env.AWS_ENDPOINT_URL;
    const [host, variable] = endpoint
      ? [
          URL.canParse(endpoint) ? new URL(endpoint).host : endpoint,
          env.AWS_ENDPOINT_URL_DYNAMODB ? 'AWS_ENDPOINT_URL_DYNAMODB' : 'AWS_ENDPOINT_URL',
        ]
      : [`dynamodb.${region}.amazonaws.com`, 'AWS_REGION'];
    return [`could not reach ${host} (${unreached}): check ${variable} and the network or proxy`];
  }
  switch (name) {
    case 'CredentialsProviderError': {
      const { problems } = awsSetup({ env });
      if (problems.length > 0) return problems.map(({ what, fix }) => `${what}: ${fix}.`);
      return [
        `the AWS SDK could not load credentials (${message}): check AWS_PROFILE, or log in again (aws sso login).`,
      ];
    }
    case 'ResourceNotFoundException':
      return [
        `no table ${table} in ${where} (TABLE_NAME): set TABLE_NAME to the stage's TableName output (${TABLE_OUTPUT}), and AWS_REGION to the stage's region.`,
      ];
    case 'UnrecognizedClientException':
    case 'InvalidSignatureException':
    case 'ExpiredTokenException':
      return [
        `DynamoDB in ${where} did not accept the credentials (${name}: ${message}): renew them (aws sso login, or new keys) or choose another AWS_PROFILE.`,
      ];
    case 'AccessDeniedException':
      return [
        `DynamoDB in ${where} refused table ${table} to these credentials (${message}): use a role that may read and write the stage's table.`,
      ];
    default:
      // Any other answer of an AWS service, still one line.
      return (error as { $metadata?: unknown } | null)?.$metadata
        ? [`DynamoDB in ${where} answered ${name}: ${message}`]
        : undefined;
  }
}
