import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { requiredEnv } from '../config';

/**
 * One document client per process, created at init so warm invocations reuse its connections.
 * It finds DynamoDB Local through AWS_ENDPOINT_URL_DYNAMODB, so no code here knows about it.
 */
export const documentClient = DynamoDBDocumentClient.from(new DynamoDBClient({}), {
  marshallOptions: { removeUndefinedValues: true },
});

/** Read per call (not at import) so tests and the local gateway can point at a fresh table. */
export const tableName = () => requiredEnv('TABLE_NAME');
