import { decodeJwt, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Principal, Role } from '../auth/principal';
import { ROLE_RANK } from '../auth/principal';
import { isId } from '../ids';
import { findTrustsOfIssuer } from '../store/trusts';
import { keysOf } from './issuer-keys';
import { IssuerUnavailable } from './issuer-unavailable';
import { issuerFault, type Trust } from './trust';

/**
 * How far a token's clock may be from ours, for `exp`, `nbf` and `iat` (RFC 7519 §4.1.4 allows
 * "some small leeway"): HCP Terraform's and GitHub's tokens are minted by other machines.
 */
export const CLOCK_LEEWAY_SECONDS = 30;
/** The longest lifetime (`exp` − `iat`) accepted: HCP Terraform's run tokens and GitHub's live far less. */
export const MAX_TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;
/** A JWT longer than this is refused unread: real workload identity tokens are 1-2 KB. */
export const MAX_JWT_LENGTH = 8 * 1024;

/** Asymmetric signatures only (RFC 8725 §3.1): never `none`, never an HMAC whose key could be a public one. */
export const ALLOWED_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;

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

/**
 * What a refusal's log line may say of the token: its `iss`, `aud` and `sub` (none is secret: the
 * `sub` of an accepted token is its `created-by`), each cut short, as read (unverified when the
 * signature was what failed). Never the token, never another claim's value.
 */
export interface TokenClaims {
  iss?: string;
  aud?: string | string[];
  sub?: string;
}

/** One trust of the token's issuer that did not accept it: the checks it failed, as claim names, never values. */
export interface TrustMismatch {
  trustId: string;
  organization: string;
  failed: string[];
}

export type WorkloadIdentityRefusal = {
  refused: JwtRefusal;
  claims?: TokenClaims;
  /**
   * What failed before any trust was tried (`invalid`, `expired`): `signature`, `kid` (no key of the
   * issuer's has it), `alg`, `crit`, `exp`, `nbf`, `iat`, `sub`, `lifetime` (`exp` − `iat` over 24 h).
   */
  failed?: string[];
  /** `no-trust-matches`: each trust of the issuer and what it found wrong. */
  trusts?: TrustMismatch[];
};

export type WorkloadIdentityCheck = { principal: Principal; trustIds: string[] } | WorkloadIdentityRefusal;

/** The trusts a token is judged by, given its `iss`: the authorizer's are every organization's. */
export type TrustsOfIssuer = (issuer: string) => Promise<Trust[]>;

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
export function checkWorkloadIdentity(jwt: string, at = new Date()): Promise<WorkloadIdentityCheck> {
  return judgeWorkloadIdentity(jwt, findTrustsOfIssuer, at);
}

/**
 * checkWorkloadIdentity over the trusts `trustsOf` gives: the authorizer's judgement, and the
 * operator CLI's `trust check` (one organization's trusts), with one verifier between them.
 */
export async function judgeWorkloadIdentity(
  jwt: string,
  trustsOf: TrustsOfIssuer,
  at = new Date(),
): Promise<WorkloadIdentityCheck> {
  if (jwt.length > MAX_JWT_LENGTH) return { refused: 'too-long' };
  let unverified: JWTPayload;
  try {
    unverified = decodeJwt(jwt);
  } catch {
    return { refused: 'unreadable' };
  }
  const issuer = unverified.iss;
  const claims = loggableClaims(unverified);
  if (typeof issuer !== 'string' || issuer === '') return { refused: 'unreadable', claims };
  // No trust can name an issuer outside the rule (a 5 KB or non-ASCII `iss` is no table key): no read.
  if (issuerFault(issuer, { loopback: true })) return { refused: 'untrusted-issuer', claims };
  const trusts = await trustsOf(issuer);
  // Nobody trusts this issuer: nothing is fetched from it.
  if (trusts.length === 0) return { refused: 'untrusted-issuer', claims };

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
    if (error instanceof errors.JOSEError) {
      return {
        refused: error instanceof errors.JWTExpired ? 'expired' : 'invalid',
        claims,
        failed: [failedCheck(error)],
      };
    }
    throw error;
  }
  const { exp, iat, sub } = payload as Required<Pick<JWTPayload, 'exp' | 'iat' | 'sub'>>;
  if (exp - iat > MAX_TOKEN_LIFETIME_SECONDS) return { refused: 'invalid', claims, failed: ['lifetime'] };
  if (typeof sub !== 'string' || sub === '' || UNPRINTABLE.test(sub))
    return { refused: 'invalid', claims, failed: ['sub'] };

  const granted = trusts.flatMap((trust) => grantOf(trust, payload));
  if (granted.length === 0) {
    return {
      refused: 'no-trust-matches',
      claims,
      trusts: trusts.map((t) => ({
        trustId: t.trustId,
        organization: t.organization,
        failed: mismatchesOf(t, payload),
      })),
    };
  }
  return { principal: principalOf(sub, exp, granted), trustIds: granted.map((g) => g.trust.trustId) };
}

