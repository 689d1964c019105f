import { jsonApiHandler, type Event } from '#shared/http/handler';
import { headerValues } from '#shared/http/headers';
import { receiveRunNotification } from '#shared/run-notifications/operations';
import { SIGNATURE_HEADER } from '#shared/run-notifications/signature';

/** POST /run-notifications/:organization_name — HCP Terraform's signed generic webhook; no token. */
export const handler = jsonApiHandler('run-notifications/receive', async ({ event, pathParameters }) => {
  await receiveRunNotification(pathParameters.organization_name!, rawBody(event), signaturesOf(event));
  return { status: 204 };
});

/** The bytes HCP Terraform signed: API Gateway passes a text body as is, a binary one base64-encoded. */
const rawBody = (event: Event) => Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8');

/** Every signature the request carries: headers holds only the last of a repeated header, multiValueHeaders all. */
const signaturesOf = (event: Event): string[] => {
  const values = headerValues(event.multiValueHeaders, SIGNATURE_HEADER);
  const single = event.headers[SIGNATURE_HEADER.toLowerCase()];
  return values.length > 0 ? values : single === undefined ? [] : [single];
};
