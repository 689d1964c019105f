import * as z from 'zod';
import { API_BASE_PATH, API_VERSION, APP_NAME, MAX_BODY_BYTES, RATE_LIMIT_PER_SECOND } from '#shared/config';
import { routes as routeTable, type Route } from '#shared/routes';
import { COMMON_HEADERS, REQUEST_ID_HEADER } from '#shared/http/responses';
import {
  IDEMPOTENCY_KEY_HEADER,
  KEY_PATTERN as IDEMPOTENCY_KEY_PATTERN,
  REPLAYED_HEADER,
} from '#shared/http/safe-retries';
import { SERVICE_DISCOVERY_MEDIA_TYPE, SERVICE_DISCOVERY_PATH } from '#shared/http/service-discovery';
import { HEALTH_ROUTE } from '#shared/health';
import { JSON_BODY_TYPES, JSONAPI_MEDIA_TYPE } from '#shared/jsonapi/media-type';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_NUMBER, MAX_PAGE_SIZE } from '#shared/jsonapi/pagination';
import { COMMENTS_DEFAULT_PAGE_SIZE } from '#shared/comments/comment';
import { SIGNATURE_HEADER } from '#shared/run-notifications/signature';
import { TOKEN_PREFIX } from '#shared/auth/token-secret';
import { componentsRegistry, id, organizationName } from '#shared/openapi/schemas';

/**
 * The OpenAPI 3.1 document of the whole API (docs/openapi.json), built from the route table and
 * the schemas of shared/openapi/schemas.ts: `npm run openapi` writes it, test/unit/openapi.test.ts
 * fails when the committed one differs, and every e2e answer is validated against it.
 */

type Json = Record<string, unknown>;

/**
 * The package is private (package.json `"private": true`, no `license`) and grants no license, so
 * the document says exactly that, in SPDX's form for a license of one's own (`LicenseRef-`): an
 * identifier, as OpenAPI 3.1 and Redocly's strict set (info-license-strict) want, without
 * claiming an open-source license nobody chose.
 */
const LICENSE = { name: 'Proprietary: no license is granted', identifier: 'LicenseRef-Proprietary' };
/** Each deployment is its platform team's: the one to ask is whoever operates the stage a client calls. */
const CONTACT = { name: 'The platform team that operates this deployment (its runbooks: docs/runbooks.md)' };
const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
/** A zod schema as a plain JSON Schema (2020-12, OpenAPI 3.1's dialect), its `$schema` dropped. */
function jsonSchema(schema: z.ZodType): Json {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12' }) as Json;
  return rest;
}
/** The registered schemas as `#/components/schemas`, each without its `$schema` and `$id`. */
function componentSchemas(): Json {
  const { schemas } = z.toJSONSchema(componentsRegistry, {
    target: 'draft-2020-12',
    uri: (name) => `#/components/schemas/${name}`,
  }) as { schemas: Record<string, Json> };
  return Object.fromEntries(
    Object.entries(schemas).map(([name, { $schema: _s, $id: _i, ...schema }]) => [name, schema]),
  );
}

/** What each operation says beyond the route table: its words, its body and its success. */
interface OperationFacts {
  tag: string;
  summary: string;
  description?: string;
  request?: { schema: string; types: readonly string[] };
  success: { status: 200 | 201 | 204; description: string; schema?: string };
  /** The errors it can answer, besides the ones every operation shares. */
  errors: readonly ErrorStatus[];
}

type ErrorStatus = 400 | 401 | 403 | 404 | 406 | 409 | 413 | 415 | 422 | 429 | 503;

const jsonApiBody = (schema: string) => ({ schema, types: JSON_BODY_TYPES });
const keyErrors: ErrorStatus[] = [401, 403, 404, 503];
const writeErrors: ErrorStatus[] = [409, 413, 415, 422];
const ALIAS =
  "The same operation is on both paths: HCP Terraform's API docs name `/reserved-tags/{id}`, go-tfe and python-tfe call `/reserved-tag-keys/{id}`.";
/** Both creates answer a retry with the first answer (shared/http/safe-retries.ts). */
const CREATED_OR_REPLAYED = `Created (or, for a retry, the first answer, with ${REPLAYED_HEADER}: true)`;

