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

const MAX_ISSUER_LENGTH = 512;

/** 127.0.0.1 and ::1 (not a name DNS could answer): where only a local stack's issuer can be. */
const isLoopbackHost = (hostname: string) => hostname === '127.0.0.1' || hostname === '[::1]';

/**
 * The issuer as an `https://` URL with no query or fragment, or its fault in words. `http://` is
 * accepted only for a loopback host and only where `loopback` allows it (the local stack). One rule
 * for both sides: the operator CLI says the fault of a trust's issuer (infra/admin/trusts.ts), the
 * verifier refuses a token's `iss` outside it unread (verify.ts, issuer-keys.ts).
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
  if (url.search || url.hash || issuer.includes('#') || issuer.includes('?'))
    return 'the issuer must have no query or fragment';
  if (url.username || url.password) return 'the issuer must carry no user or password';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) {
    return loopback
      ? undefined
      : 'an http:// issuer is accepted only by the local stack (stage local): a deployed stage needs https://';
  }
  return `the issuer must be an https:// URL, not ${issuer}`;
}
