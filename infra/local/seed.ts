import { listRuns, registerNewRun } from '#shared/store/runs';
import { createToken, listTokens, type TokenRecord } from '#shared/store/tokens';
import { SEED_ORGANIZATION } from './settings';

/** What marks the seed's own token and run, whatever else the operator CLI wrote into the store. */
const SEED_SUBJECT = 'user-example';
const SEED_WORKSPACE = 'example-workspace';

export interface Seed {
  organization: string;
  /** The seed's owner token: its id always, its secret only when this start created it. */
  tokenId: string;
  token?: string;
  /** Set when the seed token exists but no longer works. */
  tokenState?: 'revoked' | 'expired';
  /** A run of the organization, registered so its comments can be tried at once. */
  runId: string;
  runCreated: boolean;
}

/**
 * Creates the seed's owner token of the example organization and its run, each unless it exists
 * (a token of the seed's subject that owns the organization; a run in the seed's workspace). The
 * token's secret exists only as a hash after its creation, so only the start that creates it can
 * print it.
 */
export async function ensureSeed(): Promise<Seed> {
  const existing = (await listTokens()).find(isSeedToken);
  const created = existing ? undefined : await createToken({ subject: SEED_SUBJECT, grants: { [SEED_ORGANIZATION]: 'owner' } });
  const seedRun = (await listRuns(SEED_ORGANIZATION)).find((run) => run.workspace === SEED_WORKSPACE);
  const runId = seedRun?.runId ?? (await registerNewRun(SEED_ORGANIZATION, SEED_WORKSPACE)).runId;
  const tokenState = existing?.revokedAt ? 'revoked' : existing?.expiresAt && Date.parse(existing.expiresAt) <= Date.now() ? 'expired' : undefined;
  return {
    organization: SEED_ORGANIZATION,
    tokenId: (existing ?? created!.record).tokenId,
    ...(created ? { token: created.token } : {}),
    ...(tokenState ? { tokenState } : {}),
    runId,
    runCreated: !seedRun,
  };
}

const isSeedToken = (token: TokenRecord) => token.subject === SEED_SUBJECT && token.grants[SEED_ORGANIZATION] === 'owner';
