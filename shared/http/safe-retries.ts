import { hash as digest } from 'node:crypto';
import { BadRequest, InvalidAttribute } from '../jsonapi/errors';
import type { Receipt, Replay } from '../store/receipts';
import type { ApiRequest } from './handler';
import { distinctHeaderValues } from './headers';

/**
 * Safe retries of a create: a retry that names the same receipt (shared/store/receipts.ts) gets the
 * first response back and writes nothing, and concurrent ones make one resource. With an
 * `Idempotency-Key`, the receipt is that key's from that token on that function for
 * KEYED_WINDOW_SECONDS (another body or path: 422); without one (python-tfe replays a POST and
 * sends no key), the same body from that token on that path for REPLAY_WINDOW_SECONDS. A refused
 * create commits nothing, so a corrected retry runs.
 */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const KEYED_WINDOW_SECONDS = 24 * 60 * 60;
/**
 * Covers python-tfe's whole retry schedule at its defaults (pytfe/_http.py, config.py): it retries
 * 429, 502, 503, 504 and lost connections up to 5 times, sleeping Retry-After when given (uncapped:
 * the WAF's 429 says 60 s) and min(0.5 s × 2^attempt, 8 s) otherwise, each attempt bounded by its
 * 30 s timeout. At worst 6 attempts × 30 s + 5 waits × 60 s = 480 s: every replay of a create that
 * committed lands inside the window. The cost: a deliberate identical second comment by the same
 * token within 10 minutes needs an Idempotency-Key of its own (or other text).
 */
export const PYTHON_TFE_LONGEST_RETRY_SECONDS = 6 * 30 + 5 * 60;
export const REPLAY_WINDOW_SECONDS = 600;
/**
 * Stripe's bound; printable ASCII (0x20-0x7e, so `retry 1 of job 42` is a key) so the key is a
 * header value anywhere. Spaces around a header value are not part of it (RFC 9110 §5.5: the
 * server's HTTP parser strips them), so ` k ` is the key `k`, and a key of spaces alone is empty.
 */
export const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** JSON with object members in a fixed order, so the same request always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const members = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${members.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const hash = (...parts: unknown[]) => digest('sha256', canonical(parts), 'base64url');

/** The receipt `functionName`'s create writes for this request (400 for a malformed key). */
export function receiptFor(
  request: Pick<ApiRequest, 'event' | 'pathParameters' | 'data' | 'principal'>,
  functionName: string,
): Receipt {
  // Two keys are no key: which one a retry repeats would decide whether it makes a second resource.
  const sent = distinctHeaderValues(request.event, IDEMPOTENCY_KEY_HEADER);
  if (sent.length > 1) throw new BadRequest(`more than one ${IDEMPOTENCY_KEY_HEADER} header: send exactly one`);
  const key = sent[0];
  if (key !== undefined && !KEY_PATTERN.test(key))
    throw new BadRequest(`${IDEMPOTENCY_KEY_HEADER} must be 1 to 255 printable ASCII characters`);
  const asked = hash(request.pathParameters, request.data);
  const now = Math.floor(Date.now() / 1000);
  // A workload identity's tokenId names its trusts, which many workloads share: its subject tells them apart.
  const token = [request.principal.tokenId, request.principal.subject];
  return key === undefined
    ? {
        id: hash(token, functionName, 'replay', asked),
        fingerprint: asked,
        expiresAt: now + REPLAY_WINDOW_SECONDS,
        keyed: false,
      }
    : {
        id: hash(token, functionName, 'key', key),
        fingerprint: asked,
        expiresAt: now + KEYED_WINDOW_SECONDS,
        keyed: true,
      };
}

/** What a create answers with: the record, and whether a retry's answer came from the first create's receipt. */
export interface Created<T> {
  record: T;
  replayed: boolean;
}

/** A create that ran: its own first answer. */
export const firstAnswer = <T>(record: T): Created<T> => ({ record, replayed: false });

/** What a retry is answered with: the first create's record, unless the key was reused for something else. */
export function replayed<T>(receipt: Receipt, replay: Replay<T>): Created<T> {
  if (replay.replayOf.fingerprint !== receipt.fingerprint) {
    throw new InvalidAttribute(
      `${IDEMPOTENCY_KEY_HEADER} has already been used for a different request (another body or path)`,
    );
  }
  return { record: replay.replayOf.record, replayed: true };
}

/** Stripe's header: an answer given from a receipt says so, so a folded repeat is never invisible; a first answer has none. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';
export const replayHeaders = (answer: Created<unknown>): Record<string, string> =>
  answer.replayed ? { [REPLAYED_HEADER]: 'true' } : {};
