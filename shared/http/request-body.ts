import { BadRequest } from '../jsonapi/errors';

/** Made on first use: few requests need it, and making one at import costs every cold start (loading Node's encoding module). */
let strictUtf8: InstanceType<typeof TextDecoder> | undefined;

/** A request body API Gateway passed base64-encoded (a binary media type), decoded only if it is valid UTF-8. */
export function decodeUtf8Body(base64: string): string {
  try {
    strictUtf8 ??= new TextDecoder('utf-8', { fatal: true });
    return strictUtf8.decode(Buffer.from(base64, 'base64'));
  } catch {
    throw new BadRequest('request body is not valid UTF-8');
  }
}
