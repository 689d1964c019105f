import type { APIGatewayProxyResult } from 'aws-lambda';
import { DETAIL_CONTEXT_KEY } from '#shared/auth/unauthorized';
import {
  FALLBACK_TYPES,
  GATEWAY_ERRORS,
  gatewayErrorResponse,
  type GatewayErrorType,
  type GatewayRequest,
} from '#shared/http/gateway-responses';
import { COMMON_HEADERS, errorResponse, REQUEST_ID_HEADER } from '#shared/http/responses';
import { SERVICE_DISCOVERY_DOCUMENT, SERVICE_DISCOVERY_MEDIA_TYPE } from '#shared/http/service-discovery';
import { MethodNotAllowed } from '#shared/jsonapi/errors';

/**
 * The contract's responses (status, headers, JSON:API body) in the shapes API Gateway and WAF
 * configure them. The bodies come from shared/, the same ones the local gateway sends, so a
 * deployed stage and `npm start` answer alike.
 */
export interface ContractResponse {
  /** Undefined only on the DEFAULT_* fallbacks. */
  statusCode: number | undefined;
  /** Static headers; X-Request-Id is added by `headerMappings`, from the request itself. */
  headers: Record<string, string>;
  body: string;
}

/** Every gateway response type of shared/http/gateway-responses.ts, in its declaration order. */
export const gatewayErrorTypes = () => Object.keys(GATEWAY_ERRORS) as GatewayErrorType[];

/**
 * The request as a gateway response template sees it: each value is the `$context` variable API
 * Gateway substitutes (its gateway response templates do simple variable substitution, no VTL:
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-swagger-extensions-gateway-responses.responseTemplates.html).
 * `$context.authorizer.<key>` is the stringified value of that key of the authorizer's context
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-mapping-template-reference.html):
 * the ACCESS_DENIED body takes its 401 detail from the Deny.
 */
const TEMPLATE_REQUEST: GatewayRequest = {
  authorizer: { [DETAIL_CONTEXT_KEY]: `$context.authorizer.${DETAIL_CONTEXT_KEY}` },
};
/** The only variables a contract body may contain, each inside a JSON string whose value it becomes. */
export const TEMPLATE_VARIABLES = [`$context.authorizer.${DETAIL_CONTEXT_KEY}`] as const;

/** A gateway response: the DEFAULT_* fallbacks carry a body and headers but never a status. */
export function gatewayError(type: GatewayErrorType): ContractResponse {
  const response = fromResult(gatewayErrorResponse(type, TEMPLATE_REQUEST));
  return FALLBACK_TYPES.includes(type) ? { ...response, statusCode: undefined } : response;
}

/** 405 for a method the resource does not serve, with `Allow` naming those it does (RFC 9110 §15.5.6). */
export function methodNotAllowed(allowedMethods: readonly string[]): ContractResponse {
  const response = fromResult(errorResponse(new MethodNotAllowed()));
  return { ...response, headers: { ...response.headers, Allow: [...allowedMethods].sort().join(', ') } };
}

/** Terraform's service discovery document: plain JSON, which is what Terraform accepts there. */
export const serviceDiscovery = (): ContractResponse => ({
  statusCode: 200,
  headers: { 'Content-Type': SERVICE_DISCOVERY_MEDIA_TYPE, ...COMMON_HEADERS },
  body: JSON.stringify(SERVICE_DISCOVERY_DOCUMENT),
});

/** API Gateway's source for a header that carries the request's own id (`$context.requestId`). */
export const REQUEST_ID_SOURCE = 'context.requestId';

/**
 * The response parameters of a gateway response (`gatewayresponse.header`) or a mock's integration
 * response (`method.response.header`): each static header as a quoted literal, and X-Request-Id
 * mapped from the request context.
 */
export function headerMappings(
  prefix: 'gatewayresponse.header' | 'method.response.header',
  headers: Record<string, string>,
): Record<string, string> {
  return {
    ...Object.fromEntries(Object.entries(headers).map(([name, value]) => [`${prefix}.${name}`, quoted(value)])),
    [`${prefix}.${REQUEST_ID_HEADER}`]: REQUEST_ID_SOURCE,
  };
}

/** API Gateway header mappings take static values as single-quoted literals: `'no-store'`. */
export function quoted(value: string): string {
  if (value.includes("'")) throw new Error(`A static header value cannot contain a quote: ${value}`);
  return `'${value}'`;
}

/**
 * Response templates are Velocity (VTL), and a gateway response's substitutes `$context`
 * variables: `$` and `#` would be evaluated. The contract's bodies never contain them but for
 * TEMPLATE_VARIABLES, each a whole JSON string; fail the synth rather than deploy a body API
 * Gateway would rewrite.
 */
export function literalTemplate(body: string): string {
  const rest = TEMPLATE_VARIABLES.reduce((text, variable) => text.replaceAll(`"${variable}"`, '""'), body);
  if (/[$#\\]/.test(rest)) throw new Error(`Body is not a literal VTL template: ${body}`);
  return body;
}

/** The two media types a client may ask for; API Gateway picks the template by `Accept`. */
export const TEMPLATE_CONTENT_TYPES = ['application/json', 'application/vnd.api+json'] as const;

export const templatesFor = (body: string): Record<string, string> =>
  Object.fromEntries(TEMPLATE_CONTENT_TYPES.map((type) => [type, literalTemplate(body)]));

function fromResult(result: APIGatewayProxyResult): ContractResponse {
  const headers = Object.fromEntries(
    Object.entries(result.headers ?? {}).map(([name, value]) => [name, String(value)]),
  );
  return { statusCode: result.statusCode, headers, body: result.body };
}
