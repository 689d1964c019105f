/** Product identity, sent as `TFP-AppName` and used as the token prefix. */
export const APP_NAME = 'tfc-tags-comments';
export const API_BASE_PATH = '/api/v2';
export const API_VERSION = '2.6';
/** Requests per second per token; go-tfe sizes its client-side limiter from this header. */
export const RATE_LIMIT_PER_SECOND = 30;
/** Largest request body any endpoint accepts (the gateway answers 413 above it). */
export const MAX_BODY_BYTES = 64 * 1024;

/** Reads a required environment variable, failing loudly at first use instead of deep inside a request. */
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Missing required environment variable ${name}`);
  return value;
}

/** How long API Gateway (and the local gateway) reuse an authorizer result for the same token. */
export const AUTHORIZER_CACHE_TTL_SECONDS = 60;
