import * as z from 'zod';
import { API_BASE_PATH } from '../config';
import { idPattern, TIMESTAMP_PATTERN, type IdPrefix } from '../ids';
import { ORGANIZATION_NAME, ORGANIZATION_NAME_RULE } from '../organizations';
// The rules' own modules, not the validators that import these schemas' types back.
import { MAX_PAGE_NUMBER, MAX_PAGE_SIZE } from '../jsonapi/page-bounds';
import { KEY_MAX_LENGTH, KEY_PATTERN, RESERVED_TAG_KEY_TYPE } from '../reserved-tag-keys/key-rule';
import { COMMENT_TYPE, INVALID_CHARACTER, MAX_COMMENT_BODY_BYTES } from '../comments/body-rule';
import { SERVICE_DISCOVERY_DOCUMENT } from '../http/service-discovery';

/**
 * The shapes of the API's documents, for the OpenAPI document (infra/openapi/) and for the
 * serializers' types: each rule is the constant its validator reads, and each serializer is
 * declared to return its resource's type, so the compiler refuses a serializer that drifts from
 * its schema. Functions import this module only as types (`import type`): zod stays out of every
 * Lambda bundle (test/unit/openapi.test.ts checks).
 */

/** The name of a schema under `#/components/schemas/`. */
export const componentsRegistry = z.registry<{ id: string; description?: string }>();
const component = <T extends z.ZodType>(id: string, description: string, schema: T): T => {
  componentsRegistry.add(schema, { id, description });
  return schema;
};

