import { newId } from '#shared/ids';
import { registerRun } from '#shared/store/runs';
import { createToken, listTokens } from '#shared/store/tokens';
import { SEED_ORGANIZATION } from './settings';

const SEED_WORKSPACE = 'example-workspace';

export interface Seed {
  organization: string;
  token: string;
  /** A run of the organization, registered so its comments can be tried at once. */
  runId: string;
}

/**
 * First start only (the store has no tokens yet): an `owner` token of the example organization
 * and one run in it. Later starts print nothing secret: the token exists only as a hash by then.
 */
export async function seedOnFirstStart(): Promise<Seed | undefined> {
  if ((await listTokens()).length > 0) return undefined;
  const { token } = await createToken({ subject: 'user-example', grants: { [SEED_ORGANIZATION]: 'owner' } });
  const { run } = await registerRun({ runId: newId('run'), organization: SEED_ORGANIZATION, workspace: SEED_WORKSPACE });
  return { organization: SEED_ORGANIZATION, token, runId: run.runId };
}
