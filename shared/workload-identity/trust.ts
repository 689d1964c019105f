import type { Role } from '../auth/principal';

/**
 * A workload identity trust: an organization accepts OIDC tokens (JWTs) of one issuer, for one
 * audience, whose claims hold the pinned values, and grants them one role. With `runClaim`, a
 * token acts only on the run whose id that claim holds (HCP Terraform's `terraform_run_id`).
 */
export interface Trust {
  trustId: string;
  organization: string;
  issuer: string;
  audience: string;
  role: Role;
  /** Claims the token must carry with exactly these string values. */
  claims: Record<string, string>;
  runClaim?: string;
  createdAt: string;
}

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
export const ALLOWED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

const MAX_ISSUER_LENGTH = 512;
const MAX_AUDIENCE_LENGTH = 256;
/** A JWT claim name the way the issuers we know name them: `terraform_run_id`, `repository_owner`, `https://…/claims/x` excluded. */
const CLAIM_NAME = /^(?!__proto__$)[A-Za-z_][A-Za-z0-9_.:-]{0,127}$/;
const MAX_CLAIM_VALUE_LENGTH = 512;

/** 127.0.0.1 and ::1 (not a name DNS could answer): where only a local stack's issuer can be. */
const isLoopbackHost = (hostname: string) => hostname === '127.0.0.1' || hostname === '[::1]';

/**
 * The issuer as an `https://` URL with no query or fragment, or its fault in words. `http://` is
 * accepted only for a loopback host and only where `loopback` allows it (the local stack).
 * https://openid.net/specs/openid-connect-discovery-1_0.html §2 (issuer identifier)
 */
export function issuerFault(issuer: string, { loopback }: { loopback: boolean }): string | undefined {
  if (issuer.length > MAX_ISSUER_LENGTH) return `the issuer must be at most ${MAX_ISSUER_LENGTH} characters`;
  // A key of the table: printable ASCII, as an issuer URL is (an international host in its xn-- form).
  if (!/^[\x21-\x7e]+$/.test(issuer)) return 'the issuer must be printable ASCII, without spaces';
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return `the issuer must be a URL (https://…), not ${issuer}`;
  }
  if (url.search || url.hash || issuer.includes('#') || issuer.includes('?')) return 'the issuer must have no query or fragment';
  if (url.username || url.password) return 'the issuer must carry no user or password';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) {
    return loopback ? undefined : 'an http:// issuer is accepted only by the local stack (stage local): a deployed stage needs https://';
  }
  return `the issuer must be an https:// URL, not ${issuer}`;
}

export function audienceFault(audience: string): string | undefined {
  if (audience.length === 0 || audience.length > MAX_AUDIENCE_LENGTH) return `the audience must be 1 to ${MAX_AUDIENCE_LENGTH} characters`;
  if (/[\x00-\x1f\x7f]/.test(audience)) return 'the audience must hold no control characters';
  return undefined;
}

export function claimNameFault(name: string): string | undefined {
  return CLAIM_NAME.test(name) ? undefined : `a claim name must be a letter or _ then up to 127 letters, digits, or _ . : - (not ${JSON.stringify(name)})`;
}

/** `NAME=VALUE` → [name, value], or the fault. The value may hold `=`; it is compared as a string. */
export function parseClaimPin(pin: string): [string, string] | string {
  const at = pin.indexOf('=');
  if (at <= 0) return `--claim takes NAME=VALUE, not ${JSON.stringify(pin)}`;
  const [name, value] = [pin.slice(0, at), pin.slice(at + 1)];
  const fault = claimNameFault(name);
  if (fault) return fault;
  if (value.length === 0 || value.length > MAX_CLAIM_VALUE_LENGTH) return `the value of claim ${name} must be 1 to ${MAX_CLAIM_VALUE_LENGTH} characters`;
  return [name, value];
}
