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

/**
 * Every API function's timeout. A request that waits its turn on a busy run or organization may
 * wait for most of it (shared/store/contention.ts) before it answers 503: 15 s lets 60 writers
 * arriving at once on one run all commit on a loaded store (docs/performance.md), where 10 s gave
 * up on more than half of them. Lambda gives a cold start's init 10 s of its own, so even a cold
 * request (≤ 25 s) ends inside API Gateway's 29 s integration timeout.
 */
export const FUNCTION_TIMEOUT_SECONDS = 15;

/** How long API Gateway (and the local gateway) reuse an authorizer result for the same token. */
export const AUTHORIZER_CACHE_TTL_SECONDS = 60;
