import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header HCP Terraform signs each notification in: hex HMAC-SHA512 of the raw body, keyed by the configuration's token. */
export const SIGNATURE_HEADER = 'X-TFE-Notification-Signature';

export const signatureOf = (body: Buffer, secret: string) => createHmac('sha512', secret).update(body).digest('hex');

/**
 * Whether the request's one signature is the body's HMAC under one of `secrets`. Two signatures
 * are ambiguous credentials, refused whatever their order (HCP Terraform sends one). Compared in
 * constant time (timingSafeEqual needs equal lengths; a wrong length is no match and says nothing
 * about the secret).
 */
export function signatureMatches(body: Buffer, signatures: readonly string[], secrets: readonly string[]): boolean {
  if (signatures.length !== 1) return false;
  const [signature] = signatures;
  if (!signature) return false;
  const given = Buffer.from(signature.toLowerCase(), 'utf8');
  let matched = false;
  for (const secret of secrets) {
    const expected = Buffer.from(signatureOf(body, secret), 'utf8');
    // Every secret is tried, so the time taken does not say which one matched.
    if (expected.length === given.length && timingSafeEqual(expected, given)) matched = true;
  }
  return matched;
}
