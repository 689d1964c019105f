import { jsonApiHandler } from '#shared/http/handler';
import { receiptFor, replayHeaders } from '#shared/http/safe-retries';
import { RESERVED_TAG_KEY_TYPE, serializeReservedTagKey } from '#shared/reserved-tag-keys/reserved-tag-key';
import { createKey } from '#shared/reserved-tag-keys/operations';

/** POST /organizations/:organization_name/reserved-tag-keys — owner of the organization; safe to retry. */
export const handler = jsonApiHandler(
  'reserved-tag-keys/create',
  async (request) => {
    const { pathParameters, data, authorize } = request;
    const answer = await createKey(
      pathParameters.organization_name!,
      data.attributes,
      authorize,
      receiptFor(request, 'reserved-tag-keys/create'),
    );
    return { status: 201, document: { data: serializeReservedTagKey(answer.record) }, headers: replayHeaders(answer) };
  },
  { bodyType: RESERVED_TAG_KEY_TYPE },
);
