import { jsonApiHandler } from '#shared/http/handler';
import { receiptFor, replayHeaders } from '#shared/http/safe-retries';
import { COMMENT_TYPE, serializeComment } from '#shared/comments/comment';
import { createComment } from '#shared/comments/operations';

/** POST /runs/:run_id/comments — owner or member of the run's organization; safe to retry. */
export const handler = jsonApiHandler(
  'comments/create',
  async (request) => {
    const answer = await createComment(
      request.pathParameters.run_id,
      request.data.attributes,
      request,
      receiptFor(request, 'comments/create'),
    );
    return { status: 201, document: { data: serializeComment(answer.record) }, headers: replayHeaders(answer) };
  },
  { bodyType: COMMENT_TYPE },
);