/** Which check a jose error is, by name: what a refusal's log line and `trust check` say. */
function failedCheck(error: InstanceType<typeof errors.JOSEError>): string {
  if (error instanceof errors.JWTExpired) return 'exp';
  if (error instanceof errors.JWTClaimValidationFailed) return error.claim === 'unspecified' ? 'claims' : error.claim;
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'signature';
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) return 'kid';
  if (/"crit"|Extension Header Parameter/.test(error.message)) return 'crit';
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) return 'alg';
  return 'format';
}

const MAX_LOGGED_CLAIM_LENGTH = 256;
const MAX_LOGGED_AUDIENCES = 5;
const loggable = (value: unknown) => (typeof value === 'string' ? value.slice(0, MAX_LOGGED_CLAIM_LENGTH) : undefined);

/** The `iss`, `aud` and `sub` a refusal may log: strings only, each cut short, at most 5 audiences. */
function loggableClaims(payload: JWTPayload): TokenClaims {
  const iss = loggable(payload.iss);
  const sub = loggable(payload.sub);
  const aud = Array.isArray(payload.aud)
    ? payload.aud
        .slice(0, MAX_LOGGED_AUDIENCES)
        .map(loggable)
        .filter((a): a is string => a !== undefined)
    : loggable(payload.aud);
  return {
    ...(iss !== undefined ? { iss } : {}),
    ...(aud !== undefined ? { aud } : {}),
    ...(sub !== undefined ? { sub } : {}),
  };
}

interface Grant {
  trust: Trust;
  run?: string;
}

/**
 * The checks of one trust this (verified) token fails, as names: `aud`, each pinned claim that is
 * missing or has another value, and the run claim when it holds no run id. Empty: the trust matches.
 */
export function mismatchesOf(trust: Trust, payload: JWTPayload): string[] {
  const failed: string[] = [];
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (!audiences.includes(trust.audience)) failed.push('aud');
  const claim = (name: string) => (Object.hasOwn(payload, name) ? payload[name] : undefined);
  for (const [name, value] of Object.entries(trust.claims)) if (claim(name) !== value) failed.push(name);
  if (trust.runClaim !== undefined && !isRunId(claim(trust.runClaim))) failed.push(trust.runClaim);
  return failed;
}

const isRunId = (value: unknown): value is string => typeof value === 'string' && isId('run', value);

/** What one trust grants this token: nothing unless the audience, every pinned claim and the run claim hold. */
function grantOf(trust: Trust, payload: JWTPayload): Grant[] {
  if (mismatchesOf(trust, payload).length > 0) return [];
  if (trust.runClaim === undefined) return [{ trust }];
  return [{ trust, run: payload[trust.runClaim] as string }];
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
  (a.run === undefined) !== (b.run === undefined)
    ? a.run === undefined
    : ROLE_RANK[a.trust.role] > ROLE_RANK[b.trust.role];
