import { decodeJwt, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Principal, Role } from '../auth/principal';
import { ROLE_RANK } from '../auth/principal';
import { isId } from '../ids';
import { findTrustsOfIssuer } from '../store/trusts';
import { IssuerUnavailable, keysOf } from './issuer-keys';
import { ALLOWED_ALGORITHMS, CLOCK_LEEWAY_SECONDS, issuerFault, MAX_JWT_LENGTH, MAX_TOKEN_LIFETIME_SECONDS, type Trust } from './trust';

/** Three base64url parts: a JWS in compact form, the only shape of a JWT this service reads. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
export const looksLikeJwt = (credential: string) => COMPACT_JWS.test(credential);

/**
 * What no subject holds: control characters, format characters (bidi overrides, zero-width) and
 * lone surrogates. The subject is who a comment says wrote it (`created-by`): an issuer's
 * identifier, never text that could reorder or hide what a reader sees.
 */
const UNPRINTABLE = /\p{Cc}|\p{Cf}|\p{Cs}/u;

/** Why a JWT was refused, for the log line only: the client reads one text for every refusal. */
export type JwtRefusal = 'too-long' | 'unreadable' | 'untrusted-issuer' | 'expired' | 'invalid' | 'no-trust-matches';

export type WorkloadIdentityCheck = { principal: Principal; trustIds: string[] } | { refused: JwtRefusal };

/**
 * Judges a JWT by the trusts of the issuer it names (RFC 8725): the issuer is only a lookup key
 * until a trust of it is found, and the keys come from that trust's issuer's JWKS, never from the
 * token's header (`jwk`, `jku`, `x5u`, `x5c` are not read). Asymmetric algorithms only; `exp`,
 * `iat` and `sub` required; `exp`, `nbf` and `iat` within CLOCK_LEEWAY_SECONDS; lifetime at most
 * MAX_TOKEN_LIFETIME_SECONDS; an unknown `crit` refuses (jose). Then each trust of the issuer
 * that the token satisfies (audience, pinned claims, run claim) grants its role in its
 * organization. One read of the trusts; keys fetched only when not held. Throws IssuerUnavailable
 * when the keys cannot be had, and the store's errors, never an allow.
 */
export async function checkWorkloadIdentity(jwt: string, at = new Date()): Promise<WorkloadIdentityCheck> {
  if (jwt.length > MAX_JWT_LENGTH) return { refused: 'too-long' };
  let issuer: unknown;
  try {
    issuer = decodeJwt(jwt).iss;
  } catch {
    return { refused: 'unreadable' };
  }
  if (typeof issuer !== 'string' || issuer === '') return { refused: 'unreadable' };
  // No trust can name an issuer outside the rule (a 5 KB or non-ASCII `iss` is no table key): no read.
  if (issuerFault(issuer, { loopback: true })) return { refused: 'untrusted-issuer' };
  const trusts = await findTrustsOfIssuer(issuer);
  // Nobody trusts this issuer: nothing is fetched from it.
  if (trusts.length === 0) return { refused: 'untrusted-issuer' };

  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(jwt, await keysOf(trusts[0]!.issuer), {
      issuer: trusts[0]!.issuer,
      algorithms: [...ALLOWED_ALGORITHMS],
      requiredClaims: ['exp', 'iat', 'sub'],
      clockTolerance: CLOCK_LEEWAY_SECONDS,
      maxTokenAge: MAX_TOKEN_LIFETIME_SECONDS,
      currentDate: at,
    }));
  } catch (error) {
    // The keys could not be had: not the token's fault, never an allow.
    if (error instanceof IssuerUnavailable) throw error;
    if (error instanceof errors.JOSEError) return { refused: error instanceof errors.JWTExpired ? 'expired' : 'invalid' };
    throw error;
  }
  const { exp, iat, sub } = payload as Required<Pick<JWTPayload, 'exp' | 'iat' | 'sub'>>;
  if (exp - iat > MAX_TOKEN_LIFETIME_SECONDS || typeof sub !== 'string' || sub === '' || UNPRINTABLE.test(sub)) return { refused: 'invalid' };

  const granted = trusts.flatMap((trust) => grantOf(trust, payload));
  if (granted.length === 0) return { refused: 'no-trust-matches' };
  return { principal: principalOf(sub, exp, granted), trustIds: granted.map((g) => g.trust.trustId) };
}

interface Grant { trust: Trust; run?: string }

/** What one trust grants this token: nothing unless the audience, every pinned claim and the run claim hold. */
function grantOf(trust: Trust, payload: JWTPayload): Grant[] {
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (!audiences.includes(trust.audience)) return [];
  const claim = (name: string) => (Object.hasOwn(payload, name) ? payload[name] : undefined);
  if (!Object.entries(trust.claims).every(([name, value]) => claim(name) === value)) return [];
  if (trust.runClaim === undefined) return [{ trust }];
  const run = claim(trust.runClaim);
  return typeof run === 'string' && isId('run', run) ? [{ trust, run }] : [];
}

/**
 * One principal from every trust the token satisfies. In each organization the widest grant wins:
 * a trust without a run claim over a run-scoped one, then the higher role. The principal expires
 * when the token does (plus the leeway), so an Allow API Gateway cached never outlives its token.
 */
function principalOf(subject: string, exp: number, granted: Grant[]): Principal {
  const widest = new Map<string, Grant>();
  for (const grant of granted) {
    const current = widest.get(grant.trust.organization);
    if (!current || wider(grant, current)) widest.set(grant.trust.organization, grant);
  }
  const grants: Record<string, Role> = {};
  const runs: Record<string, string> = {};
  for (const [organization, grant] of widest) {
    grants[organization] = grant.trust.role;
    if (grant.run !== undefined) runs[organization] = grant.run;
  }
  return {
    subject,
    tokenId: [...widest.values()].map((g) => g.trust.trustId).join(','),
    grants,
    ...(Object.keys(runs).length > 0 ? { runs } : {}),
    expiresAt: new Date((exp + CLOCK_LEEWAY_SECONDS) * 1000).toISOString(),
  };
}

const wider = (a: Grant, b: Grant) =>
  (a.run === undefined) !== (b.run === undefined) ? a.run === undefined : ROLE_RANK[a.trust.role] > ROLE_RANK[b.trust.role];