const exactly = (pattern: RegExp) => pattern.source;
export const id = (prefix: IdPrefix) => z.string().regex(idPattern(prefix));
const timestamp = z
  .string()
  .regex(TIMESTAMP_PATTERN)
  .meta({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds and Z' });
export const organizationName = z
  .string()
  .regex(ORGANIZATION_NAME)
  .meta({ description: `An organization name: ${ORGANIZATION_NAME_RULE}` });
const selfLink = (path: string, prefix: IdPrefix) =>
  z
    .string()
    .regex(new RegExp(`^${API_BASE_PATH}${path}/${exactly(idPattern(prefix)).slice(1)}`))
    .meta({ description: 'Relative to the host' });
const toOne = <T extends string>(type: T, identifier: z.ZodString) =>
  z.strictObject({ data: z.strictObject({ id: identifier, type: z.literal(type) }) });

// Errors: contract section 5. `status` is a string (go-tfe cannot decode a number); texts are not part of the contract's shape.
export const ErrorObject = component(
  'Error',
  'One error. status is the HTTP status as a string.',
  z.strictObject({
    status: z.string().regex(/^[45]\d\d$/),
    title: z.string().min(1),
    detail: z.string().optional(),
    source: z.strictObject({ pointer: z.string() }).optional(),
  }),
);
export const ErrorDocument = component(
  'Errors',
  'Every error answer: a JSON:API error document.',
  z.strictObject({
    errors: z.array(ErrorObject).min(1),
  }),
);

// Lists: contract section 4.
const pageNumber = z.int().min(1).max(MAX_PAGE_NUMBER);
export const PaginationMeta = component(
  'Pagination',
  'Where this page is in the collection.',
  z.strictObject({
    'current-page': pageNumber,
    'page-size': z.int().min(1).max(MAX_PAGE_SIZE),
    'prev-page': pageNumber.nullable(),
    'next-page': pageNumber.nullable(),
    'total-pages': z.int().min(1),
    'total-count': z.int().min(0),
  }),
);
export const PaginationLinks = component(
  'PaginationLinks',
  'Absolute URLs of the same collection; prev and next are null at the edges.',
  z.strictObject({
    self: z.url(),
    first: z.url(),
    prev: z.url().nullable(),
    next: z.url().nullable(),
    last: z.url(),
  }),
);
export type PaginationMetaValues = z.output<typeof PaginationMeta>;
export type PaginationLinksValues = z.output<typeof PaginationLinks>;
const listOf = <T extends z.ZodType>(resource: T) =>
  z.strictObject({
    data: z.array(resource),
    links: PaginationLinks,
    meta: z.strictObject({ pagination: PaginationMeta }),
  });

// Reserved tag keys.
export const reservedTagKeyKey = z
  .string()
  .min(1)
  .max(KEY_MAX_LENGTH)
  .regex(KEY_PATTERN)
  .meta({
    description: `1 to ${KEY_MAX_LENGTH} ASCII letters, digits, spaces and . = + - @ : _, not starting or ending with a space; unique in its organization, compared case-insensitively, stored as sent`,
  });
export const ReservedTagKey = component(
  'ReservedTagKey',
  'A reserved tag key; serialized the same in every answer.',
  z.strictObject({
    id: id('rtk'),
    type: z.literal(RESERVED_TAG_KEY_TYPE),
    attributes: z.strictObject({
      key: reservedTagKeyKey,
      'disable-overrides': z.boolean(),
      'is-registry-tag': z.literal(false).meta({ description: 'Read-only; always false here' }),
      'created-at': timestamp,
      'updated-at': timestamp.meta({ description: 'Moves only when an update changed something' }),
    }),
    relationships: z.strictObject({ organization: toOne('organizations', organizationName) }),
    links: z.strictObject({ self: selfLink('/reserved-tags', 'rtk') }),
  }),
);
export type ReservedTagKeyResource = z.output<typeof ReservedTagKey>;
export const ReservedTagKeyDocument = component(
  'ReservedTagKeyDocument',
  'One reserved tag key.',
  z.strictObject({ data: ReservedTagKey }),
);
export const ReservedTagKeyList = component(
  'ReservedTagKeyList',
  "A page of an organization's reserved tag keys, oldest first.",
  listOf(ReservedTagKey),
);

/** Requests: read-only and unknown attributes are ignored, so the objects stay open. */
const disableOverrides = z
  .boolean()
  .meta({ description: 'Whether workspaces and projects may not override the inherited tag' });
export const ReservedTagKeyCreate = component(
  'ReservedTagKeyCreate',
  'Create a reserved tag key; disable-overrides defaults to false.',
  z.looseObject({
    data: z.looseObject({
      type: z.literal(RESERVED_TAG_KEY_TYPE),
      attributes: z.looseObject({ key: reservedTagKeyKey, 'disable-overrides': disableOverrides.optional() }),
    }),
  }),
);
export const ReservedTagKeyUpdate = component(
  'ReservedTagKeyUpdate',
  'A partial update: absent attributes stay as they are.',
  z.looseObject({
    data: z.looseObject({
      type: z.literal(RESERVED_TAG_KEY_TYPE),
      id: id('rtk').optional().meta({ description: "Optional; if present it must be the path's id" }),
      attributes: z
        .looseObject({ key: reservedTagKeyKey.optional(), 'disable-overrides': disableOverrides.optional() })
        .optional(),
    }),
  }),
);

// Comments: HashiCorp's shape (type comments, attributes.body), plus created-at, run and created-by.
/** Not blank, no control characters but tab, LF and CR; maxLength bounds characters, x-max-utf8-bytes the UTF-8 bytes the service counts. */
export const commentBody = z
  .string()
  .min(1)
  .max(MAX_COMMENT_BODY_BYTES)
  .regex(/\S/)
  .regex(new RegExp(`^(?![\\s\\S]*(?:${INVALID_CHARACTER.source}))`))
  .meta({
    description: `Not blank; at most ${MAX_COMMENT_BODY_BYTES.toLocaleString('en-US')} bytes of UTF-8; no control characters other than tab, line feed and carriage return. Returned byte for byte as sent.`,
    'x-max-utf8-bytes': MAX_COMMENT_BODY_BYTES,
  });
export const Comment = component(
  'Comment',
  'A comment on a run; immutable.',
  z.strictObject({
    id: id('wsc'),
    type: z.literal(COMMENT_TYPE),
    attributes: z.strictObject({ body: commentBody, 'created-at': timestamp }),
    relationships: z.strictObject({
      run: toOne('runs', id('run')),
      'created-by': toOne('users', z.string().min(1)).meta({
        description: "The token's subject, or a workload identity token's sub",
      }),
    }),
    links: z.strictObject({ self: selfLink('/comments', 'wsc') }),
  }),
);
export type CommentResource = z.output<typeof Comment>;
export const CommentDocument = component('CommentDocument', 'One comment.', z.strictObject({ data: Comment }));
export const CommentList = component('CommentList', "A page of a run's comments, oldest first.", listOf(Comment));
export const CommentCreate = component(
  'CommentCreate',
  'Create a comment.',
  z.looseObject({
    data: z.looseObject({ type: z.literal(COMMENT_TYPE), attributes: z.looseObject({ body: commentBody }) }),
  }),
);

// Run notifications: HCP Terraform's generic webhook payload, version 1 (shared/run-notifications/payload.ts).
const nullableText = z.string().nullable().optional();
export const RunNotification = component(
  'RunNotification',
  "HCP Terraform's or Terraform Enterprise's generic webhook payload, version 1. A run:* trigger registers the run; verification and other triggers register nothing.",
  z.looseObject({
    payload_version: z.literal(1),
    notifications: z
      .array(z.looseObject({ trigger: z.string().meta({ description: 'verification, run:created, run:planning, …' }) }))
      .min(1),
    organization_name: organizationName
      .nullable()
      .meta({ description: "The URL's organization; null in a verification" }),
    run_id: id('run').nullable().optional(),
    workspace_name: nullableText,
    workspace_id: nullableText,
    run_created_at: nullableText,
    run_created_by: nullableText,
  }),
);

// Terraform's remote service discovery, at the root of the host.
export const ServiceDiscovery = component(
  'ServiceDiscovery',
  "Terraform's remote service discovery: the tfe services, at the API's base path.",
  z.strictObject(
    Object.fromEntries(Object.entries(SERVICE_DISCOVERY_DOCUMENT).map(([service, path]) => [service, z.literal(path)])),
  ),
);

// The deep health route of a Region (shared/health.ts): not JSON:API, and no token.
export const Health = component(
  'Health',
  "A Region's health: whether one strongly consistent read of its table answered, and the Region.",
  z.strictObject({ status: z.enum(['pass', 'fail']), region: z.string() }),
);
