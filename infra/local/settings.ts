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

export const SEED_ORGANIZATION = 'example-org';
/** The seed token's secret, in the data folder, so that every npm start can print it (infra/local/seed.ts). */
export const SEED_TOKEN_FILE = 'seed-token';

/**
 * The project's own scratch folder (git-ignored): temporary data folders of tests, benches and load
 * runs, and DynamoDB Local's registry of running instances, instead of the system temp directory.
 */
export const PROJECT_TMP = fileURLToPath(new URL('../../.tmp/', import.meta.url));
