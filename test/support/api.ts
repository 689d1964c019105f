import { request as httpRequest } from 'node:http';
import { createToken } from '#shared/store/tokens';
import type { Role } from '#shared/auth/principal';
import { API_BASE_PATH } from '#shared/config';

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body; undefined when empty. */
  json: any;
}

export interface RequestOptions {
  token?: string;
  /** An object is sent as JSON; a string as it is. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** A client for the local gateway, as an API caller sees it: over HTTP, paths under /api/v2. */
export class TestApi {
  readonly baseUrl: string;

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.Authorization = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      headers['Content-Type'] ??= 'application/vnd.api+json';
    }
    const response = await fetch(`${this.baseUrl}${API_BASE_PATH}${path}`, { method, headers, body });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, json: text ? JSON.parse(text) : undefined };
  }

  /**
   * A request with exactly these header lines, in this order (fetch folds a repeated header into
   * one line): for what a client sends twice. Host is added; the body is sent as it is.
   */
  requestWithLines(
    method: string,
    path: string,
    lines: string[][],
    body?: string,
  ): Promise<{ status: number; json: any }> {
    const url = new URL(`${this.baseUrl}${API_BASE_PATH}${path}`);
    const headers = [
      ['Host', url.host],
      ...(body === undefined ? [] : [['Content-Length', String(Buffer.byteLength(body))]]),
      ...lines,
    ];
    return new Promise((resolve, reject) => {
      const request = httpRequest(
        { host: url.hostname, port: url.port, path: url.pathname, method, headers: headers.flat() },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: response.statusCode!, json: text ? JSON.parse(text) : undefined });
          });
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  }

  get = (path: string, options?: RequestOptions) => this.request('GET', path, options);
  post = (path: string, options?: RequestOptions) => this.request('POST', path, options);
  patch = (path: string, options?: RequestOptions) => this.request('PATCH', path, options);
  delete = (path: string, options?: RequestOptions) => this.request('DELETE', path, options);
}

/** A token of `role` in each named organization, created in the store as the operator would. */
export async function tokenFor(grants: Record<string, Role>, subject = 'user-test'): Promise<string> {
  return (await createToken({ subject, grants })).token;
}

/** The contract's error body, for exact comparisons. */
export const errorBody = (status: number, title: string, detail?: string, pointer?: string) => ({
  errors: [
    {
      status: String(status),
      title,
      ...(detail !== undefined ? { detail } : {}),
      ...(pointer ? { source: { pointer } } : {}),
    },
  ],
});

/** Headers of contract section 6, present on every response. */
export function expectContractHeaders(response: ApiResponse, hasBody = true) {
  const h = response.headers;
  const expected: Record<string, string | null> = {
    'tfp-api-version': '2.6',
    'x-ratelimit-limit': '30',
    'tfp-appname': 'tfc-tags-comments',
    'cache-control': 'no-store',
    // A 204 has no body; API Gateway (REST) gives a proxy response that names no type `application/json`.
    'content-type': hasBody ? 'application/vnd.api+json' : 'application/json',
  };
  const actual = Object.fromEntries(Object.keys(expected).map((k) => [k, h.get(k)]));
  return { actual, expected };
}

/**
 * Sends a request again, as a client does, while it answers the contract's busy 503 (the run or
 * organization was busy and nothing was written): after its Retry-After, at most `attempts` times.
 */
export async function retryingBusy(send: () => Promise<ApiResponse>, attempts = 3): Promise<ApiResponse> {
  for (let attempt = 1; ; attempt++) {
    const answer = await send();
    if (answer.status !== 503 || attempt === attempts || !/busy with other writes/.test(answer.json.errors[0].detail))
      return answer;
    await new Promise((resolve) => setTimeout(resolve, Number(answer.headers.get('retry-after')) * 1000));
  }
}
