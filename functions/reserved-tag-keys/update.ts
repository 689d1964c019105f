import { jsonApiHandler } from '#shared/http/handler';
import { RESERVED_TAG_KEY_TYPE, serializeReservedTagKey } from '#shared/reserved-tag-keys/reserved-tag-key';
import { updateKey } from '#shared/reserved-tag-keys/operations';

/** PATCH /reserved-tags/:reserved_tag_key_id and /reserved-tag-keys/:reserved_tag_key_id */
export const handler = jsonApiHandler(
  'reserved-tag-keys/update',
  async ({ pathParameters, data, authorize }) => {
    const key = await updateKey(pathParameters.reserved_tag_key_id, data.attributes, authorize);
    return { status: 200, document: { data: serializeReservedTagKey(key) } };
  },
  { bodyType: RESERVED_TAG_KEY_TYPE, idParameter: 'reserved_tag_key_id' },
);
