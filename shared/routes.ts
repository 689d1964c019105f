import type { Role } from './auth/principal';
import { PARTITION } from './store/keys';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** The IAM actions of the DynamoDB calls the store makes: single-item operations only (no transactions). */
export type TableAction =
  | 'dynamodb:GetItem'
  | 'dynamodb:Query'
  | 'dynamodb:PutItem'
  | 'dynamodb:UpdateItem'
  | 'dynamodb:DeleteItem';

const READ_ACTIONS: ReadonlySet<TableAction> = new Set(['dynamodb:GetItem', 'dynamodb:Query']);

/** Every action but a read changes the table. */
export const isWriteAction = (action: TableAction) => !READ_ACTIONS.has(action);

/**
 * What a function may do to the table, and where: the CDK stack grants exactly these actions, only
 * on items whose partition key matches one of `partitions` (IAM `dynamodb:LeadingKeys`, `*` = any
 * characters). Written from what the function's code really calls (shared/store/*).
 */
export interface TableAccess {
  actions: readonly TableAction[];
  partitions: readonly string[];
}

export interface Route {
  method: HttpMethod;
  /** Its name in the OpenAPI document (docs/openapi.json); the comment routes' are HashiCorp's own. */
  operationId: string;
  /** Under API_BASE_PATH, with API Gateway's `{name}` path parameters. */
  path: string;
  /** The handler file under functions/, without extension; it exports `handler`. */
  function: string;
  /** The least role this endpoint needs in the organization it touches; null = no token at all. */
  role: Role | null;
  table: TableAccess;
}

const any = (prefix: string) => `${prefix}*`;

/**
 * Reserved tag keys live in their organization's partition (member, name guard, counter) and in
 * their by-id partition (shared/store/reserved-tag-keys.ts).
 */
const TAG_KEY_PARTITIONS = [any(PARTITION.organization), any(PARTITION.reservedTagKey)];
/**
 * Writing out a change an organization's head holds (shared/store/tag-key-log.ts), which any function
 * that meets it unwritten does: Puts of a created key's items, Updates of a changed or deleted
 * key's copy and member, Deletes of a released name guard.
 */
const WRITE_OUT_TAG_KEY_CHANGE: readonly TableAction[] = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
];
const TABLE = {
  none: { actions: [], partitions: [] },
  /**
   * Page 1: one Query of the organization's collection; a later page: GetItem of its head, then a
   * Query of a range; writing out a held change first when the page would show it unwritten.
   */
  listTagKeys: {
    actions: ['dynamodb:GetItem', 'dynamodb:Query', ...WRITE_OUT_TAG_KEY_CHANGE],
    partitions: TAG_KEY_PARTITIONS,
  },
  /**
   * Put of the receipt's claim (Delete when the create is refused), GetItem of the head (unless
   * known), the name's guard and its owner's copy, Update of the head (the commit), then the key's
   * items; a retry reads the receipt, the head and the copy it names.
   */
  createTagKey: {
    actions: ['dynamodb:GetItem', ...WRITE_OUT_TAG_KEY_CHANGE],
    partitions: [...TAG_KEY_PARTITIONS, any(PARTITION.receipt)],
  },
  /** GetItem by id (and of the head unless known, and a new name's guard), Update of the head, then the key's items. */
  updateTagKey: { actions: ['dynamodb:GetItem', ...WRITE_OUT_TAG_KEY_CHANGE], partitions: TAG_KEY_PARTITIONS },
  /** GetItem by id (and of the head unless known), Update of the head, then the key's tombstones and its guard's Delete. */
  deleteTagKey: { actions: ['dynamodb:GetItem', ...WRITE_OUT_TAG_KEY_CHANGE], partitions: TAG_KEY_PARTITIONS },
  /**
   * Page 1: one Query of the run's partition (its record and comments); a later page: GetItem of
   * the record and a Query of the page's range; Puts of a held comment's copy and member when
   * the page would show it unwritten.
   */
  listComments: {
    actions: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem'],
    partitions: [any(PARTITION.run), any(PARTITION.comment)],
  },
  /**
   * Put of the receipt's claim (Delete when the create is refused), GetItem of the run unless its
   * organization is cached, Update of the run's record (the commit), Puts of the comment's copy
   * and member; a retry reads the receipt, the run and the copy it names. Claims of a fair turn
   * are Updates of the run's record too.
   */
  createComment: {
    actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'],
    partitions: [any(PARTITION.run), any(PARTITION.comment), any(PARTITION.receipt)],
  },
  /** One GetItem of the by-id copy. */
  showComment: { actions: ['dynamodb:GetItem'], partitions: [any(PARTITION.comment)] },
  /**
   * GetItem of the organization's notification secrets and of the run, together; for a run not
   * yet known, Put of the run's record (the commit), then of its listing under the organization.
   */
  receiveRunNotification: {
    actions: ['dynamodb:GetItem', 'dynamodb:PutItem'],
    partitions: [any(PARTITION.notificationSecrets), any(PARTITION.run), any(PARTITION.organization)],
  },
} satisfies Record<string, TableAccess>;

