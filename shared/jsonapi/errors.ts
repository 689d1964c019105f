/**
 * Errors with meaning. Thrown anywhere, shaped into the contract's error body in one place
 * (`shared/http/errors-middleware.ts`). Anything that is not an ApiError becomes a 500 whose
 * message is never shown.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly title: string;
  readonly detail?: string;
  readonly pointer?: string;
  readonly headers: Record<string, string>;

  constructor(status: number, title: string, detail?: string, pointer?: string, headers: Record<string, string> = {}) {
    super(detail ?? title);
    this.status = status;
    this.title = title;
    this.detail = detail;
    this.pointer = pointer;
    this.headers = headers;
    this.name = new.target.name;
  }
}

export class BadRequest extends ApiError {
  constructor(detail: string) {
    super(400, 'bad request', detail);
  }
}
/** 401: the detail says what was wrong with the credentials, never which check a token failed. */
export class Unauthorized extends ApiError {
  constructor(detail?: string) {
    super(401, 'unauthorized', detail);
  }
}
export class Forbidden extends ApiError {
  constructor(detail: string) {
    super(403, 'forbidden', detail);
  }
}
/** Also what a caller gets for anything it may not see: no response reveals that it exists. */
export class NotFound extends ApiError {
  constructor() {
    super(404, 'not found');
  }
}
export class MethodNotAllowed extends ApiError {
  constructor() {
    super(405, 'method not allowed');
  }
}
export class NotAcceptable extends ApiError {
  constructor(detail: string) {
    super(406, 'not acceptable', detail);
  }
}
export class Conflict extends ApiError {
  constructor(detail: string) {
    super(409, 'conflict', detail);
  }
}
export class PayloadTooLarge extends ApiError {
  constructor(limit: number) {
    super(413, 'payload too large', `request body must not exceed ${limit} bytes`);
  }
}
export class UnsupportedMediaType extends ApiError {
  constructor(detail: string) {
    super(415, 'unsupported media type', detail);
  }
}
export class InvalidAttribute extends ApiError {
  constructor(detail: string, pointer?: string) {
    super(422, 'invalid attribute', detail, pointer);
  }
}
export class Unavailable extends ApiError {
  constructor(detail?: string, retryAfterSeconds = 1) {
    super(503, 'service unavailable', detail, undefined, { 'Retry-After': String(retryAfterSeconds) });
  }
}
/** A 503 for a write the store may have applied after all: the client must not take it as a failure. */
export class WriteOutcomeUnknown extends Unavailable {
  constructor() {
    super(
      'The store did not confirm the write in time: its outcome is unknown. Retrying a create is safe with the same Idempotency-Key header, or without one as the identical request within 10 minutes; an update is safe to retry as is; a delete retried after it took effect answers 404 Not Found, which then means it is gone.',
    );
  }
}
/** The function gave up shortly before its own timeout (shared/http/handler.ts). */
export class GatewayTimeout extends ApiError {
  constructor() {
    super(504, 'gateway timeout');
  }
}
export class InternalError extends ApiError {
  constructor() {
    super(500, 'internal server error');
  }
}

export interface ErrorObject {
  status: string;
  title: string;
  detail?: string;
  source?: { pointer: string };
}

/** The contract's error document; `status` is a string because go-tfe cannot decode a number. */
export function errorDocument(error: ApiError): { errors: ErrorObject[] } {
  const object: ErrorObject = { status: String(error.status), title: error.title };
  if (error.detail !== undefined) object.detail = error.detail;
  if (error.pointer !== undefined) object.source = { pointer: error.pointer };
  return { errors: [object] };
}
