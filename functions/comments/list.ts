import { jsonApiHandler } from '#shared/http/handler';
import { listDocument } from '#shared/jsonapi/document';
import { pageRange, parsePage } from '#shared/jsonapi/pagination';
import { COMMENTS_DEFAULT_PAGE_SIZE, serializeComment } from '#shared/comments/comment';
import { listRunComments } from '#shared/comments/operations';

/** GET /runs/:run_id/comments — oldest first; 100 per page when no page parameter is sent. */
export const handler = jsonApiHandler('comments/list', async (request) => {
  const page = parsePage(request.query, COMMENTS_DEFAULT_PAGE_SIZE);
  const comments = await listRunComments(request.pathParameters.run_id, pageRange(page), request);
  return { status: 200, document: listDocument(comments, page, request.url, serializeComment) };
});
