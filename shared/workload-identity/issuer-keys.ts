import { get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { issuerFault } from './trust';
import { IssuerUnavailable } from './issuer-unavailable';

/**
 * The signing keys of a trusted issuer, found by OpenID discovery and kept per function instance:
 * only a trust's issuer is ever asked, never one read from a token, and every fetch is bounded in
 * time and size. Keys are kept for KEYS_MAX_AGE_MS and refetched for an unknown `kid` at most once
 * per KEY_REFETCH_COOLDOWN_MS. Fetched with node:http(s), which the SDK has already loaded: Node's
 * `fetch` would load undici on a cold authorizer's first JWT (docs/performance.md).
 * https://openid.net/specs/openid-connect-discovery-1_0.html §4
 */
export const FETCH_TIMEOUT_MS = 2_000;
export const MAX_DOCUMENT_BYTES = 64 * 1024;
export const KEYS_MAX_AGE_MS = 10 * 60_000;
export const KEY_REFETCH_COOLDOWN_MS = 10_000;
/** How long a discovered `jwks_uri` is used before discovery runs again. */
const DISCOVERY_MAX_AGE_MS = 60 * 60_000;

/** Whether the local stack's loopback issuers may be fetched: set only on the `local` stage's authorizer. */
export const LOOPBACK_ISSUERS_ENV = 'WORKLOAD_IDENTITY_LOOPBACK_ISSUERS';
const loopbackAllowed = () => process.env[LOOPBACK_ISSUERS_ENV] === 'allowed';

/** An issuer's discovery under way or done, kept per function instance; a failed one is dropped. */
interface Discovery {
  keys: Promise<JWTVerifyGetKey>;
  startedAt: number;
}
const discoveries = new Map<string, Discovery>();

/** The key set of `issuer`; discovery runs once per instance and hour, concurrent callers share it. */
export function keysOf(issuer: string): Promise<JWTVerifyGetKey> {
  const known = discoveries.get(issuer);
  if (known && Date.now() - known.startedAt < DISCOVERY_MAX_AGE_MS) return known.keys;
  const keys = discover(issuer);
  discoveries.set(issuer, { keys, startedAt: Date.now() });
  // A failed discovery is not kept: the next request tries again (each attempt bounded by FETCH_TIMEOUT_MS).
  keys.catch(() => {
    if (discoveries.get(issuer)?.keys === keys) discoveries.delete(issuer);
  });
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
  const keySet = new IssuerKeySet(issuer, jwksUri);
  await keySet.reload(); // a discovery that cannot read the keys is a failed one, not kept
  return keySet.getKey;
}

/** The keys at an issuer's `jwks_uri`, as last fetched. */
class IssuerKeySet {
  private held?: { getKey: JWTVerifyGetKey; fetchedAt: number };
  private pending?: Promise<void>;
  private readonly issuer: string;
  private readonly jwksUri: string;
  constructor(issuer: string, jwksUri: string) {
    this.issuer = issuer;
    this.jwksUri = jwksUri;
  }

  /** jose's key lookup over the held keys: stale ones are fetched again, an unknown `kid` once per cooldown. */
  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    if (!this.held || Date.now() - this.held.fetchedAt >= KEYS_MAX_AGE_MS) await this.reload();
    const tried = this.held!;
    try {
      return await tried.getKey(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      // Keys fetched since this lookup began may have it; otherwise fetch, unless fetched just now.
      if (this.held === tried) {
        if (Date.now() - tried.fetchedAt < KEY_REFETCH_COOLDOWN_MS) throw error;
        await this.reload();
      }
      return this.held!.getKey(header, token);
    }
  };

  /** Fetches the keys; callers meanwhile share the fetch. On failure the keys held stay as they were. */
  reload(): Promise<void> {
    this.pending ??= fetchJson(this.issuer, this.jwksUri)
      .then((jwks) => {
        this.held = { getKey: keySetOf(this.issuer, jwks), fetchedAt: Date.now() };
      })
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }
}

function keySetOf(issuer: string, jwks: unknown): JWTVerifyGetKey {
  try {
    return createLocalJWKSet(jwks as JSONWebKeySet);
  } catch (error) {
    throw new IssuerUnavailable(issuer, 'its JWKS is not a key set', { cause: error });
  }
}

/** GET a JSON document: 200 only, no redirects, at most MAX_DOCUMENT_BYTES in FETCH_TIMEOUT_MS. */
async function fetchJson(issuer: string, url: string): Promise<unknown> {
  const text = await getBounded(url).catch((error: unknown) => {
    if (error instanceof Refused) throw new IssuerUnavailable(issuer, `${url} ${error.message}`);
    const name = (error as NodeJS.ErrnoException).code ?? (error as Error).name;
    throw new IssuerUnavailable(issuer, `${url} could not be read (${name})`, { cause: error });
  });
  try {
    return JSON.parse(text);
  } catch {
    throw new IssuerUnavailable(issuer, `${url} is not JSON`);
  }
}

/** What the issuer answered, refused: its status or its size. */
class Refused extends Error {}

/**
 * The body of a 200 at `url`, whole: connecting, the answer and its body all within
 * FETCH_TIMEOUT_MS. Each on a connection of its own (`agent: false`): one kept alive across a
 * Lambda freeze is dead on thaw, and nothing tells the client before it writes on it. A fetch
 * happens a few times an hour per instance.
 */
function getBounded(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const get = url.startsWith('https:') ? httpsGet : httpGet;
    const request = get(url, { agent: false, headers: { accept: 'application/json' } }, (response: IncomingMessage) => {
      const refuse = (why: string) => {
        request.destroy();
        reject(new Refused(why));
      };
      const tooLarge = () => refuse(`is larger than ${MAX_DOCUMENT_BYTES} bytes`);
      if (response.statusCode !== 200) return refuse(`answered ${response.statusCode}`);
      if (Number(response.headers['content-length'] ?? 0) > MAX_DOCUMENT_BYTES) return tooLarge();
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.byteLength;
        if (size > MAX_DOCUMENT_BYTES) tooLarge();
        else chunks.push(chunk);
      });
      response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      response.on('error', reject);
    });
    const deadline = setTimeout(
      () => request.destroy(Object.assign(new Error('timed out'), { name: 'TimeoutError' })),
      FETCH_TIMEOUT_MS,
    );
    request.on('error', reject);
    request.on('close', () => clearTimeout(deadline));
  });
}

/** For tests: forget every issuer's keys, as a new function instance would. */
export const forgetIssuerKeys = () => discoveries.clear();