/**
 * Every endpoint of the API, in one place. The local gateway serves it, the CDK stack deploys it
 * and the load tests drive it. Adding an endpoint is one row here plus its handler file.
 */
export const routes: readonly Route[] = [
  { method: 'GET', operationId: 'ping', path: '/ping', function: 'ping', role: null, table: TABLE.none },
  // Reserved tag keys. The docs name /reserved-tags/:id, go-tfe and python-tfe call /reserved-tag-keys/:id.
  {
    method: 'GET',
    operationId: 'listReservedTagKeys',
    path: '/organizations/{organization_name}/reserved-tag-keys',
    function: 'reserved-tag-keys/list',
    role: 'reader',
    table: TABLE.listTagKeys,
  },
  {
    method: 'POST',
    operationId: 'createReservedTagKey',
    path: '/organizations/{organization_name}/reserved-tag-keys',
    function: 'reserved-tag-keys/create',
    role: 'owner',
    table: TABLE.createTagKey,
  },
  {
    method: 'PATCH',
    operationId: 'updateReservedTag',
    path: '/reserved-tags/{reserved_tag_key_id}',
    function: 'reserved-tag-keys/update',
    role: 'owner',
    table: TABLE.updateTagKey,
  },
  {
    method: 'PATCH',
    operationId: 'updateReservedTagKey',
    path: '/reserved-tag-keys/{reserved_tag_key_id}',
    function: 'reserved-tag-keys/update',
    role: 'owner',
    table: TABLE.updateTagKey,
  },
  {
    method: 'DELETE',
    operationId: 'deleteReservedTag',
    path: '/reserved-tags/{reserved_tag_key_id}',
    function: 'reserved-tag-keys/delete',
    role: 'owner',
    table: TABLE.deleteTagKey,
  },
  {
    method: 'DELETE',
    operationId: 'deleteReservedTagKey',
    path: '/reserved-tag-keys/{reserved_tag_key_id}',
    function: 'reserved-tag-keys/delete',
    role: 'owner',
    table: TABLE.deleteTagKey,
  },
  // Comments on runs, authorized through the run's organization.
  {
    method: 'GET',
    operationId: 'listRunComments',
    path: '/runs/{run_id}/comments',
    function: 'comments/list',
    role: 'reader',
    table: TABLE.listComments,
  },
  {
    method: 'POST',
    operationId: 'createRunComment',
    path: '/runs/{run_id}/comments',
    function: 'comments/create',
    role: 'member',
    table: TABLE.createComment,
  },
  {
    method: 'GET',
    operationId: 'showComment',
    path: '/comments/{comment_id}',
    function: 'comments/show',
    role: 'reader',
    table: TABLE.showComment,
  },
  // HCP Terraform's run notifications: authenticated by their signature, not by a token.
  {
    method: 'POST',
    operationId: 'receiveRunNotification',
    path: '/run-notifications/{organization_name}',
    function: 'run-notifications/receive',
    role: null,
    table: TABLE.receiveRunNotification,
  },
];

/** The REQUEST authorizer guarding every route whose role is not null. */
export const AUTHORIZER_FUNCTION = 'authorizer';
/**
 * It looks a token up by id (one GetItem in the tokens partition, never a Query that would list
 * them) or a JWT's issuer up among the trusts (one Query of the trusts partition): the only
 * function that may read either.
 */
export const AUTHORIZER_TABLE_ACCESS: readonly TableAccess[] = [
  { actions: ['dynamodb:GetItem'], partitions: [PARTITION.tokens] },
  { actions: ['dynamodb:Query'], partitions: [PARTITION.trusts] },
];

/** Distinct handler files: two routes may share one function (the PATCH and DELETE aliases). */
export const functionNames = (table: readonly Route[] = routes) => [...new Set(table.map((r) => r.function))];

export function routeOf(functionName: string, table: readonly Route[] = routes): Route {
  const route = table.find((r) => r.function === functionName);
  if (!route) throw new Error(`No route uses function ${functionName}`);
  return route;
}
