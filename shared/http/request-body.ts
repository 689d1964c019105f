import { BadRequest } from '../jsonapi/errors';

/** Made on first use: few requests need it, and making one at import costs every cold start (loading Node's encoding module). */
let strictUtf8: InstanceType<typeof TextDecoder> | undefined;

/**
 * A request body's bytes as text, only if they are valid UTF-8 (a leading byte order mark is
 * dropped): never with U+FFFD in place of bad bytes, which would store what the client did not send.
 */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    strictUtf8 ??= new TextDecoder('utf-8', { fatal: true });
    return strictUtf8.decode(bytes);
  } catch {
    throw new BadRequest('request body is not valid UTF-8');
  }
}

/** A request body API Gateway passed base64-encoded (a binary media type), decoded only if it is valid UTF-8. */
export const decodeUtf8Body = (base64: string): string => decodeUtf8(Buffer.from(base64, 'base64'));
