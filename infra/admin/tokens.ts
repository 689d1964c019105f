import { isRole, ROLES } from '#shared/auth/principal';
import { APP_NAME, AUTHORIZER_CACHE_TTL_SECONDS } from '#shared/config';
import { createToken, listTokens, revokeToken, type TokenRecord } from '#shared/store/tokens';
import { requiredOption, UsageError, type Command, type Values } from './command';
import { userInfo } from 'node:os';

const SUBJECT = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;

/** What an operator may see of a token: everything but its hash. */
const describe = ({ tokenHash: _hash, ...visible }: TokenRecord) => visible;

const subjectOf = (values: Values) => (values.subject as string | undefined) ?? `user-${userInfo().username}`;

/** `2026-11-22 09:30 UTC`-style, to the minute: what a person compares in a list. */
export const shortTime = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;

function stateOf(token: Omit<TokenRecord, 'tokenHash'>, now = Date.now()): string {
  if (token.revokedAt) return `revoked ${shortTime(token.revokedAt)}`;
  if (token.expiresAt && Date.parse(token.expiresAt) <= now) return 'expired';
  return 'active';
}

/** Columns padded to their widest cell, under a header. */
export function columns(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)];
}

/**
 * What revoking (a token, or a trust) cannot do on its own: API Gateway's cached answers for the
 * tokens it accepted, and how to end them. `what`: what may still be accepted (`at-…`, `tokens of trust-…`).
 */
export function cacheLines(what: string, store: { apiAddress?: string; stackRunning?: boolean }): string[] {
  const why = "API Gateway caches the authorizer's answer for each token";
  if (store.apiAddress === undefined) {
    return [
      `A deployed stage may still accept ${what} for up to authorizerCacheTtlSeconds (${AUTHORIZER_CACHE_TTL_SECONDS} s by default): ${why}.`,
      "To refuse it now, flush the stage's authorizer cache:",
      '  aws apigateway flush-stage-authorizers-cache --rest-api-id <id> --stage-name <stage>',
      `  (<id>: aws apigateway get-rest-apis --query "items[?name=='${APP_NAME}-<stage>'].id" --output text)`,
    ];
  }
  if (store.stackRunning) {
    return [
      `The running npm start may still accept ${what} for up to ${AUTHORIZER_CACHE_TTL_SECONDS} s: ${why}.`,
      'To refuse it now, restart npm start (a deployed stage: aws apigateway flush-stage-authorizers-cache).',
    ];
  }
  return ['No npm start is running, so no cached answer can accept it: the next start refuses it at once.'];
}

export const tokenCommands: Record<string, Command> = {
  create: {
    usage:
      'token create --org ORG --role owner|member|reader [--subject NAME (default user-<your login name>)] [--expires-in-days N]',
    options: {
      org: { type: 'string' },
      role: { type: 'string' },
      subject: { type: 'string' },
      'expires-in-days': { type: 'string' },
    },
    check({ values }) {
      requiredOption(values, 'org');
      const role = requiredOption(values, 'role');
      if (!isRole(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}, not ${role}`);
      if (!SUBJECT.test(subjectOf(values))) throw new UsageError('--subject must be 1-128 letters, digits, or . _ @ -');
      const days = values['expires-in-days'];
      if (days !== undefined && (typeof days !== 'string' || !/^\d+$/.test(days) || Number(days) < 1)) {
        throw new UsageError(
          `--expires-in-days must be a whole number of days, 1 or more (not ${String(days)}); leave it out for a token that never expires`,
        );
      }
    },
    async run({ values }) {
      const organization = requiredOption(values, 'org');
      const role = requiredOption(values, 'role');
      if (!isRole(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
      const subject = subjectOf(values);
      const days = values['expires-in-days'];
      const expiresAt =
        typeof days === 'string' ? new Date(Date.now() + Number(days) * 86_400_000).toISOString() : undefined;
      const { record, token } = await createToken({
        subject,
        grants: { [organization]: role },
        ...(expiresAt ? { expiresAt } : {}),
      });
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
      const rows = tokens.map((t) => [
        t.tokenId,
        t.subject,
        Object.entries(t.grants)
          .map(([o, r]) => `${r}@${o}`)
          .join(','),
        shortTime(t.createdAt),
        t.expiresAt ? shortTime(t.expiresAt) : 'never',
        stateOf(t),
      ]);
      return {
        json: { tokens },
        text:
          tokens.length === 0
            ? ['No tokens.']
            : columns(['TOKEN ID', 'SUBJECT', 'ROLES', 'CREATED (UTC)', 'EXPIRES (UTC)', 'STATE'], rows),
      };
    },
  },
  revoke: {
    usage: 'token revoke TOKEN_ID',
    positionals: 1,
    check({ positionals }) {
      if (!positionals[0])
        throw new UsageError('the token id is required: token revoke at-… (token list shows the ids)');
    },
    async run({ positionals }, store) {
      const [tokenId] = positionals as [string];
      const revoked = await revokeToken(tokenId);
      if (revoked === 'not-found') throw new UsageError(`no token ${tokenId} (token list shows the ids)`);
      return {
        json: { tokenId, revoked: true },
        text: [
          `Revoked ${tokenId} (${revoked.subject}) at ${revoked.revokedAt}: the authorizer refuses it from now on.`,
          ...cacheLines(tokenId, store),
        ],
      };
    },
  },
};
