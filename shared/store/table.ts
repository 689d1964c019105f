import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { EXPIRY_INDEX, EXPIRY_KEYS } from '#shared/store/expiry';

/**
 * The one table's shape, shared by the CDK stack and the local store so that both are the same
 * table: generic string keys overloaded with typed prefixes (see keys.ts), on-demand billing, and
 * the sparse index of expiring items (expiry.ts). No TTL and no local secondary index: a global
 * table in multi-Region strong consistency allows neither.
 */
export const TABLE_KEYS = { partitionKey: 'PK', sortKey: 'SK' } as const;

export function createTableInput(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: TABLE_KEYS.partitionKey, AttributeType: 'S' },
      { AttributeName: TABLE_KEYS.sortKey, AttributeType: 'S' },
      { AttributeName: EXPIRY_KEYS.shard, AttributeType: 'S' },
      { AttributeName: EXPIRY_KEYS.sweepAt, AttributeType: 'N' },
    ],
    KeySchema: [
      { AttributeName: TABLE_KEYS.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE_KEYS.sortKey, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: EXPIRY_INDEX,
        KeySchema: [
          { AttributeName: EXPIRY_KEYS.shard, KeyType: 'HASH' },
          { AttributeName: EXPIRY_KEYS.sweepAt, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ],
  };
}
