/**
 * A trusted issuer's discovery document or keys could not be read: never an allow, a 503 to retry.
 * A module of its own, without issuer-keys.ts's HTTP client and jose: every function's failure
 * classification (shared/observability/failures.ts) tells it apart from the store's.
 */
export class IssuerUnavailable extends Error {
  readonly issuer: string;
  constructor(issuer: string, why: string, options?: ErrorOptions) {
    super(`issuer ${issuer} unavailable: ${why}`, options);
    this.name = 'IssuerUnavailable';
    this.issuer = issuer;
  }
}
