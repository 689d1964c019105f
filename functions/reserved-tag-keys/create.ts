import { jsonApiHandler } from '#shared/http/handler';
import { RESERVED_TAG_KEY_TYPE, serializeReservedTagKey } from '#shared/reserved-tag-keys/reserved-tag-key';
import { createKey } from '#shared/reserved-tag-keys/service';

/** POST /organizations/:organization_name/reserved-tag-keys */
export const handler = jsonApiHandler(
  'reserved-tag-keys/create',
  async ({ pathParameters, data, authorize }) => {
    const key = await createKey(pathParameters.organization_name!, data.attributes, authorize);
    return { status: 201, document: { data: serializeReservedTagKey(key) } };
  },
  { bodyType: RESERVED_TAG_KEY_TYPE },
);
