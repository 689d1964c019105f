import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { API_BASE_PATH } from '#shared/config';
import { SERVICE_DISCOVERY_PATH } from '#shared/http/service-discovery';

/**
 * Checks an answer against the committed OpenAPI document (docs/openapi.json), as a client that
 * trusts it would: the operation found by method and path template, the response declared for
 * the status (or `default`), its media type, its body against the declared schema (ajv), and the
 * headers it declares required. Every e2e test's requests pass through it (test/support/validate-answers.ts).
 */
export const DOCUMENT_URL = new URL('../../docs/openapi.json', import.meta.url);
export const document = JSON.parse(readFileSync(DOCUMENT_URL, 'utf8'));
const DOCUMENT_ID = 'openapi.json';

/** OpenAPI 3.1's schemas are JSON Schema 2020-12; `x-max-utf8-bytes` is the one rule JSON Schema cannot say itself. */
export const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addKeyword({
  keyword: 'x-max-utf8-bytes',
  type: 'string',
  schemaType: 'number',
  validate: (max: number, value: string) => Buffer.byteLength(value, 'utf8') <= max,
});
ajv.addSchema(document, DOCUMENT_ID);

const compiled = new Map<string, ValidateFunction>();
const pointer = (...tokens: string[]) =>
  tokens.map((t) => `/${encodeURIComponent(t.replaceAll('~', '~0').replaceAll('/', '~1'))}`).join('');
/** A validator of the schema at `tokens` in the document (its $refs resolve in the document). */
export function schemaAt(...tokens: string[]): ValidateFunction {
  const at = pointer(...tokens);
  let validate = compiled.get(at);
  if (!validate) {
    validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${at}` });
    compiled.set(at, validate);
  }
  return validate;
}

const tokensOf = (reference: string) =>
  reference
    .slice(2)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
const resolve = (value: any): any =>
  value?.$ref ? resolve(tokensOf(value.$ref).reduce((node: any, token: string) => node[token], document)) : value;

/** The document's path template that `path` (under the API's base path, or the root of the host) is an instance of. */
function templateOf(pathname: string): string | undefined {
  const path =
    pathname === SERVICE_DISCOVERY_PATH
      ? pathname
      : pathname.startsWith(`${API_BASE_PATH}/`)
        ? pathname.slice(API_BASE_PATH.length)
        : undefined;
  if (path === undefined) return undefined;
  return Object.keys(document.paths).find((template) =>
    new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+')}$`).test(path),
  );
}

export interface Answer {
  method: string;
  url: string;
  status: number;
  headers: Headers;
  text: string;
}

const errorsText = (validate: ValidateFunction) => ajv.errorsText(validate.errors, { dataVar: 'body' });

/**
 * What is wrong with this answer by the document; empty when it conforms. An answer to a path the
 * document does not have (a 404 for an unknown path, a 405 for another method) is held to the
 * error document every error is.
 */
export function problemsWith(answer: Answer): string[] {
  const { pathname } = new URL(answer.url);
  const template = templateOf(pathname);
  const method = answer.method.toLowerCase();
  const operation = template === undefined ? undefined : document.paths[template][method];
  if (!operation) {
    if (answer.status < 400)
      return [`${answer.method} ${pathname} answered ${answer.status}, and the document has no such operation`];
    return bodyProblems(answer, schemaAt('components', 'schemas', 'Errors'), 'the error document');
  }
  const key = String(answer.status) in operation.responses ? String(answer.status) : 'default';
  const response = resolve(operation.responses[key]);
  if (key === 'default' && answer.status < 500)
    return [`${operation.operationId} answered ${answer.status}, which the document does not declare`];
  const problems: string[] = [];
  for (const [name, header] of Object.entries<any>(response.headers ?? {})) {
    const declared = resolve(header);
    const value = answer.headers.get(name);
    if (value === null) {
      if (declared.required) problems.push(`${operation.operationId} ${answer.status}: no ${name} header`);
      continue;
    }
    const validate = ajv.compile(declared.schema);
    if (!validate(value))
      problems.push(
        `${operation.operationId} ${answer.status}: header ${name} ${JSON.stringify(value)}: ${ajv.errorsText(validate.errors)}`,
      );
  }
  if (!response.content) {
    if (answer.text !== '')
      problems.push(`${operation.operationId} ${answer.status}: a body, where the document declares none`);
    return problems;
  }
  const type = answer.headers.get('content-type')?.split(';')[0]?.trim() ?? '';
  if (!(type in response.content)) {
    return [
      ...problems,
      `${operation.operationId} ${answer.status}: Content-Type ${JSON.stringify(type)}, not one of ${Object.keys(response.content).join(', ')}`,
    ];
  }
  const reference = operation.responses[key].$ref as string | undefined;
  const at = reference ? tokensOf(reference) : ['paths', template!, method, 'responses', key];
  const validate = schemaAt(...at, 'content', type, 'schema');
  return [...problems, ...bodyProblems(answer, validate, `${operation.operationId} ${answer.status}`)];
}

function bodyProblems(answer: Answer, validate: ValidateFunction, what: string): string[] {
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return [`${what}: the body is not JSON: ${JSON.stringify(answer.text.slice(0, 200))}`];
  }
  return validate(body) ? [] : [`${what}: ${errorsText(validate)}`];
}
