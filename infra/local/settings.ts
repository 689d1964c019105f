import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The variables `npm start` and the admin CLI share, so both reach the same local store. */
export const localSettings = () => ({
  port: Number(process.env.PORT || 3000),
  ddbPort: Number(process.env.DDB_PORT || 8000),
  /** The local OpenID issuer's port (infra/local/oidc-issuer.ts): its address is a trust's issuer, so it stays put. */
  issuerPort: Number(process.env.ISSUER_PORT || 3001),
  dataDir: resolve(process.env.DATA_DIR || '.data'),
  tableName: process.env.TABLE_NAME || 'tfc-tags-comments-local',
});

/** The variable that sets the share (0..1) of the functions' writes the local IAM proxy refuses with ReplicatedWriteConflictException (infra/local/aws/mrsc.ts). */
export const REPLICATED_WRITE_CONFLICT_RATE_ENV = 'LOCAL_REPLICATED_WRITE_CONFLICT_RATE';

/** LOCAL_REPLICATED_WRITE_CONFLICT_RATE as a number, 0 when unset or empty; anything but a number from 0 to 1 throws, naming it. */
export function replicatedWriteConflictRate(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[REPLICATED_WRITE_CONFLICT_RATE_ENV]?.trim();
  if (!raw) return 0;
  const rate = Number(raw);
  if (!Number.isFinite(rate) || rate < 0 || rate > 1) {
    throw new Error(
      `${REPLICATED_WRITE_CONFLICT_RATE_ENV}=${raw} is not a rate: give a number from 0 (off) to 1 (every write refused), e.g. 0.05`,
    );
  }
  return rate;
}

/** The variable that runs the template's schedules (the sweeper's, every 15 minutes) every N seconds instead (infra/local/aws/eventbridge.ts). */
export const SCHEDULE_SECONDS_ENV = 'LOCAL_SCHEDULE_SECONDS';

/** LOCAL_SCHEDULE_SECONDS in ms, undefined when unset or empty (each rule keeps its rate); anything but a positive number throws, naming it. */
export function scheduleEveryMs(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env[SCHEDULE_SECONDS_ENV]?.trim();
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new Error(
      `${SCHEDULE_SECONDS_ENV}=${raw} is not a period: give a number of seconds above 0, e.g. 10 to run the sweeper every 10 s`,
    );
  }
  return Math.max(1, Math.round(seconds * 1000));
}

/**
 * The variable that sets the function instances' niceness (infra/local/aws/lambda.ts). On AWS an
 * instance has its own CPU share, and DynamoDB and API Gateway answer from capacity of their own;
 * here they all share this machine's cores. Instances run niced (default 10), so DynamoDB Local
 * and the emulator answer first, as AWS's services do, however many instances are starting.
 */
export const LAMBDA_NICENESS_ENV = 'LOCAL_LAMBDA_NICENESS';
export const DEFAULT_LAMBDA_NICENESS = 10;

/**
 * LOCAL_LAMBDA_NICENESS as a number (added to the emulator's own niceness, as nice(1) adds), 10
 * when unset or empty; anything but a whole number from 0 to 19 throws, naming it.
 */
export function lambdaNiceness(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[LAMBDA_NICENESS_ENV]?.trim();
  if (!raw) return DEFAULT_LAMBDA_NICENESS;
  const niceness = Number(raw);
  if (!Number.isInteger(niceness) || niceness < 0 || niceness > 19) {
    throw new Error(
      `${LAMBDA_NICENESS_ENV}=${raw} is not a niceness: give a whole number from 0 (the share of DynamoDB Local and the emulator) to 19 (the least)`,
    );
  }
  return niceness;
}

export const SEED_ORGANIZATION = 'example-org';
/** The seed token's secret, in the data folder, so that every npm start can print it (infra/local/seed.ts). */
export const SEED_TOKEN_FILE = 'seed-token';

/**
 * The project's own scratch folder (git-ignored): temporary data folders of tests, benches and load
 * runs, and DynamoDB Local's registry of running instances, instead of the system temp directory.
 */
export const PROJECT_TMP = fileURLToPath(new URL('../../.tmp/', import.meta.url));
