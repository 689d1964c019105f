import type { APIGatewayProxyResult } from 'aws-lambda';
import { GATEWAY_ERRORS, gatewayErrorResponse, type GatewayErrorType } from '#shared/http/gateway-responses';
import { errorResponse } from '#shared/http/responses';
import { MethodNotAllowed } from '#shared/jsonapi/errors';

/**
 * The contract's responses (status, headers, JSON:API body) in the shapes API Gateway and WAF
 * configure them. The bodies come from shared/, the same ones the local gateway sends, so a
 * deployed stage and `npm start` answer alike.
 */
export interface ContractResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** Every gateway error of shared/http/gateway-responses.ts, in its declaration order. */
export const gatewayErrorTypes = () => Object.keys(GATEWAY_ERRORS) as GatewayErrorType[];

export const gatewayError = (type: GatewayErrorType): ContractResponse => fromResult(gatewayErrorResponse(type));

/** What the local gateway answers for a known path with a method it does not serve. */
export const methodNotAllowed = (): ContractResponse => fromResult(errorResponse(new MethodNotAllowed()));

/** API Gateway header mappings take static values as single-quoted literals: `'no-store'`. */
export function quoted(value: string): string {
  if (value.includes("'")) throw new Error(`A static header value cannot contain a quote: ${value}`);
  return `'${value}'`;
}

/**
 * Response templates are Velocity (VTL): `$` and `#` would be evaluated. The contract's bodies
 * never contain them; fail the synth rather than deploy a body API Gateway would rewrite.
 */
export function literalTemplate(body: string): string {
  if (/[$#\\]/.test(body)) throw new Error(`Body is not a literal VTL template: ${body}`);
  return body;
}

/** The two media types a client may ask for; API Gateway picks the template by `Accept`. */
export const TEMPLATE_CONTENT_TYPES = ['application/json', 'application/vnd.api+json'] as const;

export const templatesFor = (body: string): Record<string, string> =>
  Object.fromEntries(TEMPLATE_CONTENT_TYPES.map((type) => [type, literalTemplate(body)]));

function fromResult(result: APIGatewayProxyResult): ContractResponse {
  const headers = Object.fromEntries(Object.entries(result.headers ?? {}).map(([name, value]) => [name, String(value)]));
  return { statusCode: result.statusCode, headers, body: result.body };
}
