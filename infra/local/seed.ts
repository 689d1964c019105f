import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isExpired } from '#shared/auth/principal';
import { tokenIdOf, tokenMatchesHash } from '#shared/auth/token-secret';
import { listRuns, registerNewRun } from '#shared/store/runs';
import { createToken, listTokens, type TokenRecord } from '#shared/store/tokens';
import { SEED_ORGANIZATION, SEED_TOKEN_FILE } from './settings';

/** What marks the seed's own token and run, whatever else the operator CLI wrote into the store. */
const SEED_SUBJECT = 'user-example';
const SEED_WORKSPACE = 'example-workspace';

/*
 * The seed token's secret is kept in the data folder (SEED_TOKEN_FILE, mode 0600), so that every
 * start can print the same line to paste (a stored hash cannot give it back). It adds nothing to
 * what the folder gives away: DynamoDB Local's own files lie beside it, and whoever reads them can
 * write any token into the store. Only the local seed token is kept so; a deployed stage's tokens
 * exist only as hashes.
 */

export interface Seed {
  organization: string;
  /** The seed's owner token, id and secret: created by this start, or the one this folder keeps. */
  tokenId: string;
  token: string;
  tokenCreated: boolean;
  /** Why this start created a new one though the folder had a seed token: that one no longer works, or its secret is not kept. */
  replaced?: { tokenId: string; why: 'revoked' | 'expired' | 'not kept' };
  /** A run of the organization, registered so its comments can be tried at once. */
  runId: string;
  runCreated: boolean;
}

/**
 * Creates the seed's owner token of the example organization and its run, each unless it exists
 * (the token whose secret the data folder keeps, while it works; a run in the seed's workspace).
 */
export async function ensureSeed(dataDir: string): Promise<Seed> {
  const seedTokens = (await listTokens()).filter(isSeedToken);
  const kept = readKept(dataDir);
  const keptRecord =
    kept === undefined
      ? undefined
      : seedTokens.find((t) => t.tokenId === tokenIdOf(kept) && tokenMatchesHash(kept, t.tokenHash));
  const why = keptRecord?.revokedAt
    ? 'revoked'
    : keptRecord && isExpired(keptRecord.expiresAt, new Date())
      ? 'expired'
      : undefined;
  const seedRun = (await listRuns(SEED_ORGANIZATION)).find((run) => run.workspace === SEED_WORKSPACE);
  const runId = seedRun?.runId ?? (await registerNewRun(SEED_ORGANIZATION, SEED_WORKSPACE)).runId;
  const run = { runId, runCreated: !seedRun };
  if (keptRecord && !why)
    return { organization: SEED_ORGANIZATION, tokenId: keptRecord.tokenId, token: kept!, tokenCreated: false, ...run };

  const previous = keptRecord ?? seedTokens.toSorted((a, b) => a.createdAt.localeCompare(b.createdAt)).at(-1);
  const created = await createToken({ subject: SEED_SUBJECT, grants: { [SEED_ORGANIZATION]: 'owner' } });
  writeFileSync(join(dataDir, SEED_TOKEN_FILE), `${created.token}\n`, { mode: 0o600 });
  return {
    organization: SEED_ORGANIZATION,
    tokenId: created.record.tokenId,
    token: created.token,
    tokenCreated: true,
    ...(previous ? { replaced: { tokenId: previous.tokenId, why: why ?? 'not kept' } } : {}),
    ...run,
  };
}

function readKept(dataDir: string): string | undefined {
  try {
    return readFileSync(join(dataDir, SEED_TOKEN_FILE), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

const isSeedToken = (token: TokenRecord) =>
  token.subject === SEED_SUBJECT && token.grants[SEED_ORGANIZATION] === 'owner';
