import { APP_NAME } from '#shared/config';
import { awsSetup, NO_REGION } from '#infra/ops/preflight';

/**
 * The operator CLI against a deployed table (TABLE_NAME): what the AWS SDK needs and could not
 * find, or what DynamoDB refused, in one line each with what to do, never the SDK's stack trace.
 * The credentials and the region are read as `npm run deploy` reads them (infra/ops/preflight.ts).
 */
export class AwsRefused extends Error {}

const TABLE_OUTPUT = `aws cloudformation describe-stacks --stack-name ${APP_NAME}-<stage> --query "Stacks[0].Outputs[?OutputKey=='TableName'].OutputValue" --output text`;

/** The region the SDK will use; without one the SDK cannot even start ("Region is missing"), so it is refused here. */
export function deployedRegion(env: NodeJS.ProcessEnv): string {
  const { region } = awsSetup({ env });
  if (!region) throw new AwsRefused(`${NO_REGION}: export AWS_REGION=<the stage's region> (a table lives in one region)`);
  return region;
}

/**
 * The lines for an AWS error met on the table, or undefined for any other error. Credentials are
 * not refused beforehand: the SDK also finds some this check cannot see (an EC2 instance's role).
 */
export function awsFailureLines(error: unknown, table: string, env: NodeJS.ProcessEnv): string[] | undefined {
  const { name, message } = (error ?? {}) as { name?: string; message?: string };
  const region = awsSetup({ env }).region ?? 'no region';
  const where = `${region}${env.AWS_ENDPOINT_URL_DYNAMODB ? ` at ${env.AWS_ENDPOINT_URL_DYNAMODB}` : ''}`;
  switch (name) {
    case 'CredentialsProviderError': {
      const { problems } = awsSetup({ env });
      if (problems.length > 0) return problems.map(({ what, fix }) => `${what}: ${fix}.`);
      return [`the AWS SDK could not load credentials (${message}): check AWS_PROFILE, or log in again (aws sso login).`];
    }
    case 'ResourceNotFoundException':
      return [`no table ${table} in ${where} (TABLE_NAME): set TABLE_NAME to the stage's TableName output (${TABLE_OUTPUT}), and AWS_REGION to the stage's region.`];
    case 'UnrecognizedClientException':
    case 'InvalidSignatureException':
    case 'ExpiredTokenException':
      return [`DynamoDB in ${where} did not accept the credentials (${name}: ${message}): renew them (aws sso login, or new keys) or choose another AWS_PROFILE.`];
    case 'AccessDeniedException':
      return [`DynamoDB in ${where} refused table ${table} to these credentials (${message}): use a role that may read and write the stage's table.`];
    default:
      // Any other answer of an AWS service, still one line.
      return (error as { $metadata?: unknown } | null)?.$metadata ? [`DynamoDB in ${where} answered ${name}: ${message}`] : undefined;
  }
}
