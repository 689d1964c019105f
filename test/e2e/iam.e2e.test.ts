import { Agent, request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  DynamoDBClient,
  GetItemCommand,
  QueryCommand,
  TransactGetItemsCommand,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { ensureAssembly, type Assembly } from '#infra/local/assembly';
import { LOCAL_REGION, localTableArn, Stack } from '#infra/local/aws/cloudformation';
import { IamPolicies, startDynamoDbProxy, type DynamoDbProxy } from '#infra/local/aws/iam';

/**
 * IAM as the local stack enforces it from the synthesized template: each function's role may
 * touch only its own key space. The calls below are signed with the credentials the local Lambda
 * gives each function, so they are what that function's code could do, and no more.
 */
let assembly: Assembly;
let stack: Stack;
let proxy: DynamoDbProxy;
const tableName = process.env.TABLE_NAME!;

beforeAll(async () => {
  assembly = await ensureAssembly();
  const ref: Record<string, string> = {};
  stack = new Stack(assembly.directory, assembly.stackName, { ref });
  for (const [id] of stack.resourcesOf('AWS::DynamoDB::GlobalTable')) ref[id] = tableName; // this file's table stands in for it
  proxy = await startDynamoDbProxy({
    policies: new IamPolicies(stack),
    target: process.env.AWS_ENDPOINT_URL_DYNAMODB!,
    tableArn: localTableArn,
    partitionKeyOf: () => 'PK',
  });
});
afterAll(async () => {
  await proxy?.close();
});

/** The role of the function whose construct id starts with `prefix` (e.g. `CommentsShowFunction`). */
function clientOf(prefix: string): DynamoDBClient {
  const [, fn] = stack.resourcesOf('AWS::Lambda::Function').find(([id]) => id.startsWith(prefix))!;
  const role = fn.Properties.Role['Fn::GetAtt'][0] as string;
  const credentials = proxy.credentialsFor(role);
  return new DynamoDBClient({
    endpoint: proxy.endpoint,
    region: LOCAL_REGION,
    maxAttempts: 1,
    credentials: {
      accessKeyId: credentials.AWS_ACCESS_KEY_ID!,
      secretAccessKey: credentials.AWS_SECRET_ACCESS_KEY!,
      sessionToken: credentials.AWS_SESSION_TOKEN!,
    },
  });
}

const getItem = (pk: string, sk: string) =>
  new GetItemCommand({ TableName: tableName, Key: { PK: { S: pk }, SK: { S: sk } } });
const denied = { name: 'AccessDeniedException' };

describe('the local table plays a global table in multi-Region strong consistency (default settings)', () => {
  it('refuses TransactWriteItems and TransactGetItems of items the role may touch, as an MRSC replica does, and writes nothing', async () => {
    const create = clientOf('CommentsCreateFunction');
    const refused = {
      name: 'ValidationException',
      message: expect.stringMatching(/not supported.*multi-Region strongly consistent/),
    };
    const item = { PK: { S: 'RUN#run-mrscrefusal00000' }, SK: { S: 'COMMENTS#000000000001' } };
    await expect(
      create.send(new TransactWriteItemsCommand({ TransactItems: [{ Put: { TableName: tableName, Item: item } }] })),
    ).rejects.toMatchObject(refused);
    await expect(
      create.send(new TransactGetItemsCommand({ TransactItems: [{ Get: { TableName: tableName, Key: item } }] })),
    ).rejects.toMatchObject(refused);
    const { Item } = await create.send(getItem(item.PK.S, item.SK.S));
    expect(Item).toBeUndefined();
  });
});

describe('IAM from the template, enforced on every DynamoDB call', () => {
  it('lets the comments functions read comments and runs, and denies them token items', async () => {
    const show = clientOf('CommentsShowFunction');
    await expect(show.send(getItem('COMMENT#wsc-0000000000000000', 'COMMENT'))).resolves.toBeDefined();
    await expect(show.send(getItem('TOKENS', 'TOKEN#at-0000000000000000'))).rejects.toMatchObject(denied);
    await expect(show.send(getItem('ORG#acme', 'TAGKEYS'))).rejects.toMatchObject(denied);
  });

  it('lets the authorizer read a token by id and query the trusts, nothing else', async () => {
    const authorizer = clientOf('AuthorizerFunction');
    await expect(authorizer.send(getItem('TOKENS', 'TOKEN#at-0000000000000000'))).resolves.toBeDefined();
    await expect(authorizer.send(getItem('RUN#run-0000000000000000', 'COMMENTS'))).rejects.toMatchObject(denied);
    const queryOf = (pk: string) =>
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': { S: pk } },
      });
    await expect(authorizer.send(queryOf('TOKENS'))).rejects.toMatchObject(denied); // GetItem only: no Query listing the tokens
    await expect(authorizer.send(queryOf('TRUSTS'))).resolves.toBeDefined();
    await expect(authorizer.send(getItem('TRUSTS', 'ISSUER#https://x#trust-0000000000000000'))).rejects.toMatchObject(
      denied,
    );
  });

  it('denies a read-only function any write, and the reserved tag key functions any other key space', async () => {
    const { PutItemCommand } = await import('@aws-sdk/client-dynamodb');
    const show = clientOf('CommentsShowFunction');
    await expect(
      show.send(
        new PutItemCommand({
          TableName: tableName,
          Item: { PK: { S: 'COMMENT#wsc-0000000000000000' }, SK: { S: 'X' } },
        }),
      ),
    ).rejects.toMatchObject(denied);
    const list = clientOf('ReservedTagKeysListFunction');
    await expect(
      list.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': 'PK' },
          ExpressionAttributeValues: { ':pk': { S: 'ORG#acme' } },
        }),
      ),
    ).resolves.toBeDefined();
    await expect(
      list.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'PK = :pk',
          ExpressionAttributeValues: { ':pk': { S: 'RUN#run-0000000000000000' } },
        }),
      ),
    ).rejects.toMatchObject(denied);
    // A list writes out an organization's latest change when it meets it unwritten: in that key space only.
    await expect(
      list.send(
        new PutItemCommand({ TableName: tableName, Item: { PK: { S: 'RUN#run-0000000000000000' }, SK: { S: 'X' } } }),
      ),
    ).rejects.toMatchObject(denied);
    await expect(
      list.send(new PutItemCommand({ TableName: tableName, Item: { PK: { S: 'TOKENS' }, SK: { S: 'X' } } })),
    ).rejects.toMatchObject(denied);
  });

  it('refuses a signer that is no role of the template', async () => {
    const stranger = new DynamoDBClient({
      endpoint: proxy.endpoint,
      region: LOCAL_REGION,
      maxAttempts: 1,
      credentials: { accessKeyId: 'AKIASTRANGER', secretAccessKey: 'x' },
    });
    await expect(stranger.send(getItem('TOKENS', 'TOKEN#at-0000000000000000'))).rejects.toMatchObject({
      name: 'UnrecognizedClientException',
    });
  });
});

