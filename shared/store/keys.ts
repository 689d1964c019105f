/**
 * Every PK/SK in the table is built here, nowhere else.
 *
 * A *counted collection* keeps its counter item at SK = the collection's prefix and its members
 * at SK = prefix + '#' + what orders them, so a `begins_with(prefix)` Query returns the counter
 * first and then the members in order: meta and page 1 in one round trip. A run's comments are
 * numbered 1, 2, 3… as they are written (they are never deleted), so any page of them is a known
 * range of sort keys; reserved tag keys are ordered by creation time, then id. Other item kinds in
 * the same partition use prefixes that do not start with a collection's.
 */
export interface Key {
  PK: string;
  SK: string;
}

const member = (collection: string, createdAt: string, id: string) => `${collection}#${createdAt}#${id}`;
/** Zero-padded so that sort keys sort by number: wide enough for any page a list answers. */
const numbered = (collection: string, number: number) => `${collection}#${String(number).padStart(12, '0')}`;

/** Entity-type attribute values, one per kind of item. */
export const Entity = {
  Token: 'Token',
  Run: 'Run',
  RunOfOrganization: 'RunOfOrganization',
  ReservedTagKeyCounter: 'ReservedTagKeyCounter',
  ReservedTagKey: 'ReservedTagKey',
  ReservedTagKeyName: 'ReservedTagKeyName',
  Comment: 'Comment',
  NotificationSecrets: 'NotificationSecrets',
  Receipt: 'Receipt',
  Trust: 'Trust',
} as const;

/**
 * What every partition key starts with, by kind of partition. IAM grants each function the
 * partitions it works on by these prefixes (dynamodb:LeadingKeys), so a new kind of item gets
 * its own prefix rather than sharing one with items another function must not touch.
 */
export const PARTITION = {
  organization: 'ORG#',
  run: 'RUN#',
  comment: 'COMMENT#',
  reservedTagKey: 'RTK#',
  /** An organization's run-notification secrets: only the run-notifications function reads them. */
  notificationSecrets: 'NOTIFY#',
  /** Receipts of creates, one partition each (shared/store/receipts.ts): what makes a retried create safe. */
  receipt: 'RECEIPT#',
  /** Not a prefix: the one partition every token lives in. */
  tokens: 'TOKENS',
  /** Not a prefix: the one partition every workload identity trust lives in, beside the tokens. */
  trusts: 'TRUSTS',
} as const;

export const organizationPartition = (organization: string) => `${PARTITION.organization}${organization}`;
export const runPartition = (runId: string) => `${PARTITION.run}${runId}`;

export const keys = {
  /** All tokens share one partition so the operator can list them with a Query. */
  token: (tokenId: string): Key => ({ PK: PARTITION.tokens, SK: `TOKEN#${tokenId}` }),
  tokensPrefix: { PK: PARTITION.tokens, SKPrefix: 'TOKEN#' },

  /**
   * Trusts are sorted by issuer, so the authorizer reads the trusts of a token's issuer with one
   * Query (issuers hold no `#`: an issuer URL has no fragment) and the operator lists them all.
   */
  trust: (issuer: string, trustId: string): Key => ({ PK: PARTITION.trusts, SK: `ISSUER#${issuer}#${trustId}` }),
  trustsOfIssuer: (issuer: string) => ({ PK: PARTITION.trusts, SKPrefix: `ISSUER#${issuer}#` }),
  trustsPrefix: { PK: PARTITION.trusts, SKPrefix: 'ISSUER#' },

  /** The run's own record doubles as the counter of its comments collection. */
  run: (runId: string): Key => ({ PK: runPartition(runId), SK: 'COMMENTS' }),
  /** The run's `sequence`-th comment (the first is 1). */
  runComment: (runId: string, sequence: number): Key => ({
    PK: runPartition(runId),
    SK: numbered('COMMENTS', sequence),
  }),
  runComments: (runId: string) => ({ PK: runPartition(runId), SKPrefix: 'COMMENTS' }),
  /** A run listed under its organization, for the operator's `run list`. */
  organizationRun: (organization: string, runId: string): Key => ({
    PK: organizationPartition(organization),
    SK: `RUNS#${runId}`,
  }),
  organizationRuns: (organization: string) => ({ PK: organizationPartition(organization), SKPrefix: 'RUNS#' }),

  /** Comments are immutable, so a full copy keyed by id makes `GET /comments/:id` one GetItem. */
  comment: (commentId: string): Key => ({ PK: `${PARTITION.comment}${commentId}`, SK: 'COMMENT' }),

  reservedTagKeyCounter: (organization: string): Key => ({ PK: organizationPartition(organization), SK: 'TAGKEYS' }),
  reservedTagKey: (organization: string, createdAt: string, id: string): Key => ({
    PK: organizationPartition(organization),
    SK: member('TAGKEYS', createdAt, id),
  }),
  reservedTagKeys: (organization: string) => ({ PK: organizationPartition(organization), SKPrefix: 'TAGKEYS' }),
  /** Uniqueness guard: one item per lower-cased key name, so duplicates fail a transaction condition. */
  reservedTagKeyName: (organization: string, key: string): Key => ({
    PK: organizationPartition(organization),
    SK: `TAGNAME#${key.toLowerCase()}`,
  }),
  /** Finds a key by id (PATCH/DELETE name only the id); holds a full copy of the key's record. */
  reservedTagKeyById: (id: string): Key => ({ PK: `${PARTITION.reservedTagKey}${id}`, SK: 'RTK' }),

  /** The organization's current notification secret and, during a rotation's grace period, the previous one. */
  notificationSecrets: (organization: string): Key => ({
    PK: `${PARTITION.notificationSecrets}${organization}`,
    SK: 'SECRETS',
  }),
  /** A create's receipt, its own partition: receipts spread over partitions instead of making one hot. */
  receipt: (receiptId: string): Key => ({ PK: `${PARTITION.receipt}${receiptId}`, SK: 'RECEIPT' }),
};
