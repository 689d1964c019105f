import type { APIGatewayProxyEvent } from 'aws-lambda';

/**
 * The API Gateway stage variable holding the address clients were given (`https://HOST`): the
 * custom domain, or the CloudFront front. The stack sets it; a link is never built from a request
 * header, which a client chooses (`Host: evil.example`).
 */
export const PUBLIC_ADDRESS_VARIABLE = 'publicAddress';

/**
 * The absolute URL of this request without its query string: the public address and the path
 * API Gateway matched (without the stage). Without a configured address, host-relative.
 */
export function publicUrl(event: Pick<APIGatewayProxyEvent, 'stageVariables' | 'path'>): string {
  const address = event.stageVariables?.[PUBLIC_ADDRESS_VARIABLE] ?? '';
  return `${address.replace(/\/+$/, '')}${event.path}`;
}
