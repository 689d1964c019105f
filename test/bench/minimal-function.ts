import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';

/**
 * The cost floor for bundle size and cold start: a function that creates the document client and,
 * invoked, makes one GetItem (an item that need not exist), as a bare DynamoDB function does.
 */
export const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));
export const handler = async () => {
  await client.send(
    new GetCommand({ TableName: process.env.TABLE_NAME, Key: { PK: 'bench-floor', SK: 'bench-floor' } }),
  );
  return { statusCode: 204, body: '' };
};
