import { NotAcceptable, UnsupportedMediaType } from './errors';

export const JSONAPI_MEDIA_TYPE = 'application/vnd.api+json';
const JSON_MEDIA_TYPE = 'application/json';
/** The request body types the functions read (POST and PATCH): API Gateway hands them over as the client's bytes. */
export const JSON_BODY_TYPES = [JSONAPI_MEDIA_TYPE, JSON_MEDIA_TYPE] as const;
/** JSON:API 1.1 allows these two media type parameters; any other one makes the type unusable. */
const JSONAPI_PARAMETERS = new Set(['ext', 'profile']);

interface MediaRange {
  type: string;
  parameters: string[];
  /** The Accept weight: 0 means "not acceptable" (RFC 9110 §12.4.2). */
  weight: number;
}

/** `text` split at each `separator` outside quoted strings, whose values may hold it (RFC 9110 §5.6.4). */
function splitOutsideQuotes(text: string, separator: ',' | ';'): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    if (quoted && text[i] === '\\')
      i++; // an escaped character, a quote included
    else if (text[i] === '"') quoted = !quoted;
    else if (!quoted && text[i] === separator) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  return [...parts, text.slice(start)];
}

/** RFC 9110 §12.4.2's qvalue: 0 to 1 with at most three decimals. */
const QVALUE = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/;

function parseMediaRange(text: string): MediaRange {
  const [type = '', ...params] = splitOutsideQuotes(text, ';');
  const named = params
    .map((p) => {
      const [name = '', value = ''] = p.split('=', 2);
      return { name: name.trim().toLowerCase(), value: value.trim() };
    })
    .filter(({ name }) => name !== '');
  const q = named.find(({ name }) => name === 'q');
  return {
    type: type.trim().toLowerCase(),
    parameters: named.map(({ name }) => name).filter((name) => name !== 'q'), // q is an Accept weight, not a media type parameter
    weight: q !== undefined && QVALUE.test(q.value) ? Number(q.value) : 1, // a malformed weight is no weight
  };
}

/** What a 415 says is accepted: both types the functions read. */
const ACCEPTED = `Content-Type must be ${JSONAPI_MEDIA_TYPE} (${JSON_MEDIA_TYPE} is accepted too)`;

/** POST and PATCH bodies: JSON:API (with at most ext/profile) or plain JSON, else 415. */
export function assertRequestContentType(contentType: string | undefined): void {
  if (!contentType) throw new UnsupportedMediaType(`${ACCEPTED}; the request has none`);
  const { type, parameters } = parseMediaRange(contentType);
  if (type === JSON_MEDIA_TYPE) return;
  if (type === JSONAPI_MEDIA_TYPE) {
    const unsupported = parameters.filter((p) => !JSONAPI_PARAMETERS.has(p));
    if (unsupported.length === 0) return;
    throw new UnsupportedMediaType(
      `media type parameter ${unsupported[0]} is not supported: ${JSONAPI_MEDIA_TYPE} takes only ext and profile`,
    );
  }
  throw new UnsupportedMediaType(`${ACCEPTED}, not ${type || 'empty'}`);
}

const ACCEPTABLE = new Set(['*/*', 'application/*', JSON_MEDIA_TYPE, JSONAPI_MEDIA_TYPE]);

/**
 * 406 when the client can take nothing we send: every JSON:API range in Accept carries a
 * parameter other than ext/profile (the JSON:API rule), or no range matches JSON at all.
 */
export function assertAcceptable(accept: string | undefined): void {
  // What clients send (go-tfe's JSON:API type, curl's */*): one acceptable range without parameters.
  if (!accept || ACCEPTABLE.has(accept) || accept.trim() === '') return;
  const sent = splitOutsideQuotes(accept, ',')
    .map(parseMediaRange)
    .filter((r) => r.type !== '');
  if (sent.length === 0) return;
  const ranges = sent.filter((r) => r.weight > 0);
  const jsonApi = ranges.filter((r) => r.type === JSONAPI_MEDIA_TYPE);
  const usable = (r: MediaRange) => r.parameters.every((p) => JSONAPI_PARAMETERS.has(p));
  if (jsonApi.length > 0 && !jsonApi.some(usable)) {
    throw new NotAcceptable(`${JSONAPI_MEDIA_TYPE} with media type parameters cannot be served`);
  }
  if (!ranges.some((r) => ACCEPTABLE.has(r.type))) {
    throw new NotAcceptable(`responses are ${JSONAPI_MEDIA_TYPE}`);
  }
}
