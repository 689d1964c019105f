import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { checkToken, type RefusedJwt } from '#shared/auth/operations';
import { DETAIL_CONTEXT_KEY } from '#shared/auth/unauthorized';
import { encodePrincipal } from '#shared/auth/principal';
import { headerValue } from '#shared/http/headers';
import { logger } from '#shared/observability/logger';
import { invocationHandler } from '#shared/observability/invocation';
import { countAuthorization } from '#shared/observability/metrics';
import { AUTHORIZER_FUNCTION } from '#shared/routes';

/** Where a Deny's reason (for logs) travels: API Gateway exposes it as `$context.authorizer.reason`. */
export const REJECTION_CONTEXT_KEY = 'reason';
/** X-Ray keeps annotation values up to 1,000 characters; a `sub` is cut well before. */
const MAX_ANNOTATION_LENGTH = 256;

/**
 * REQUEST authorizer: `Authorization: Bearer <token>` (an operator token, or a workload identity
 * JWT a trust accepts) → principal. Its policy covers the whole API: API Gateway caches it per
 * token for every route (docs/design.md, decision 5). A refused token is a Deny, not an error (a
 * thrown one is API Gateway's AUTHORIZER_FAILURE): only a store failure or an unreachable issuer
 * throws. A Deny's detail, shown by the ACCESS_DENIED response, depends on the header alone, so a
 * cached Deny tells the truth about the header it is cached for.
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-lambda-authorizer-output.html
 */
export const handler = invocationHandler<APIGatewayRequestAuthorizerEvent, APIGatewayAuthorizerResult>(
  AUTHORIZER_FUNCTION,
  'authorizer',
  async (event) => {
    logger.appendKeys({ request_id: event.requestContext?.requestId }); // API Gateway's: the response's X-Request-Id
    // The value API Gateway keys its cache on. Two different Authorization headers are refused by
    // the function (shared/http/handler.ts): a Deny for ambiguity cached under one value's key
    // would refuse that value alone afterwards.
    const check = await checkToken(headerValue(event.headers, 'authorization'));
    if ('rejected' in check) {
      logger.info('token rejected', {
        reason: check.rejected,
        ...(check.why ? { why: check.why } : {}),
        ...jwtRefusalKeys(check.jwt),
      });
      countAuthorization(check.rejected);
      const context = { [REJECTION_CONTEXT_KEY]: check.rejected, [DETAIL_CONTEXT_KEY]: check.detail };
      return { answer: policy('rejected', 'Deny', event.methodArn, context), outcome: check.rejected };
    }
    const { principal } = check;
    logger.info('token accepted', { tokenId: principal.tokenId, subject: principal.subject });
    countAuthorization('allowed');
    const answer = policy(principal.subject, 'Allow', event.methodArn, encodePrincipal(principal));
    // A workload identity's trust and sub are named in the trace too (an operator token's subject, a person, is not).
    if (!check.trustIds) return { answer, outcome: 'allowed' };
    return {
      answer,
      outcome: 'allowed',
      who: { trust: check.trustIds.join(','), workload: principal.subject.slice(0, MAX_ANNOTATION_LENGTH) },
    };
  },
);

/** How many of an issuer's trusts a refusal's log line names: an issuer many organizations trust has many. */
const MAX_LOGGED_TRUSTS = 10;

/**
 * What a refused JWT's log line says of it, never the token: its `iss`, `aud` and `sub` (keys of
 * their own, for Logs Insights), the check that failed before any trust was tried, or for each
 * trust of the issuer (the closest first) the checks it failed, as claim names, never values.
 */
function jwtRefusalKeys(jwt: RefusedJwt | undefined): Record<string, unknown> {
  if (!jwt) return {};
  const { claims, failed, trusts } = jwt;
  const closest = trusts && [...trusts].sort((a, b) => a.failed.length - b.failed.length);
  return {
    ...claims,
    ...(failed ? { failed } : {}),
    ...(closest
      ? { trusts: closest.slice(0, MAX_LOGGED_TRUSTS).map(({ trustId, failed: f }) => ({ trust: trustId, failed: f })) }
      : {}),
    ...(closest && closest.length > MAX_LOGGED_TRUSTS ? { trustsNotShown: closest.length - MAX_LOGGED_TRUSTS } : {}),
  };
}

function policy(
  principalId: string,
  effect: 'Allow' | 'Deny',
  methodArn: string,
  context: Record<string, string>,
): APIGatewayAuthorizerResult {
  return {
    principalId,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: wholeApiArn(methodArn) }],
    },
    context,
  };
}

/** `arn:aws:execute-api:region:account:api/stage/METHOD/path` → `arn:…:api/stage/*`. */
export function wholeApiArn(methodArn: string): string {
  const [apiArn, stage] = methodArn.split('/');
  return `${apiArn}/${stage}/*`;
}