const OPERATIONS: Record<string, OperationFacts> = {
  ping: {
    tag: 'ping',
    summary: 'Ping',
    description:
      "go-tfe's NewClient calls it once and reads only its headers (X-RateLimit-Limit, TFP-API-Version). No token.",
    success: { status: 204, description: 'The API is up' },
    errors: [],
  },
  listReservedTagKeys: {
    tag: 'reserved-tag-keys',
    summary: "List an organization's reserved tag keys",
    description: 'Any role in the organization; oldest first.',
    success: { status: 200, description: 'A page of reserved tag keys', schema: 'ReservedTagKeyList' },
    errors: [401, 404, 422, 503],
  },
  createReservedTagKey: {
    tag: 'reserved-tag-keys',
    summary: 'Create a reserved tag key',
    description:
      'Owner of the organization. Safe to retry: with an Idempotency-Key, or as the identical request within 10 minutes.',
    request: jsonApiBody('ReservedTagKeyCreate'),
    success: { status: 201, description: CREATED_OR_REPLAYED, schema: 'ReservedTagKeyDocument' },
    errors: [...keyErrors, ...writeErrors],
  },
  updateReservedTagKey: {
    tag: 'reserved-tag-keys',
    summary: 'Update a reserved tag key',
    description: `Owner. Partial: absent attributes stay as they are. ${ALIAS}`,
    request: jsonApiBody('ReservedTagKeyUpdate'),
    success: { status: 200, description: 'The key as it is now', schema: 'ReservedTagKeyDocument' },
    errors: [...keyErrors, ...writeErrors],
  },
  deleteReservedTagKey: {
    tag: 'reserved-tag-keys',
    summary: 'Delete a reserved tag key',
    description: `Owner. ${ALIAS}`,
    success: { status: 204, description: 'Deleted' },
    errors: keyErrors,
  },
  listRunComments: {
    tag: 'comments',
    summary: "List a run's comments",
    description: `Any role in the run's organization; oldest first. Without any page parameter, up to ${COMMENTS_DEFAULT_PAGE_SIZE} (go-tfe's Comments.List sends none).`,
    success: { status: 200, description: 'A page of comments', schema: 'CommentList' },
    errors: [401, 404, 422, 503],
  },
  createRunComment: {
    tag: 'comments',
    summary: 'Create a comment on a run',
    description: "Owner or member of the run's organization. Safe to retry, as creating a reserved tag key is.",
    request: jsonApiBody('CommentCreate'),
    success: { status: 201, description: CREATED_OR_REPLAYED, schema: 'CommentDocument' },
    errors: [...keyErrors, ...writeErrors],
  },
  showComment: {
    tag: 'comments',
    summary: 'Show a comment',
    description: "Any role in its run's organization.",
    success: { status: 200, description: 'The comment', schema: 'CommentDocument' },
    errors: [401, 404, 503],
  },
  receiveRunNotification: {
    tag: 'run-notifications',
    summary: 'Receive a run notification',
    description: `HCP Terraform's and Terraform Enterprise's generic webhook, signed in ${SIGNATURE_HEADER} with the organization's secret; no token. A run:* notification registers its run (once) in the organization of the URL.`,
    request: { schema: 'RunNotification', types: ['application/json'] },
    success: { status: 204, description: 'Accepted' },
    errors: [401, 413, 422, 503],
  },
};
// The /reserved-tags/{id} paths are the same operations under HCP Terraform's documented path.
OPERATIONS.updateReservedTag = { ...OPERATIONS.updateReservedTagKey! };
OPERATIONS.deleteReservedTag = { ...OPERATIONS.deleteReservedTagKey! };

/** Every answer may be one of these: an `include` or a malformed body (400), WAF's blocks (403) and limits (429), an unusable Accept (406). */
const SHARED_ERRORS: readonly ErrorStatus[] = [400, 403, 406, 429];

