import { InvalidAttribute } from '../jsonapi/errors';
import { relationship, selfLink } from '../jsonapi/document';
import type { CommentResource } from '../openapi/schemas';
import { COMMENT_TYPE, INVALID_CHARACTER, MAX_COMMENT_BODY_BYTES } from './body-rule';

export { COMMENT_TYPE, INVALID_CHARACTER, MAX_COMMENT_BODY_BYTES };

/** go-tfe's Comments.List sends no page parameters and never asks for page 2. */
export const COMMENTS_DEFAULT_PAGE_SIZE = 100;

/** A comment as stored; immutable once written. */
export interface Comment {
  id: string;
  runId: string;
  /** The run's organization, kept on the comment so showing it needs no second read. */
  organization: string;
  body: string;
  /** principal.subject of the token that wrote it. */
  createdBy: string;
  createdAt: string;
}

const BODY_POINTER = '/data/attributes/body';

/** The body as sent (never trimmed or normalized: it comes back byte for byte), or a 422. */
export function validateCommentBody(value: unknown): string {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
    throw new InvalidAttribute("Body can't be blank", BODY_POINTER);
  }
  if (typeof value !== 'string') throw new InvalidAttribute('Body must be a string', BODY_POINTER);
  if (Buffer.byteLength(value, 'utf8') > MAX_COMMENT_BODY_BYTES) {
    throw new InvalidAttribute(`Body is too long (maximum is ${MAX_COMMENT_BODY_BYTES} bytes)`, BODY_POINTER);
  }
  if (INVALID_CHARACTER.test(value)) throw new InvalidAttribute('Body contains invalid characters', BODY_POINTER);
  return value;
}

/** The one serialization of a comment, used by list, show and create alike; its type is the OpenAPI document's schema. */
export function serializeComment(comment: Comment): CommentResource {
  return {
    id: comment.id,
    type: COMMENT_TYPE,
    attributes: { body: comment.body, 'created-at': comment.createdAt },
    relationships: {
      run: relationship('runs', comment.runId),
      'created-by': relationship('users', comment.createdBy),
    },
    links: { self: selfLink(`/comments/${comment.id}`) },
  };
}
