import { decodeJwt, type JWTPayload } from 'jose';
import { findTrustsOfIssuer, listTrusts } from '#shared/store/trusts';
import { KEY_REFETCH_COOLDOWN_MS, LOOPBACK_ISSUERS_ENV } from '#shared/workload-identity/issuer-keys';
import { IssuerUnavailable } from '#shared/workload-identity/issuer-unavailable';
import type { Trust } from '#shared/workload-identity/trust';
import {
  CLOCK_LEEWAY_SECONDS,
  judgeWorkloadIdentity,
  looksLikeJwt,
  MAX_JWT_LENGTH,
  MAX_TOKEN_LIFETIME_SECONDS,
  type WorkloadIdentityRefusal,
} from '#shared/workload-identity/verify';
import { requiredOption, UsageError, type Command } from './command';

/**
 * `trust check --org ORG`: which of the organization's trusts would accept the JWT on stdin, or
 * what each found wrong. The token is judged by the authorizer's own verifier (judgeWorkloadIdentity:
 * the issuer's keys by OpenID discovery, the signature, the times, then each trust), over the
 * organization's trusts only. The token is read from stdin (not an argument, which `ps` and the
 * shell's history would keep) and never printed; its claims are, as an operator needs them.
 */
export const trustCheckCommand: Command = {
  usage: 'trust check --org ORG (reads the JWT on stdin)',
  options: { org: { type: 'string' } },
  check({ values }) {
    requiredOption(values, 'org');
  },
  async run({ values }, store) {
    const organization = requiredOption(values, 'org');
    const jwt = (await readStdin()).trim();
    if (jwt === '')
      throw new UsageError('no token on stdin: printf \'%s\' "$JWT" | npm run admin -- trust check --org ORG');
    if (!looksLikeJwt(jwt))
      throw new UsageError(
        'stdin is not a JWT (three base64url parts separated by dots); give the token alone, without "Bearer "',
      );
    // The authorizer of the local stage may fetch a loopback issuer (npm start's own); a deployed one
    // may not, so neither may a check on a named table (apiAddress is a local store's only).
    if (store.apiAddress !== undefined) process.env[LOOPBACK_ISSUERS_ENV] = 'allowed';

    const ofOrganization = async (issuer: string) =>
      (await findTrustsOfIssuer(issuer)).filter((t) => t.organization === organization);
    let verdict;
    try {
      verdict = await judgeWorkloadIdentity(jwt, ofOrganization);
    } catch (error) {
      if (!(error instanceof IssuerUnavailable)) throw error;
      const line = `the issuer's keys could not be read, so the signature cannot be checked (the authorizer answers such a token 503): ${error.message}`;
      return { json: { accepted: false, organization, error: line }, text: [line], exitCode: 1 };
    }
    const claims = readableClaims(jwt);
    const about = describeToken(claims);
    if ('principal' in verdict) {
      const trusts = (await ofOrganization(String(claims.iss))).filter((t) => verdict.trustIds.includes(t.trustId));
      const run = verdict.principal.runs?.[organization];
      return {
        json: {
          accepted: true,
          organization,
          claims: shownClaims(claims),
          trusts: trusts.map((t) => ({ trustId: t.trustId, role: t.role })),
          ...(run ? { run } : {}),
        },
        text: [
          about,
          ...trusts.map(
            (t) =>
              `Accepted by ${t.trustId}: ${t.role} of ${organization}${run && t.runClaim ? `, only on run ${run} (its ${t.runClaim})` : ''}.`,
          ),
        ],
      };
    }
    const lines = await refusalLines(verdict, claims, organization);
    return {
      json: {
        accepted: false,
        organization,
        claims: shownClaims(claims),
        why: verdict.refused,
        ...(verdict.failed ? { failed: verdict.failed } : {}),
        ...(verdict.trusts ? { trusts: verdict.trusts.map(({ trustId, failed }) => ({ trustId, failed })) } : {}),
      },
      text: [about, ...lines],
      exitCode: 1,
    };
  },
};

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY)
    console.error('admin: paste the token, then Enter and Ctrl-D (it is not echoed back by this command)');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function readableClaims(jwt: string): JWTPayload {
  try {
    return decodeJwt(jwt);
  } catch {
    return {};
  }
}

const shownClaims = ({ iss, aud, sub, exp, iat }: JWTPayload) => ({ iss, aud, sub, exp, iat });
const show = (value: unknown) => {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
};
const utc = (seconds: number | undefined) =>
  typeof seconds === 'number' ? `${new Date(seconds * 1000).toISOString().slice(0, 19).replace('T', ' ')} UTC` : 'none';

