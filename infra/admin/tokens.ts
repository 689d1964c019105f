import { isRole, ROLES } from '#shared/auth/principal';
import { createToken, listTokens, revokeToken, type TokenRecord } from '#shared/store/tokens';
import { requiredOption, UsageError, type Command } from './command';
import { userInfo } from 'node:os';

const SUBJECT = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;

/** What an operator may see of a token: everything but its hash. */
const describe = ({ tokenHash: _hash, ...visible }: TokenRecord) => visible;

export const tokenCommands: Record<string, Command> = {
  create: {
    usage: 'token create --org ORG --role owner|member|reader [--subject NAME] [--expires-in-days N]',
    options: { org: { type: 'string' }, role: { type: 'string' }, subject: { type: 'string' }, 'expires-in-days': { type: 'string' } },
    async run({ values }) {
      const organization = requiredOption(values, 'org');
      const role = requiredOption(values, 'role');
      if (!isRole(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
      const subject = (values.subject as string | undefined) ?? `user-${userInfo().username}`;
      if (!SUBJECT.test(subject)) throw new UsageError('--subject must be 1-128 letters, digits, or . _ @ -');
      const days = values['expires-in-days'];
      let expiresAt: string | undefined;
      if (days !== undefined) {
        if (typeof days !== 'string' || !/^\d+$/.test(days) || Number(days) < 1) throw new UsageError('--expires-in-days must be a positive integer');
        expiresAt = new Date(Date.now() + Number(days) * 86_400_000).toISOString();
      }
      const { record, token } = await createToken({ subject, grants: { [organization]: role }, ...(expiresAt ? { expiresAt } : {}) });
      return {
        json: { ...describe(record), token },
        text: [
          `Created token ${record.tokenId} for ${subject}: ${role} of ${organization}${expiresAt ? `, expires ${expiresAt}` : ''}.`,
          'The token is shown once and stored only as a hash:',
          token,
        ],
      };
    },
  },
  list: {
    usage: 'token list',
    async run() {
      const tokens = (await listTokens()).map(describe);
      return {
        json: { tokens },
        text: tokens.length === 0
          ? ['No tokens.']
          : tokens.map((t) =>
              [t.tokenId, t.subject, Object.entries(t.grants).map(([o, r]) => `${r}@${o}`).join(','),
                t.revokedAt ? `revoked ${t.revokedAt}` : t.expiresAt ? `expires ${t.expiresAt}` : 'active'].join('\t')),
      };
    },
  },
  revoke: {
    usage: 'token revoke TOKEN_ID',
    async run({ positionals }) {
      const [tokenId] = positionals;
      if (!tokenId) throw new UsageError('the token id is required');
      if ((await revokeToken(tokenId)) === 'not-found') throw new UsageError(`no token ${tokenId}`);
      return { json: { tokenId, revoked: true }, text: [`Revoked ${tokenId}.`] };
    },
  },
};
