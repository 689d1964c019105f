import { jsonApiHandler } from '#shared/http/handler';
import { listDocument } from '#shared/jsonapi/document';
import { pageRange, parsePage } from '#shared/jsonapi/pagination';
import { serializeReservedTagKey } from '#shared/reserved-tag-keys/reserved-tag-key';
import { listKeys } from '#shared/reserved-tag-keys/operations';

/** GET /organizations/:organization_name/reserved-tag-keys */
export const handler = jsonApiHandler('reserved-tag-keys/list', async ({ pathParameters, query, authorize, url }) => {
  const page = parsePage(query);
  const keys = await listKeys(pathParameters.organization_name!, pageRange(page), authorize);
  return { status: 200, document: listDocument(keys, page, url, serializeReservedTagKey) };
});
