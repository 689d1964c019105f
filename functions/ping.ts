import { jsonApiHandler } from '#shared/http/handler';

/** go-tfe's NewClient calls this once and reads only its headers (X-RateLimit-Limit, TFP-API-Version). */
export const handler = jsonApiHandler('ping', async () => ({ status: 204 }));
