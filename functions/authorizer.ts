import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import { authenticate } from '#shared/auth/authenticate';
import { encodePrincipal } from '#shared/auth/principal';
import { headerValue } from '#shared/http/headers';
import { logger } from '#shared/observability/logger';

/** API Gateway answers 401 (its UNAUTHORIZED gateway response) when an authorizer throws exactly this. */
export const UNAUTHORIZED = 'Unauthorized';

/**
 * REQUEST authorizer: `Authorization: Bearer <token>` → principal. The policy allows the whole API,
 * never just this method: API Gateway caches it per token and reuses it for every route.
 */
export async function handler(event: APIGatewayRequestAuthorizerEvent, context?: Context): Promise<APIGatewayAuthorizerResult> {
  if (context) logger.addContext(context); // request id on every line
  const principal = await authenticate(headerValue(event.headers, 'authorization'));
  if (!principal) {
    logger.info('token rejected'); // never the token itself
    throw new Error(UNAUTHORIZED);
  }
  logger.info('token accepted', { tokenId: principal.tokenId, subject: principal.subject });
  return {
    principalId: principal.subject,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: wholeApiArn(event.methodArn) }],
    },
    context: encodePrincipal(principal),
  };
}

/** `arn:aws:execute-api:region:account:api/stage/METHOD/path` → `arn:…:api/stage/*`. */
export function wholeApiArn(methodArn: string): string {
  const [apiArn, stage] = methodArn.split('/');
  return `${apiArn}/${stage}/*`;
}
