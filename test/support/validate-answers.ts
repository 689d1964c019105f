import { afterAll, afterEach } from '@jest/globals';
import { API_BASE_PATH } from '#shared/config';
import { SERVICE_DISCOVERY_PATH } from '#shared/http/service-discovery';
import { problemsWith } from './openapi';

/**
 * Every answer an e2e test receives from the API over HTTP is checked against the OpenAPI document
 * (test/support/openapi.ts): fetch is wrapped once here, so TestApi and the tests' own fetch calls
 * are covered alike. A test during which (or before which) an answer did not conform fails, naming
 * the request and what did not conform. Paths outside the API (the emulator's own test stacks) are
 * left alone.
 */
const mismatches: string[] = [];
const realFetch = globalThis.fetch;

const isApiPath = (pathname: string) => pathname === SERVICE_DISCOVERY_PATH || pathname.startsWith(`${API_BASE_PATH}/`);

globalThis.fetch = async function fetchCheckedAgainstOpenApi(
  input: string | URL | Request,
  init?: RequestInit,
): Promise<Response> {
  const response = await realFetch(input, init);
  const url = input instanceof Request ? input.url : String(input);
  if (!isApiPath(new URL(url).pathname)) return response;
  const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
  let text: string;
  try {
    text = await response.clone().text();
  } catch {
    return response; // aborted by the test: nothing to check
  }
  const problems = problemsWith({ method, url, status: response.status, headers: response.headers, text });
  if (problems.length > 0)
    mismatches.push(`${method.toUpperCase()} ${url} → ${response.status}:\n    ${problems.join('\n    ')}`);
  return response;
};

function expectNoMismatch(): void {
  if (mismatches.length === 0) return;
  const found = mismatches.splice(0);
  throw new Error(`${found.length} answer(s) did not conform to docs/openapi.json:\n  ${found.join('\n  ')}`);
}

afterEach(expectNoMismatch);
afterAll(expectNoMismatch);
