import { jsonApiHandler } from '#shared/http/handler';
import { deleteKey } from '#shared/reserved-tag-keys/operations';

/** DELETE /reserved-tags/:reserved_tag_key_id and /reserved-tag-keys/:reserved_tag_key_id — owner of the key's organization. */
export const handler = jsonApiHandler('reserved-tag-keys/delete', async ({ pathParameters, authorize }) => {
  await deleteKey(pathParameters.reserved_tag_key_id, authorize);
  return { status: 204 };
});