function describeToken({ iss, aud, sub, exp }: JWTPayload): string {
  return `Token: iss ${show(iss)}, aud ${show(aud)}, sub ${show(sub)}, exp ${utc(exp)}.`;
}

/** Why no trust accepted it, in the operator's words: one line per failed check or per trust. */
async function refusalLines(
  verdict: WorkloadIdentityRefusal,
  claims: JWTPayload,
  organization: string,
): Promise<string[]> {
  switch (verdict.refused) {
    case 'too-long':
      return [`Refused unread: larger than ${MAX_JWT_LENGTH / 1024} KiB (real workload identity tokens are 1-2 KB).`];
    case 'unreadable':
      return ['Refused: not a JWT with a string iss this service can read.'];
    case 'untrusted-issuer': {
      const issuers = [...new Set((await listTrusts(organization)).map((t) => t.issuer))];
      return [
        `No trust of ${organization} names the issuer ${show(claims.iss)}: a token's iss must equal a trust's issuer exactly (a trailing slash is another issuer).`,
        issuers.length > 0
          ? `${organization}'s trusts name: ${issuers.join(', ')}`
          : `${organization} has no trusts (trust create --org ${organization} …).`,
      ];
    }
    case 'expired':
    case 'invalid':
      return [
        `Refused before any trust was tried: ${(verdict.failed ?? ['format']).map((check) => checkWords(check, claims)).join('; ')}.`,
      ];
    case 'no-trust-matches': {
      const trusts = await findTrustsOfIssuer(String(claims.iss));
      return [
        `Verified (signature, times), but no trust of ${organization} accepts it:`,
        ...(verdict.trusts ?? []).map(({ trustId, failed }) => {
          const trust = trusts.find((t) => t.trustId === trustId)!;
          return `  ${trustId} (${trust.role}): ${failed.map((name) => mismatchWords(trust, name, claims)).join('; ')}`;
        }),
      ];
    }
  }
}

/** What a check that failed before the trusts means, with the token's own times where they tell. */
function checkWords(check: string, { exp, iat, nbf }: JWTPayload): string {
  switch (check) {
    case 'exp':
      return `it expired at ${utc(exp)} (exp), past the ${CLOCK_LEEWAY_SECONDS} s leeway`;
    case 'nbf':
      return `it is not valid before ${utc(nbf)} (nbf)`;
    case 'iat':
      return typeof iat === 'number' && iat * 1000 > Date.now()
        ? `it was issued in the future, ${utc(iat)} (iat): check the issuer's clock`
        : `iat is missing, or ${utc(iat)} is more than ${MAX_TOKEN_LIFETIME_SECONDS / 3600} h ago`;
    case 'lifetime':
      return `its lifetime (exp − iat) is ${typeof exp === 'number' && typeof iat === 'number' ? `${((exp - iat) / 3600).toFixed(1)} h` : 'unknown'}, over the ${MAX_TOKEN_LIFETIME_SECONDS / 3600} h this service accepts`;
    case 'sub':
      return 'its sub is missing, empty, or holds control or format characters';
    case 'signature':
      return 'its signature does not verify with the key the issuer publishes under its kid';
    case 'kid':
      return `its kid is not among the keys the issuer publishes (a key published in the last ${KEY_REFETCH_COOLDOWN_MS / 1000} s may not be fetched yet: try again)`;
    case 'alg':
      return 'its alg is not an asymmetric algorithm this service accepts (RS*, PS*, ES*, EdDSA)';
    case 'crit':
      return 'its header marks an extension critical (crit) that this service does not know';
    default:
      return `its ${check} claim is missing or not valid`;
  }
}

/** What one trust found wrong: the claim, what the token holds, what the trust wants. */
function mismatchWords(trust: Trust, name: string, claims: JWTPayload): string {
  const held = Object.hasOwn(claims, name) ? claims[name] : undefined;
  const has = held === undefined ? `${name} is missing` : `${name} is ${show(held)}`;
  if (name === 'aud') return `aud is ${show(claims.aud)}, the trust wants ${show(trust.audience)}`;
  if (name === trust.runClaim && !Object.hasOwn(trust.claims, name))
    return `${has}, the trust wants a run id (run- and 16 letters or digits) in its run claim`;
  return `${has}, the trust wants ${show(trust.claims[name])}`;
}
