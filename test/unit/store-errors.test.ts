import { describe, expect, it } from '@jest/globals';
import { isConditionFailed, isReplicatedWriteConflict, isStoreUnavailable } from '#shared/store/errors';

/**
 * How the store's failures are told apart (shared/store/errors.ts): "try again later" (a 503),
 * a condition that failed, another Region writing the same item; anything else is a bug (a 500).
 */
const sdkError = (name: string, fields: Record<string, unknown> = {}) =>
  Object.assign(new Error(name), { name, ...fields });

describe('isStoreUnavailable', () => {
  it.each([
    ['throttled (by name)', sdkError('ProvisionedThroughputExceededException', { $metadata: { httpStatusCode: 400 } })],
    ['throttled (429)', sdkError('TooManyRequests', { $metadata: { httpStatusCode: 429 } })],
    ['a 5xx', sdkError('InternalServerError', { $metadata: { httpStatusCode: 500 } })],
    ['an unmodelled 5xx', sdkError('Unknown', { $metadata: { httpStatusCode: 599 } })],
    ["marked as the service's fault", sdkError('ServiceFault', { $fault: 'server' })],
    ['marked retryable', sdkError('Retryable', { $retryable: {} })],
    ['a request timeout', sdkError('TimeoutError')],
    ['a connection reset', sdkError('Error', { code: 'ECONNRESET' })],
    ['a refused connection', sdkError('Error', { code: 'ECONNREFUSED' })],
    ['an unknown host', sdkError('Error', { code: 'ENOTFOUND' })],
    ['a cause that is transient', sdkError('Wrapped', { cause: sdkError('Error', { code: 'ETIMEDOUT' }) })],
    ["the request's deadline reached (AbortError)", sdkError('AbortError')],
  ])('is true for %s', (_, error) => expect(isStoreUnavailable(error)).toBe(true));

  it.each([
    ['a failed condition', sdkError('ConditionalCheckFailedException', { $metadata: { httpStatusCode: 400 } })],
    ['an invalid request', sdkError('ValidationException', { $metadata: { httpStatusCode: 400 }, $fault: 'client' })],
    ['a bug', new TypeError('x is undefined')],
    ['something that is not an Error', { name: 'ThrottlingException', $metadata: { httpStatusCode: 429 } }],
    ['nothing', undefined],
  ])('is false for %s', (_, error) => expect(isStoreUnavailable(error)).toBe(false));
});

describe('isReplicatedWriteConflict and isConditionFailed', () => {
  it("recognize DynamoDB's errors by name", () => {
    expect(isReplicatedWriteConflict(sdkError('ReplicatedWriteConflictException'))).toBe(true);
    expect(isConditionFailed(sdkError('ConditionalCheckFailedException'))).toBe(true);
  });

  it('are false for any other error, and for what is not an Error', () => {
    expect(isReplicatedWriteConflict(sdkError('ConditionalCheckFailedException'))).toBe(false);
    expect(isConditionFailed(sdkError('ReplicatedWriteConflictException'))).toBe(false);
    expect(isConditionFailed({ name: 'ConditionalCheckFailedException' })).toBe(false);
    expect(isReplicatedWriteConflict(null)).toBe(false);
  });
});
