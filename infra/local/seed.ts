import { createToken, listTokens } from '#shared/store/tokens';
import { SEED_ORGANIZATION } from './settings';

export interface Seed {
  organization: string;
  token: string;
}

/**
 * First start only (the store has no tokens yet): an `owner` token of the example organization.
 * Later starts print nothing secret: the token exists only as a hash by then.
 */
export async function seedOnFirstStart(): Promise<Seed | undefined> {
  if ((await listTokens()).length > 0) return undefined;
  const { token } = await createToken({ subject: 'user-example', grants: { [SEED_ORGANIZATION]: 'owner' } });
  return { organization: SEED_ORGANIZATION, token };
}
