import { organizationsWith } from '#shared/auth/principal';
import { jsonApiHandler } from '#shared/http/handler';
import { deleteKey } from '#shared/reserved-tag-keys/service';

/** DELETE /reserved-tags/:reserved_tag_key_id and /reserved-tag-keys/:reserved_tag_key_id — owner of the key's organization. */
export const handler = jsonApiHandler('reserved-tag-keys/delete', async ({ pathParameters, authorize, principal }) => {
  await deleteKey(pathParameters.reserved_tag_key_id, authorize, organizationsWith(principal, 'owner'));
  return { status: 204 };
});
