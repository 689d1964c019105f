import { jsonApiHandler, type Event } from '#shared/http/handler';
import { receiveRunNotification } from '#shared/run-notifications/receive';
import { SIGNATURE_HEADER } from '#shared/run-notifications/signature';

/** POST /run-notifications/:organization_name — HCP Terraform's signed generic webhook; no token. */
export const handler = jsonApiHandler('run-notifications/receive', async ({ event, pathParameters }) => {
  await receiveRunNotification(pathParameters.organization_name!, rawBody(event), event.headers[SIGNATURE_HEADER.toLowerCase()]);
  return { status: 204 };
});

/** The bytes HCP Terraform signed: API Gateway passes a text body as is, a binary one base64-encoded. */
const rawBody = (event: Event) => Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8');