const ERROR_MEANINGS: Record<ErrorStatus, string> = {
  400: 'Bad request: the body is not JSON, has no object data, is not UTF-8 or nested too deeply; an include parameter; a malformed Idempotency-Key; two different Idempotency-Key or Content-Type headers',
  401: 'Unauthorized: no Authorization header, not a Bearer credential, or a credential not accepted (one answer for unknown, revoked and expired); for a run notification, a missing or wrong signature',
  403: 'Forbidden: the role does not allow this, or the web application firewall blocked the request',
  404: 'Not found: it does not exist, or the credential cannot see it (ids of the wrong shape too)',
  406: 'Not acceptable: Accept names no JSON type (application/vnd.api+json, application/json, application/*, */*) with a weight above 0, or every JSON:API media type in it carries a parameter other than ext or profile',
  409: "Conflict: data.type is not this endpoint's, or data.id differs from the path's id",
  413: `Payload too large: the body is over ${MAX_BODY_BYTES} bytes (the web application firewall's answer is application/json)`,
  415: 'Unsupported media type: the body is neither application/vnd.api+json (with at most ext or profile) nor application/json',
  422: 'Invalid attribute: an attribute breaks its rule (source.pointer names it), a taken key, an organization at its limit of reserved tag keys, bad page parameters, or an Idempotency-Key reused for another request',
  429: `Too many requests: over ${RATE_LIMIT_PER_SECOND} requests per second for this token, or over the per-address limit; wait Retry-After seconds (the web application firewall's answer is application/json)`,
  503: 'Service unavailable: the store failed or a run or organization was too busy to wait for; nothing was written unless the detail says the outcome is unknown. Retry after Retry-After seconds',
};
/** WAF's custom responses cannot set their Content-Type: application/json, as clients accept. */
const ALSO_PLAIN_JSON: readonly ErrorStatus[] = [413, 429];

const errorResponseName = (status: number | 'default') => `Error${status}`;
function errorResponse(status: ErrorStatus | 'default'): Json {
  const statusRule = status === 'default' ? { pattern: '^5\\d\\d$' } : { const: String(status) };
  const schema = {
    allOf: [ref('schemas', 'Errors')],
    properties: { errors: { items: { properties: { status: statusRule } } } },
  };
  const types =
    status !== 'default' && ALSO_PLAIN_JSON.includes(status)
      ? [JSONAPI_MEDIA_TYPE, 'application/json']
      : [JSONAPI_MEDIA_TYPE];
  const headers: Json = { ...commonHeaderRefs() };
  if (status !== 'default' && ALSO_PLAIN_JSON.includes(status))
    headers[REQUEST_ID_HEADER] = ref('headers', FIREWALL_REQUEST_ID);
  if (status === 429)
    Object.assign(headers, {
      'Retry-After': ref('headers', 'Retry-After'),
      'X-RateLimit-Reset': ref('headers', 'X-RateLimit-Reset'),
    });
  if (status === 503) headers['Retry-After'] = ref('headers', 'Retry-After');
  return {
    description:
      status === 'default'
        ? 'Server error: 500 internal server error (never the internal message), 504 gateway timeout'
        : ERROR_MEANINGS[status],
    headers,
    content: Object.fromEntries(types.map((type) => [type, { schema }])),
  };
}

/** WAF's custom responses are static: its 413 and 429 carry every contract header but X-Request-Id. */
const FIREWALL_REQUEST_ID = `${REQUEST_ID_HEADER}-Unless-Firewall`;
const commonHeaderRefs = () =>
  Object.fromEntries([REQUEST_ID_HEADER, ...Object.keys(COMMON_HEADERS)].map((name) => [name, ref('headers', name)]));

