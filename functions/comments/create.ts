import { jsonApiHandler } from '#shared/http/handler';
import { idempotentCreate } from '#shared/http/idempotency';
import { COMMENT_TYPE, serializeComment } from '#shared/comments/comment';
import { createComment } from '#shared/comments/comments';
import { isId } from '#shared/ids';
import { NotFound } from '#shared/jsonapi/errors';

/** POST /runs/:run_id/comments — owner or member of the run's organization; safe to retry. */
export const handler = jsonApiHandler(
  'comments/create',
  idempotentCreate('comments/create', async (request) => {
    const comment = await createComment(request.pathParameters.run_id, request.data.attributes, request);
    return { status: 201, document: { data: serializeComment(comment) } };
  }, {
    refuseEarly: ({ pathParameters }) => { if (!isId('run', pathParameters.run_id)) throw new NotFound(); },
  }),
  { bodyType: COMMENT_TYPE },
);
