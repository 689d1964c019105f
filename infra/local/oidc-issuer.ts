import { createServer, type Server } from 'node:http';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import { randomAlphanumeric } from '#shared/ids';

/**
 * A small OpenID Connect issuer on 127.0.0.1, so that workload identity can be tried and tested
 * with no external issuer: OpenID discovery and a JWKS, as HCP Terraform and GitHub publish them,
 * and tokens minted with its keys. `npm start` serves one with keys kept in the data folder; the
 * tests start their own, whose keys they change at will (rotation, unpublished keys).
 */
export const SIGNING_ALGORITHMS = ['RS256', 'ES256'] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];

export interface IssuerKey {
  kid: string;
  alg: SigningAlgorithm;
  privateJwk: JWK;
  publicJwk: JWK;
}

export async function newIssuerKey(
  alg: SigningAlgorithm = 'RS256',
  kid = `${alg.toLowerCase()}-${randomAlphanumeric(8)}`,
): Promise<IssuerKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const [privateJwk, publicJwk] = await Promise.all([exportJWK(privateKey), exportJWK(publicKey)]);
  return { kid, alg, privateJwk: { ...privateJwk, kid, alg }, publicJwk: { ...publicJwk, kid, alg, use: 'sig' } };
}

export const DISCOVERY_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/.well-known/jwks';

export interface OidcIssuer {
  /** `http://127.0.0.1:PORT`: the `iss` of its tokens and the issuer a trust names. */
  url: string;
  port: number;
  /** Requests served, by path: what a test counts JWKS fetches with. */
  requests: Record<string, number>;
  close(): Promise<void>;
}

/** Serves discovery and the public half of `published()`, read at each request (so keys can rotate). */
export async function startOidcIssuer({
  port = 0,
  published,
  onRequest,
}: {
  port?: number;
  published: () => IssuerKey[];
  onRequest?: (path: string) => void;
}): Promise<OidcIssuer> {
  const requests: Record<string, number> = {};
  let url = '';
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://issuer').pathname;
    requests[path] = (requests[path] ?? 0) + 1;
    onRequest?.(path);
    const answer = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(JSON.stringify(body));
    };
    if (request.method !== 'GET') return answer(405, { error: 'GET only' });
    if (path === DISCOVERY_PATH) {
      return answer(200, {
        issuer: url,
        jwks_uri: `${url}${JWKS_PATH}`,
        id_token_signing_alg_values_supported: [...SIGNING_ALGORITHMS],
        response_types_supported: ['id_token'],
        subject_types_supported: ['public'],
        claims_supported: ['sub', 'aud', 'exp', 'iat', 'nbf', 'iss', 'jti'],
      });
    }
    if (path === JWKS_PATH) return answer(200, { keys: published().map((key) => key.publicJwk) });
    return answer(404, { error: 'not found' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const bound = (server.address() as { port: number }).port;
  url = `http://127.0.0.1:${bound}`;
  return {
    url,
    port: bound,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface TokenRequest {
  audience: string | string[];
  subject: string;
  claims?: Record<string, unknown>;
  /** Lifetime from now; default 10 minutes, about what an HCP Terraform run phase's token lasts. */
  expiresInSeconds?: number;
}

/** A token as the issuer at `issuer` would sign it with `key`. */
export async function mintToken(issuer: string, key: IssuerKey, request: TokenRequest): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload: JWTPayload = {
    ...request.claims,
    iss: issuer,
    aud: request.audience,
    sub: request.subject,
    iat: now,
    nbf: now,
    exp: now + (request.expiresInSeconds ?? 600),
    jti: randomAlphanumeric(16),
  };
  return new SignJWT(payload)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .sign(await importJWK(key.privateJwk, key.alg));
}

/** The local issuer's keys, one per algorithm, kept in the data folder (mode 0600) so tokens and trusts survive restarts. */
export const LOCAL_ISSUER_KEYS_FILE = 'oidc-issuer-keys.json';

export async function localIssuerKeys(dataDir: string): Promise<IssuerKey[]> {
  const file = join(dataDir, LOCAL_ISSUER_KEYS_FILE);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as IssuerKey[];
  } catch {
    const keys = await Promise.all(SIGNING_ALGORITHMS.map((alg) => newIssuerKey(alg)));
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, `${JSON.stringify(keys)}\n`, { mode: 0o600 });
    return keys;
  }
}
