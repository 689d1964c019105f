import { BadRequest } from '../jsonapi/errors';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** A request body API Gateway passed base64-encoded (a binary media type), decoded only if it is valid UTF-8. */
export function decodeUtf8Body(base64: string): string {
  try {
    return strictUtf8.decode(Buffer.from(base64, 'base64'));
  } catch {
    throw new BadRequest('request body is not valid UTF-8');
  }
}
