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
}

function parseMediaRange(text: string): MediaRange {
  const [type = '', ...params] = text.split(';');
  const parameters = params
    .map((p) => p.split('=')[0]!.trim().toLowerCase())
    .filter((name) => name !== '' && name !== 'q'); // q is an Accept weight, not a media type parameter
  return { type: type.trim().toLowerCase(), parameters };
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
    throw new UnsupportedMediaType(`media type parameter ${unsupported[0]} is not supported: ${JSONAPI_MEDIA_TYPE} takes only ext and profile`);
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
  const ranges = accept.split(',').map(parseMediaRange).filter((r) => r.type !== '');
  if (ranges.length === 0) return;
  const jsonApi = ranges.filter((r) => r.type === JSONAPI_MEDIA_TYPE);
  const usable = (r: MediaRange) => r.parameters.every((p) => JSONAPI_PARAMETERS.has(p));
  if (jsonApi.length > 0 && !jsonApi.some(usable)) {
    throw new NotAcceptable(`${JSONAPI_MEDIA_TYPE} with media type parameters cannot be served`);
  }
  if (!ranges.some((r) => ACCEPTABLE.has(r.type))) {
    throw new NotAcceptable(`responses are ${JSONAPI_MEDIA_TYPE}`);
  }
}
