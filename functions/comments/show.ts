import { jsonApiHandler } from '#shared/http/handler';
import { serializeComment } from '#shared/comments/comment';
import { showComment } from '#shared/comments/operations';

/** GET /comments/:comment_id — any role in the organization of the comment's run. */
export const handler = jsonApiHandler('comments/show', async (request) => {
  const comment = await showComment(request.pathParameters.comment_id, request);
  return { status: 200, document: { data: serializeComment(comment) } };
});
