import { createRemoteJWKSet, customFetch, errors, type JWTVerifyGetKey } from 'jose';
import { issuerFault } from './trust';

/**
 * The signing keys of a trusted issuer, found by OpenID discovery and kept per function instance.
 * Only issuers of a trust are ever asked (the caller passes the trust's issuer, never one read
 * from a token), and every fetch is bounded in time and size. jose's remote key set keeps the
 * keys for KEYS_MAX_AGE_MS, refetches for an unknown `kid` at most once per KEY_REFETCH_COOLDOWN_MS,
 * and lets concurrent requests share one fetch.
 * https://openid.net/specs/openid-connect-discovery-1_0.html §4
 */
export const FETCH_TIMEOUT_MS = 2_000;
export const MAX_DOCUMENT_BYTES = 64 * 1024;
export const KEYS_MAX_AGE_MS = 10 * 60_000;
export const KEY_REFETCH_COOLDOWN_MS = 10_000;
/** How long a discovered `jwks_uri` is used before discovery runs again. */
const DISCOVERY_MAX_AGE_MS = 60 * 60_000;

/** The issuer's discovery document or keys could not be read: never an allow, a 503 to retry. */
export class IssuerUnavailable extends Error {
  readonly issuer: string;
  constructor(issuer: string, why: string, options?: ErrorOptions) {
    super(`issuer ${issuer} unavailable: ${why}`, options);
    this.name = 'IssuerUnavailable';
    this.issuer = issuer;
  }
}

/** Whether the local stack's loopback issuers may be fetched: set only on the `local` stage's authorizer. */
export const LOOPBACK_ISSUERS_ENV = 'WORKLOAD_IDENTITY_LOOPBACK_ISSUERS';
const loopbackAllowed = () => process.env[LOOPBACK_ISSUERS_ENV] === 'allowed';

/** An issuer's discovery under way or done, kept per function instance; a failed one is dropped. */
interface Discovery { keys: Promise<JWTVerifyGetKey>; startedAt: number }
const discoveries = new Map<string, Discovery>();

/** The key set of `issuer`; discovery runs once per instance and hour, concurrent callers share it. */
export function keysOf(issuer: string): Promise<JWTVerifyGetKey> {
  const known = discoveries.get(issuer);
  if (known && Date.now() - known.startedAt < DISCOVERY_MAX_AGE_MS) return known.keys;
  const keys = discover(issuer);
  discoveries.set(issuer, { keys, startedAt: Date.now() });
  // A failed discovery is not kept: the next request tries again (each attempt bounded by FETCH_TIMEOUT_MS).
  keys.catch(() => { if (discoveries.get(issuer)?.keys === keys) discoveries.delete(issuer); });
  return keys;
}

async function discover(issuer: string): Promise<JWTVerifyGetKey> {
  const fault = issuerFault(issuer, { loopback: loopbackAllowed() });
  if (fault) throw new IssuerUnavailable(issuer, fault);
  const document = await fetchJson(issuer, `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`);
  const { issuer: named, jwks_uri: jwksUri } = (document ?? {}) as Record<string, unknown>;
  // The document must be the issuer's own (OpenID Connect Discovery §4.3).
  if (named !== issuer) throw new IssuerUnavailable(issuer, 'its discovery document names another issuer');
  if (typeof jwksUri !== 'string' || issuerFault(jwksUri, { loopback: loopbackAllowed() })) {
    throw new IssuerUnavailable(issuer, 'its discovery document has no usable jwks_uri');
  }
  return createRemoteJWKSet(new URL(jwksUri), {
    timeoutDuration: FETCH_TIMEOUT_MS,
    cooldownDuration: KEY_REFETCH_COOLDOWN_MS,
    cacheMaxAge: KEYS_MAX_AGE_MS,
    [customFetch]: async (url: string) => new Response(JSON.stringify(await fetchJson(issuer, url)), { status: 200 }),
  });
}

/** GET a JSON document: 200 only, no redirects, at most MAX_DOCUMENT_BYTES in FETCH_TIMEOUT_MS. */
async function fetchJson(issuer: string, url: string): Promise<unknown> {
  let text: string;
  try {
    const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/json' } });
    if (response.status !== 200) throw new IssuerUnavailable(issuer, `${url} answered ${response.status}`);
    text = await readBounded(issuer, url, response);
  } catch (error) {
    if (error instanceof IssuerUnavailable) throw error;
    throw new IssuerUnavailable(issuer, `${url} could not be read (${(error as Error).name})`, { cause: error });
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new IssuerUnavailable(issuer, `${url} is not JSON`);
  }
}

async function readBounded(issuer: string, url: string, response: Response): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > MAX_DOCUMENT_BYTES) throw new IssuerUnavailable(issuer, `${url} is larger than ${MAX_DOCUMENT_BYTES} bytes`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength;
    if (size > MAX_DOCUMENT_BYTES) {
      await response.body?.cancel().catch(() => {});
      throw new IssuerUnavailable(issuer, `${url} is larger than ${MAX_DOCUMENT_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** jose's errors that mean "the keys could not be had", as opposed to "this token is not good". */
export const isKeysUnavailable = (error: unknown) =>
  error instanceof IssuerUnavailable || error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid;

/** For tests: forget every issuer's keys, as a new function instance would. */
export const forgetIssuerKeys = () => discoveries.clear();
