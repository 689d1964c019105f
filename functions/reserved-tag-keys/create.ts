import { jsonApiHandler } from '#shared/http/handler';
import { idempotentCreate } from '#shared/http/idempotency';
import { RESERVED_TAG_KEY_TYPE, serializeReservedTagKey } from '#shared/reserved-tag-keys/reserved-tag-key';
import { createKey } from '#shared/reserved-tag-keys/service';

/** POST /organizations/:organization_name/reserved-tag-keys — safe to retry. */
export const handler = jsonApiHandler(
  'reserved-tag-keys/create',
  idempotentCreate('reserved-tag-keys/create', async ({ pathParameters, data, authorize }) => {
    const key = await createKey(pathParameters.organization_name!, data.attributes, authorize);
    return { status: 201, document: { data: serializeReservedTagKey(key) } };
  }, {
    refuseEarly: ({ pathParameters, authorize }) => { authorize(pathParameters.organization_name!); },
  }),
  { bodyType: RESERVED_TAG_KEY_TYPE },
);
