import { isRole, ROLES, type Role } from '#shared/auth/principal';
import { isId } from '#shared/ids';
import { createTrust, deleteTrust, findTrustsOfIssuer, listTrusts, type NewTrust } from '#shared/store/trusts';
import { issuerFault, type Trust } from '#shared/workload-identity/trust';
import { localIssuerKeys, mintToken, SIGNING_ALGORITHMS, type SigningAlgorithm } from '../local/oidc-issuer';
import { localSettings } from '../local/settings';
import { runningStack } from '../local/stack-record';
import { cacheLines, columns, shortTime } from './tokens';
import { trustCheckCommand } from './trust-check';
import { requiredOption, UsageError, type Command, type CommandArgs } from './command';
import { audienceFault, claimNameFault, claimPins } from './trust-options';

const describeClaims = (trust: Trust) =>
  Object.entries(trust.claims)
    .map(([name, value]) => `${name}=${value}`)
    .join(',') || '-';

function describe(trust: Trust): string {
  const scope = trust.runClaim ? `, only on the run its ${trust.runClaim} claim names` : '';
  return `${trust.role} of ${trust.organization}${scope}, for tokens of ${trust.issuer} with audience ${trust.audience} and ${describeClaims(trust)}`;
}

/** The issuers whose exact spelling an operator most often gets nearly right. */
export const WELL_KNOWN_ISSUERS = {
  'GitHub Actions': 'https://token.actions.githubusercontent.com',
  'HCP Terraform': 'https://app.terraform.io',
} as const;
/** Hosts that are these platforms' but issue no tokens: their sites and APIs. */
const NOT_ISSUER_HOSTS: Record<string, string> = {
  'github.com': WELL_KNOWN_ISSUERS['GitHub Actions'],
  'www.github.com': WELL_KNOWN_ISSUERS['GitHub Actions'],
  'api.github.com': WELL_KNOWN_ISSUERS['GitHub Actions'],
  'actions.githubusercontent.com': WELL_KNOWN_ISSUERS['GitHub Actions'],
  'terraform.io': WELL_KNOWN_ISSUERS['HCP Terraform'],
  'www.terraform.io': WELL_KNOWN_ISSUERS['HCP Terraform'],
  'developer.hashicorp.com': WELL_KNOWN_ISSUERS['HCP Terraform'],
  'portal.cloud.hashicorp.com': WELL_KNOWN_ISSUERS['HCP Terraform'],
};

/**
 * The issuer `issuer` was probably meant to be, when it is a near miss of GitHub Actions' or HCP
 * Terraform's (a trailing slash, the discovery document's URL, capitals, the platform's web site):
 * a trust naming it would match no token, since a token's `iss` is compared exactly. GitHub's
 * enterprise issuers (`…githubusercontent.com/<enterprise>`) and HCP Terraform Europe
 * (`app.eu.terraform.io`) are issuers of their own, and only their near misses are caught.
 */
export function nearMissOf(issuer: string): string | undefined {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return undefined;
  }
  const host = url.hostname; // lower-cased by the URL parser
  const platform =
    host === 'githubusercontent.com' ||
    host.endsWith('.githubusercontent.com') ||
    host === 'terraform.io' ||
    host.endsWith('.terraform.io');
  if (Object.hasOwn(NOT_ISSUER_HOSTS, host)) return NOT_ISSUER_HOSTS[host];
  if (!platform) return undefined;
  // HCP Terraform's issuers are the bare host; GitHub's enterprise ones add `/<enterprise>`.
  const path = host.endsWith('terraform.io')
    ? ''
    : url.pathname.replace(/\/\.well-known\/(openid-configuration|jwks(\.json)?)$/, '').replace(/\/+$/, '');
  const meant = `https://${host}${path}`;
  return meant === issuer ? undefined : meant;
}

