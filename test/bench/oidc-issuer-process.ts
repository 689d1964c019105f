import { startOidcIssuer, type IssuerKey } from '#infra/local/oidc-issuer';

/**
 * The bench's OpenID issuer in a process of its own: the bench starts functions with execFileSync,
 * which blocks its own event loop, so an issuer served from the bench process could not answer
 * them. Keys from ISSUER_KEYS (JSON); prints its URL, then one line per request it serves.
 */
const keys = JSON.parse(process.env.ISSUER_KEYS ?? '[]') as IssuerKey[];
const issuer = await startOidcIssuer({ published: () => keys, onRequest: (path) => console.log(`served ${path}`) });
console.log(`issuer ${issuer.url}`);
process.on('SIGTERM', () => void issuer.close().then(() => process.exit(0)));
