import { BadRequest, Conflict, PayloadTooLarge } from './errors';
import { MAX_BODY_BYTES } from '../config';

/** The primary data of a request document, checked against the JSON:API rules the contract names. */
export interface RequestData {
  type: string;
  id?: string;
  attributes: Record<string, unknown>;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Far deeper than any request document (data.attributes.x is 3 levels), far shallower than what
 * recursive code downstream (the request's fingerprint, the SDK's marshalling) could overflow on.
 */
export const MAX_DOCUMENT_DEPTH = 64;

/** Whether `value` nests arrays and objects more than `limit` levels deep; iterative, so any depth is safe. */
function depthExceeds(value: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [node, depth] = next;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(node)) pending.push([child, depth + 1]);
  }
  return false;
}

/**
 * Parses a POST/PATCH body: 413 over the size cap, 400 when it is not JSON, is nested deeper than
 * MAX_DOCUMENT_DEPTH or has no object `data`,
 * 409 when `data.type` is not the endpoint's type or `data.id` differs from the path's id.
 */
export function parseRequestDocument(body: string | null, expectedType: string, pathId?: string): RequestData {
  if (body !== null && Buffer.byteLength(body, 'utf8') > MAX_BODY_BYTES) throw new PayloadTooLarge(MAX_BODY_BYTES);
  if (body === null || body.trim() === '') throw new BadRequest('request body is missing');
  let document: unknown;
  try {
    document = JSON.parse(body);
  } catch {
    throw new BadRequest('request body is not valid JSON');
  }
  if (!isObject(document)) throw new BadRequest('request body must be a JSON object');
  if (depthExceeds(document, MAX_DOCUMENT_DEPTH)) {
    throw new BadRequest(`request body is nested more than ${MAX_DOCUMENT_DEPTH} levels deep`);
  }
  const data = document.data;
  if (!isObject(data)) throw new BadRequest('request body must have an object "data" member');
  if (data.type !== expectedType) {
    throw new Conflict(`data.type must be "${expectedType}"`);
  }
  if (data.id !== undefined && pathId !== undefined && data.id !== pathId) {
    throw new Conflict('data.id does not match the id in the path');
  }
  if (data.attributes !== undefined && !isObject(data.attributes)) {
    throw new BadRequest('data.attributes must be an object');
  }
  return {
    type: expectedType,
    ...(typeof data.id === 'string' ? { id: data.id } : {}),
    attributes: (data.attributes as Record<string, unknown> | undefined) ?? {},
  };
}