const HEADER_DESCRIPTIONS: Record<string, string> = {
  [REQUEST_ID_HEADER]: "This request's id, the one the logs carry: quote it when reporting a problem",
  'TFP-API-Version': 'The HCP Terraform API version this service answers as',
  'TFP-AppName': 'This service',
  'X-RateLimit-Limit': 'Requests per second allowed per token (go-tfe sizes its client-side limiter from it)',
  'Cache-Control': 'Never cache an answer',
};
function headerComponents(): Json {
  const headers: Json = {};
  for (const name of [REQUEST_ID_HEADER, ...Object.keys(COMMON_HEADERS)]) {
    const value = COMMON_HEADERS[name];
    headers[name] = {
      description: HEADER_DESCRIPTIONS[name],
      required: true,
      schema: value === undefined ? { type: 'string', minLength: 1 } : { type: 'string', const: value },
    };
  }
  headers[FIREWALL_REQUEST_ID] = {
    description: `${HEADER_DESCRIPTIONS[REQUEST_ID_HEADER]}. Absent when the web application firewall answered (its responses are static; x-amzn-RequestId identifies them)`,
    required: false,
    schema: { type: 'string', minLength: 1 },
  };
  headers['Retry-After'] = {
    description: 'Whole seconds to wait before retrying',
    required: true,
    schema: { type: 'string', pattern: '^\\d+$' },
  };
  headers['X-RateLimit-Reset'] = {
    description: 'Seconds until the limit resets, as a decimal number (go-tfe sleeps this long)',
    required: true,
    schema: { type: 'string', pattern: '^\\d+\\.\\d{3}$' },
  };
  headers[REPLAYED_HEADER] = {
    description: 'Present on the answer to a retried create: the first answer, replayed; nothing was written',
    schema: { type: 'string', const: 'true' },
  };
  return headers;
}

function parameterComponents(): Json {
  const page = (name: string, max: number, description: string) => ({
    name: `page[${name}]`,
    in: 'query',
    required: false,
    description,
    schema: { type: 'integer', minimum: 1, maximum: max },
  });
  return {
    pageNumber: page('number', MAX_PAGE_NUMBER, 'The page, from 1; a page past the end is empty'),
    pageSize: page('size', MAX_PAGE_SIZE, `Items per page, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE})`),
    idempotencyKey: {
      name: IDEMPOTENCY_KEY_HEADER,
      in: 'header',
      required: false,
      description:
        'Makes a create safe to retry: the same key, credential and body within 24 hours returns the first answer and writes nothing; the same key with another body is a 422',
      schema: { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN.source },
    },
    notificationSignature: {
      name: SIGNATURE_HEADER,
      in: 'header',
      required: true,
      description: "Hex HMAC-SHA512 of the raw body, keyed by the organization's notification secret",
      schema: { type: 'string', pattern: '^[0-9A-Fa-f]{128}$' },
    },
  };
}

/** The schema of each path parameter the route table uses. */
const PATH_PARAMETERS: Record<string, { schema: z.ZodType; description: string }> = {
  organization_name: { schema: organizationName, description: 'The organization' },
  reserved_tag_key_id: { schema: id('rtk'), description: 'The reserved tag key' },
  run_id: { schema: id('run'), description: 'The run' },
  comment_id: { schema: id('wsc'), description: 'The comment' },
};

function operation(route: Route): Json {
  const facts = OPERATIONS[route.operationId];
  if (!facts) throw new Error(`No OpenAPI facts for operation ${route.operationId}`);
  const parameters: Json[] = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => {
    const parameter = PATH_PARAMETERS[name!];
    if (!parameter) throw new Error(`No schema for path parameter ${name}`);
    return {
      name,
      in: 'path',
      required: true,
      description: parameter.description,
      schema: jsonSchema(parameter.schema),
    };
  });
  if (facts.success.schema?.endsWith('List'))
    parameters.push(ref('parameters', 'pageNumber'), ref('parameters', 'pageSize'));
  if (facts.success.status === 201) parameters.push(ref('parameters', 'idempotencyKey'));
  if (route.function === 'run-notifications/receive') parameters.push(ref('parameters', 'notificationSignature'));

  const successHeaders: Json = commonHeaderRefs();
  if (facts.success.status === 201) successHeaders['Idempotent-Replayed'] = ref('headers', 'Idempotent-Replayed');
  const success: Json = { description: facts.success.description, headers: successHeaders };
  if (facts.success.schema)
    success.content = { [JSONAPI_MEDIA_TYPE]: { schema: ref('schemas', facts.success.schema) } };
  const errors = [...new Set([...SHARED_ERRORS, ...facts.errors])].sort();
  return {
    operationId: route.operationId,
    summary: facts.summary,
    ...(facts.description ? { description: facts.description } : {}),
    tags: [facts.tag],
    ...(route.role === null ? { security: [] } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(facts.request
      ? {
          requestBody: {
            required: true,
            content: Object.fromEntries(
              facts.request.types.map((type) => [type, { schema: ref('schemas', facts.request!.schema) }]),
            ),
          },
        }
      : {}),
    responses: {
      [facts.success.status]: success,
      ...Object.fromEntries(errors.map((status) => [status, ref('responses', errorResponseName(status))])),
      default: ref('responses', errorResponseName('default')),
    },
  };
}