describe('a grant removed from the synthesized stack', () => {
  it('makes that function fail locally where the full stack serves', async () => {
    const [{ startLocalStack }, { insertComment }, { registerRun }, { tokenFor }, { withoutTableGrants }] =
      await Promise.all([
        import('#infra/local/local-stack'),
        import('#shared/store/comments'),
        import('#shared/store/runs'),
        import('../support/api'),
        import('../support/assembly-variant'),
      ]);
    // The show function's GetItem grant taken away: the rest of the template is as deployed.
    const noGrant = await withoutTableGrants('no-grant', ['comments/show']);
    const local = await startLocalStack({
      assembly: noGrant,
      dynamoDbEndpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB!,
      tableName,
      log: () => undefined,
    });
    try {
      const runId = `run-${'x'.repeat(16)}`;
      await registerRun({ runId, organization: 'iam-org' });
      const comment = await insertComment({ runId, organization: 'iam-org', body: 'visible?', createdBy: 'user-x' });
      if (typeof comment === 'string') throw new Error(`comment refused: ${comment}`);
      const token = await tokenFor({ 'iam-org': 'reader' });
      const response = await fetch(`${local.url}/api/v2/comments/${comment.id}`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(response.status).toBe(500);
      expect(local.dynamoDbCalls.filter((c) => !c.allowed).map((c) => c.operation)).toEqual(['GetItem']);
    } finally {
      await local.close();
      noGrant.remove();
    }
  }, 120_000);
});

describe('the local IAM proxy holds an idle connection as DynamoDB’s endpoint does', () => {
  /** One POST on `agent`'s connection: the status, and whether the request went out on a reused socket. */
  const post = (agent: Agent) =>
    new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
      const request = httpRequest(proxy.endpoint, { method: 'POST', agent }, (response) => {
        response.resume();
        response.once('end', () => resolve({ status: response.statusCode!, reused: request.reusedSocket }));
      });
      request.once('error', reject);
      request.end('{}');
    });

  // Node's servers close a connection idle for 5 s by default; the SDK keeps its sockets with no
  // idle limit, so a store call made about 5 s after the last one met a reset (ECONNRESET) and a
  // write answered "outcome unknown".
  it('keeps a keep-alive connection idle for 6 s, and serves the next call on it', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect(await post(agent)).toEqual({ status: 400, reused: false }); // unsigned: refused, but answered
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      expect(await post(agent)).toEqual({ status: 400, reused: true });
    } finally {
      agent.destroy();
    }
  }, 20_000);
});
