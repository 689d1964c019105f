import { describe, expect, it } from '@jest/globals';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import {
  afterCommit,
  isWriteOutcomeUnknown,
  markWriteAttempts,
  repairing,
  writeAwareRetries,
} from '#shared/store/write-outcome';

/**
 * Which failed writes may have been applied (shared/store/write-outcome.ts), on a real DynamoDB
 * client whose HTTP handler answers what each case needs: nothing leaves this process.
 */

/** What the HTTP handler does on every attempt: throw, or answer with a status and a DynamoDB error body. */
type Attempt = { throws: Error } | { status: number; type: string };

/** A DynamoDB client as the store builds it, over `attempt`; `calls` counts the attempts made. */
function clientAnswering(attempt: Attempt, maxAttempts = 1) {
  const calls = { count: 0 };
  const client = new DynamoDBClient({
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:1',
    credentials: { accessKeyId: 'unit', secretAccessKey: 'unit' },
    maxAttempts,
    retryStrategy: writeAwareRetries(maxAttempts),
    requestHandler: {
      handle: async () => {
        calls.count++;
        if ('throws' in attempt) throw attempt.throws;
        const body = Buffer.from(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${attempt.type}` }));
        const headers = { 'content-type': 'application/x-amz-json-1.0' };
        return { response: { statusCode: attempt.status, headers, body } };
      },
    },
  });
  markWriteAttempts(client);
  return { client, calls };
}

const put = new PutItemCommand({ TableName: 't', Item: { pk: { S: 'a' } } });
const get = new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } } });
const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('it succeeded');
    },
    (error: unknown) => error,
  );
const nameOf = (error: unknown) => (error as Error).name;
/** The error the SDK throws: DynamoDB's named one, or what the HTTP handler threw. */
const expectedName = (attempt: Attempt) => ('throws' in attempt ? attempt.throws.name : attempt.type);
const nodeError = (code: string, message = code) => Object.assign(new Error(message), { code });

describe('a failed write attempt', () => {
  it.each<[string, Attempt]>([
    ['a 5xx answer', { status: 500, type: 'InternalServerError' }],
    ['a connection reset after sending', { throws: nodeError('ECONNRESET') }],
    ['a request timeout (ETIMEDOUT)', { throws: Object.assign(nodeError('ETIMEDOUT'), { name: 'TimeoutError' }) }],
  ])('may have been applied after %s: marked, its outcome unknown', async (_, attempt) => {
    const error = await failureOf(clientAnswering(attempt).client.send(put));
    expect([nameOf(error), isWriteOutcomeUnknown(error)]).toEqual([expectedName(attempt), true]);
  });

  it.each<[string, Attempt]>([
    ['a 4xx answer (condition failed)', { status: 400, type: 'ConditionalCheckFailedException' }],
    ['a 4xx answer (throttled)', { status: 400, type: 'ProvisionedThroughputExceededException' }],
    ['a refused connection', { throws: nodeError('ECONNREFUSED') }],
    ['an unknown host', { throws: nodeError('ENOTFOUND') }],
    [
      'a connection that was never established in time',
      {
        // @smithy/node-http-handler's connectionTimeout
        throws: Object.assign(
          new Error(
            '@smithy/node-http-handler - the request socket did not establish a connection ' +
              'with the server within the configured timeout of 1000 ms.',
          ),
          { name: 'TimeoutError' },
        ),
      },
    ],
  ])('was certainly not applied after %s: not marked', async (_, attempt) => {
    const error = await failureOf(clientAnswering(attempt).client.send(put));
    expect([nameOf(error), isWriteOutcomeUnknown(error)]).toEqual([expectedName(attempt), false]);
  });

  it('a read is never marked, whatever happened to it', async () => {
    const error = await failureOf(clientAnswering({ status: 500, type: 'InternalServerError' }).client.send(get));
    expect([nameOf(error), isWriteOutcomeUnknown(error)]).toEqual(['InternalServerError', false]);
  });
});

describe("the SDK's retries", () => {
  it('never retry a write that may have been applied: its first error is final', async () => {
    const { client, calls } = clientAnswering({ throws: nodeError('ECONNRESET') }, 3);
    expect(isWriteOutcomeUnknown(await failureOf(client.send(put)))).toBe(true);
    expect(calls.count).toBe(1);
  });

  it('retry a write that certainly was not applied, and any read, as the standard strategy does', async () => {
    const refused = clientAnswering({ throws: nodeError('ECONNREFUSED') }, 3);
    expect(isWriteOutcomeUnknown(await failureOf(refused.client.send(put)))).toBe(false);
    expect(refused.calls.count).toBe(3);
    const read = clientAnswering({ throws: nodeError('ECONNRESET') }, 3);
    await failureOf(read.client.send(get));
    expect(read.calls.count).toBe(3);
  });
});

describe('afterCommit and repairing', () => {
  it('afterCommit: a failure of what follows a commit is an unknown outcome, whatever was thrown', async () => {
    const thrown = new Error('derived write failed');
    const error = await failureOf(
      afterCommit(async () => {
        throw thrown;
      }),
    );
    expect([error, isWriteOutcomeUnknown(error)]).toEqual([thrown, true]);
    const notAnObject = await failureOf(
      afterCommit(async () => {
        throw 'a string';
      }),
    );
    expect([notAnObject instanceof Error && notAnObject.message, isWriteOutcomeUnknown(notAnObject)]).toEqual([
      'a string',
      true,
    ]);
    expect(await afterCommit(async () => 'done')).toBe('done');
  });

  it("repairing: a failure of someone else's change is never this request's unknown outcome", async () => {
    const marked = await failureOf(
      afterCommit(async () => {
        throw new Error('lost');
      }),
    );
    const error = await failureOf(
      repairing(async () => {
        throw marked;
      }),
    );
    expect([error, isWriteOutcomeUnknown(error)]).toEqual([marked, false]);
    expect(await repairing(async () => 'repaired')).toBe('repaired');
  });

  it('isWriteOutcomeUnknown is false for anything unmarked, values that are not objects included', () => {
    for (const value of [new Error('x'), null, undefined, 'x', 42]) expect(isWriteOutcomeUnknown(value)).toBe(false);
  });
});
