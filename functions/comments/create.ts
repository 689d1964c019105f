import { jsonApiHandler } from '#shared/http/handler';
import { COMMENT_TYPE, serializeComment } from '#shared/comments/comment';
import { createComment } from '#shared/comments/comments';

/** POST /runs/:run_id/comments — owner or member of the run's organization. */
export const handler = jsonApiHandler(
  'comments/create',
  async (request) => {
    const comment = await createComment(request.pathParameters.run_id, request.data.attributes, request);
    return { status: 201, document: { data: serializeComment(comment) } };
  },
  { bodyType: COMMENT_TYPE },
);