function checkCreate({ values }: CommandArgs, { deployed }: { deployed: boolean }): void {
  requiredOption(values, 'org');
  const issuer = requiredOption(values, 'issuer');
  const fault = issuerFault(issuer, { loopback: !deployed }) ?? audienceFault(requiredOption(values, 'audience'));
  if (fault) throw new UsageError(fault);
  const meant = nearMissOf(issuer);
  if (meant !== undefined && values.force !== true) {
    throw new UsageError(
      `--issuer ${issuer} would match no token (a token's iss must equal it exactly): did you mean ${meant}? ` +
        `GitHub Actions' issuer is ${WELL_KNOWN_ISSUERS['GitHub Actions']}, HCP Terraform's ${WELL_KNOWN_ISSUERS['HCP Terraform']} ` +
        '(no trailing slash); --force creates the trust as given',
    );
  }
  const role = requiredOption(values, 'role');
  if (!isRole(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}, not ${role}`);
  // The audience alone proves nothing: HCP Terraform and GitHub let any of their users choose it.
  if (Object.keys(claimPins(values)).length === 0) {
    throw new UsageError(
      'pin at least one claim with --claim NAME=VALUE (e.g. terraform_organization_id=org-… or repository_owner=acme): anyone on the issuer can ask for a token with your audience',
    );
  }
  const runClaim = values['run-claim'];
  if (runClaim !== undefined) {
    const runFault = typeof runClaim === 'string' ? claimNameFault(runClaim) : '--run-claim takes one claim name';
    if (runFault) throw new UsageError(`--run-claim: ${runFault}`);
  }
}

/** The same organization, audience, role, pinned claims and run claim: a trust that grants exactly what `wanted` would. */
const sameGrant = (trust: NewTrust, wanted: NewTrust) =>
  trust.organization === wanted.organization &&
  trust.audience === wanted.audience &&
  trust.role === wanted.role &&
  trust.runClaim === wanted.runClaim &&
  JSON.stringify(sortedEntries(trust.claims)) === JSON.stringify(sortedEntries(wanted.claims));
const sortedEntries = (claims: Record<string, string>) =>
  Object.entries(claims).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

export const trustCommands: Record<string, Command> = {
  create: {
    usage:
      'trust create --org ORG --issuer URL --audience AUD --role owner|member|reader --claim NAME=VALUE [--claim NAME=VALUE]... [--run-claim NAME] [--force]',
    options: {
      org: { type: 'string' },
      issuer: { type: 'string' },
      audience: { type: 'string' },
      role: { type: 'string' },
      claim: { type: 'string', multiple: true },
      'run-claim': { type: 'string' },
      force: { type: 'boolean' },
    },
    check: checkCreate,
    async run({ values }) {
      const runClaim = values['run-claim'] as string | undefined;
      const wanted = {
        organization: requiredOption(values, 'org'),
        issuer: requiredOption(values, 'issuer'),
        audience: requiredOption(values, 'audience'),
        role: requiredOption(values, 'role') as Role,
        claims: claimPins(values),
        ...(runClaim ? { runClaim } : {}),
      };
      // Run twice (a script, a walkthrough pasted again), it names the trust it made, not a twin.
      const existing = (await findTrustsOfIssuer(wanted.issuer)).find((t) => sameGrant(t, wanted));
      if (existing) {
        return {
          json: existing,
          text: [
            `The organization already has this trust: ${existing.trustId}: ${describe(existing)}. Nothing was written.`,
          ],
        };
      }
      const trust = await createTrust(wanted);
      return {
        json: trust,
        text: [
          `Created trust ${trust.trustId}: ${describe(trust)}.`,
          'Such a token is accepted as Authorization: Bearer <token>; a comment it writes is created by its sub claim.',
        ],
      };
    },
  },
  list: {
    usage: 'trust list --org ORG',
    options: { org: { type: 'string' } },
    check({ values }) {
      requiredOption(values, 'org');
    },
    async run({ values }) {
      const trusts = await listTrusts(requiredOption(values, 'org'));
      const rows = trusts.map((t) => [
        t.trustId,
        t.role,
        t.issuer,
        t.audience,
        describeClaims(t),
        t.runClaim ?? '-',
        shortTime(t.createdAt),
      ]);
      return {
        json: { trusts },
        text:
          trusts.length === 0
            ? ['No trusts.']
            : columns(['TRUST ID', 'ROLE', 'ISSUER', 'AUDIENCE', 'CLAIMS', 'RUN CLAIM', 'CREATED (UTC)'], rows),
      };
    },
  },
  check: trustCheckCommand,
  delete: {
    usage: 'trust delete TRUST_ID',
    positionals: 1,
    check({ positionals }) {
      const [trustId] = positionals;
      if (trustId === undefined || trustId === '')
        throw new UsageError('the trust id is required: trust delete trust-… (trust list --org ORG shows the ids)');
      if (!isId('trust', trustId))
        throw new UsageError(
          `${trustId} is not a trust id (trust- and 16 letters or digits): trust list --org ORG shows the ids`,
        );
    },
    async run({ positionals }, store) {
      const [trustId] = positionals as [string];
      const deleted = await deleteTrust(trustId);
      if (deleted === 'not-found') throw new UsageError(`no trust ${trustId} (trust list --org ORG shows the ids)`);
      return {
        json: { trustId, deleted: true },
        text: [
          `Deleted trust ${trustId} (${describe(deleted)}): the authorizer accepts no new token by it from now on.`,
          ...cacheLines(`tokens it accepted`, store),
        ],
      };
    },
  },
};

/** The local stack's own OpenID issuer (infra/local/oidc-issuer.ts): the running npm start's, else where the next one serves it. */
function localIssuerUrl(): string {
  const settings = localSettings();
  return runningStack(settings.dataDir)?.issuerUrl ?? `http://127.0.0.1:${settings.issuerPort}`;
}

export const issuerCommands: Record<string, Command> = {
  token: {
    usage:
      'issuer token --audience AUD [--subject SUB] [--claim NAME=VALUE]... [--alg RS256|ES256] [--expires-in-minutes N]',
    options: {
      audience: { type: 'string' },
      subject: { type: 'string' },
      claim: { type: 'string', multiple: true },
      alg: { type: 'string' },
      'expires-in-minutes': { type: 'string' },
    },
    usesStore: false,
    check({ values }, { deployed }) {
      if (deployed)
        throw new UsageError(
          'the local issuer signs for the local stack only; a deployed stage trusts real issuers (HCP Terraform, GitHub Actions)',
        );
      const fault = audienceFault(requiredOption(values, 'audience'));
      if (fault) throw new UsageError(fault);
      claimPins(values);
      const alg = values.alg ?? 'RS256';
      if (!SIGNING_ALGORITHMS.includes(alg as SigningAlgorithm))
        throw new UsageError(`--alg must be one of ${SIGNING_ALGORITHMS.join(', ')}`);
      const minutes = values['expires-in-minutes'] ?? '10';
      if (typeof minutes !== 'string' || !/^\d+$/.test(minutes) || Number(minutes) < 1 || Number(minutes) > 1440) {
        throw new UsageError(`--expires-in-minutes must be a whole number from 1 to 1440 (not ${String(minutes)})`);
      }
    },
    async run({ values }) {
      const alg = (values.alg ?? 'RS256') as SigningAlgorithm;
      const key = (await localIssuerKeys(localSettings().dataDir)).find((k) => k.alg === alg)!;
      const expiresInSeconds = Number(values['expires-in-minutes'] ?? '10') * 60;
      const issuer = localIssuerUrl();
      const subject = (values.subject as string | undefined) ?? 'local-workload';
      const token = await mintToken(issuer, key, {
        audience: requiredOption(values, 'audience'),
        subject,
        claims: claimPins(values),
        expiresInSeconds,
      });
      return { json: { token, issuer, subject, expiresInSeconds }, text: [token] };
    },
  },
};
