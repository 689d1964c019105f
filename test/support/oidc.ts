import { createPrivateKey, sign, type JsonWebKey } from 'node:crypto';
import { base64url, SignJWT, type JWK, type JWTPayload } from 'jose';
import {
  mintToken,
  newIssuerKey,
  startOidcIssuer,
  type IssuerKey,
  type OidcIssuer,
  type TokenRequest,
} from '#infra/local/oidc-issuer';

/** An issuer of the tests' own on 127.0.0.1 whose published keys a test changes at will. */
export interface TestIssuer extends OidcIssuer {
  keys: IssuerKey[];
  /** A token signed with the issuer's first key (or `key`), claims as `request` says. */
  mint(request: Partial<TokenRequest> & { key?: IssuerKey }): Promise<string>;
  /** JWKS fetches so far (discovery not counted). */
  jwksFetches(): number;
}

export async function startTestIssuer(): Promise<TestIssuer> {
  const keys = [await newIssuerKey('RS256'), await newIssuerKey('ES256')];
  const issuer = await startOidcIssuer({ published: () => keys });
  return Object.assign(issuer, {
    keys,
    mint: ({ key, ...request }: Partial<TokenRequest> & { key?: IssuerKey }) =>
      mintToken(issuer.url, key ?? keys[0]!, {
        audience: 'tfc-tags-comments',
        subject: 'repo:acme/infra:ref:refs/heads/main',
        ...request,
      }),
    jwksFetches: () => issuer.requests['/.well-known/jwks'] ?? 0,
  });
}

const encode = (value: unknown) => base64url.encode(JSON.stringify(value));
const now = () => Math.floor(Date.now() / 1000);

/** Claims as a good token of `issuer` carries them, with `changes` applied (undefined removes one). */
export function claims(issuer: string, changes: Record<string, unknown> = {}): JWTPayload {
  const t = now();
  const all: Record<string, unknown> = {
    iss: issuer,
    aud: 'tfc-tags-comments',
    sub: 'repo:acme/infra:ref:refs/heads/main',
    iat: t,
    nbf: t,
    exp: t + 600,
    ...changes,
  };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as JWTPayload;
}

/**
 * Signs exactly this header and payload with `key` (RS256 or ES256), nothing added or checked:
 * jose refuses to sign the hostile headers (an unknown `crit`) a verifier must refuse.
 */
export async function signRaw(header: Record<string, unknown>, payload: JWTPayload, key: IssuerKey): Promise<string> {
  const input = `${encode(header)}.${encode(payload)}`;
  const privateKey = createPrivateKey({ key: key.privateJwk as JsonWebKey, format: 'jwk' });
  const signature = sign(
    'sha256',
    Buffer.from(input),
    key.alg === 'ES256' ? { key: privateKey, dsaEncoding: 'ieee-p1363' } : privateKey,
  );
  return `${input}.${signature.toString('base64url')}`;
}

/** `alg: none`, no signature. */
export const unsignedToken = (header: Record<string, unknown>, payload: JWTPayload) =>
  `${encode({ ...header, alg: 'none' })}.${encode(payload)}.`;

/** HS256 with the issuer's public key as the HMAC secret: the algorithm-confusion attack (RFC 8725 §2.1). */
export async function hmacWithPublicKey(publicJwk: JWK, payload: JWTPayload, kid: string): Promise<string> {
  const secret = new TextEncoder().encode(JSON.stringify(publicJwk));
  return new SignJWT(payload).setProtectedHeader({ alg: 'HS256', kid, typ: 'JWT' }).sign(secret);
}

/** The token with its payload replaced after signing. */
export function withPayload(token: string, payload: JWTPayload): string {
  const [header, , signature] = token.split('.');
  return `${header}.${encode(payload)}.${signature}`;
}

export { newIssuerKey, mintToken };
