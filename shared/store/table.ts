import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

/**
 * The one table's shape, shared by the CDK stack and the local store so that both are the same
 * table: generic string keys overloaded with typed prefixes (see keys.ts), on-demand billing.
 */
export const TABLE_KEYS = { partitionKey: 'PK', sortKey: 'SK' } as const;
/** Epoch seconds after which DynamoDB deletes an item on its own (the table's TTL); create receipts carry it. */
export const TTL_ATTRIBUTE = 'ttl';

export function createTableInput(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: TABLE_KEYS.partitionKey, AttributeType: 'S' },
      { AttributeName: TABLE_KEYS.sortKey, AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: TABLE_KEYS.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE_KEYS.sortKey, KeyType: 'RANGE' },
    ],
  };
}
