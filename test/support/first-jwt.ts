import { jwtVerify } from 'jose';
import { mintToken, newIssuerKey, startOidcIssuer } from '#infra/local/oidc-issuer';
import { keysOf, LOOPBACK_ISSUERS_ENV } from '#shared/workload-identity/issuer-keys';

/**
 * A cold authorizer's first JWT, as far as its keys go: bundled as the stack bundles its functions
 * and run in a fresh process (test/unit/first-jwt.test.ts), it verifies one token of an issuer on
 * 127.0.0.1 (discovery, then the JWKS) and prints the subject and the internal modules of undici
 * the process loaded on the way.
 */
process.env[LOOPBACK_ISSUERS_ENV] = 'allowed';
const key = await newIssuerKey('RS256');
const issuer = await startOidcIssuer({ published: () => [key] });
const token = await mintToken(issuer.url, key, {
  audience: 'first-jwt',
  subject: 'repo:acme/infra:ref:refs/heads/main',
});
const { payload } = await jwtVerify(token, await keysOf(issuer.url), { issuer: issuer.url, audience: 'first-jwt' });
const loaded = (process as unknown as { moduleLoadList: string[] }).moduleLoadList;
console.log(JSON.stringify({ subject: payload.sub, undici: loaded.filter((name) => name.includes('undici')) }));
await issuer.close();
