import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { HEALTH_KEY } from '#shared/health';

/**
 * GET /api/v2/health, in a multi-Region stage (and a stage with healthRoute): one strongly consistent GetItem of the
 * Region's replica of the global table (shared/health.ts). 200 when it answers, 503 when it does
 * not within 2 s: Route 53's health checker waits 2 s for the first byte (4 s for HTTPS), and a
 * slow read is as bad as none. No token, no body to parse, nothing written; not a jsonApiHandler,
 * which serves the route table's routes.
 */
const client = new DynamoDBClient({
  maxAttempts: 1,
  requestHandler: { connectionTimeout: 1_000, requestTimeout: 2_000, throwOnRequestTimeout: true },
});
const HEADERS = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' };

export async function handler(): Promise<APIGatewayProxyResult> {
  const region = process.env.AWS_REGION ?? 'unknown';
  try {
    await client.send(
      new GetItemCommand({
        TableName: process.env.TABLE_NAME,
        Key: { PK: { S: HEALTH_KEY.PK }, SK: { S: HEALTH_KEY.SK } },
        ConsistentRead: true,
      }),
      { abortSignal: AbortSignal.timeout(2_500) },
    );
    return { statusCode: 200, headers: HEADERS, body: JSON.stringify({ status: 'pass', region }) };
  } catch (error) {
    console.error(
      JSON.stringify({
        level: 'ERROR',
        message: 'health: the strongly consistent read failed',
        region,
        error: (error as Error).name,
      }),
    );
    return {
      statusCode: 503,
      headers: { ...HEADERS, 'Retry-After': '10' },
      body: JSON.stringify({ status: 'fail', region }),
    };
  }
}