export function openApiDocument(routes: readonly Route[] = routeTable): Json {
  const paths: Record<string, Json> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route);
  paths[SERVICE_DISCOVERY_PATH] = {
    servers: [{ url: '/', description: 'The root of the host, outside the API' }],
    get: {
      operationId: 'discoverServices',
      summary: "Terraform's remote service discovery",
      tags: ['service-discovery'],
      security: [],
      description:
        'At the root of the host. Clients keep only the host: go-tfe and python-tfe add /api/v2/ themselves.',
      responses: {
        200: {
          description: 'The tfe services',
          headers: commonHeaderRefs(),
          content: { [SERVICE_DISCOVERY_MEDIA_TYPE]: { schema: ref('schemas', 'ServiceDiscovery') } },
        },
        429: ref('responses', errorResponseName(429)),
        default: ref('responses', errorResponseName('default')),
      },
    },
  };
  paths[HEALTH_ROUTE.path] = {
    get: {
      operationId: HEALTH_ROUTE.operationId,
      summary: "This Region's deep health",
      tags: ['health'],
      security: [],
      description:
        "Only where the stage has it: every multi-Region stage (each Region's Route 53 health check calls it) and a stage deployed with healthRoute=true. One strongly consistent read of the table in this Region. No token.",
      responses: {
        200: {
          description: 'This Region reads its table',
          content: { 'application/json': { schema: ref('schemas', 'Health') } },
        },
        503: {
          description: 'This Region could not read its table within 2 s',
          headers: { 'Retry-After': ref('headers', 'Retry-After') },
          content: { 'application/json': { schema: ref('schemas', 'Health') } },
        },
        429: ref('responses', errorResponseName(429)),
        default: ref('responses', errorResponseName('default')),
      },
    },
  };
  const statuses: ErrorStatus[] = [400, 401, 403, 404, 406, 409, 413, 415, 422, 429, 503];
  return {
    openapi: '3.1.1',
    info: {
      title: `${APP_NAME}: HCP Terraform reserved tag keys and run comments`,
      version: API_VERSION,
      summary:
        "HCP Terraform's Reserved Tag Keys and Comments APIs, as go-tfe and python-tfe call them, plus run notifications",
      description:
        "JSON:API (application/vnd.api+json). The comment operations have HashiCorp's operation ids and shapes (go-tfe v2's OpenAPI document); reserved tag keys, Idempotency-Key, Idempotent-Replayed, run notifications and workload identity credentials go beyond it. Every answer carries X-Request-Id.",
      license: LICENSE,
      contact: CONTACT,
    },
    servers: [{ url: API_BASE_PATH, description: 'The API, at the root of a host: give clients the host only' }],
    security: [{ bearer: [] }],
    tags: [
      { name: 'ping', description: 'The one call go-tfe makes to build a client' },
      { name: 'reserved-tag-keys', description: 'Tag keys an organization reserves' },
      { name: 'comments', description: 'Comments on runs' },
      { name: 'run-notifications', description: "HCP Terraform's signed run notifications, which register runs" },
      { name: 'service-discovery', description: "Terraform's remote service discovery" },
      { name: 'health', description: "A Region's deep health, for health checks" },
    ],
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: `Authorization: Bearer <credential>. Either an operator token (${TOKEN_PREFIX}…, from the operator CLI), or an OIDC token (JWT) from an issuer the organization trusts: an HCP Terraform or Terraform Enterprise run's workload identity token, a GitHub Actions job's, any OIDC issuer's. Trusts are managed with the operator CLI, not through this API.`,
        },
      },
      schemas: componentSchemas(),
      parameters: parameterComponents(),
      headers: headerComponents(),
      responses: Object.fromEntries(
        [...statuses, 'default' as const].map((status) => [errorResponseName(status), errorResponse(status)]),
      ),
    },
  };
}
