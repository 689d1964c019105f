import type { DeleteCommandInput, PutCommandInput, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';

/** One write of one item, as the store sends it (single-write.ts): the table is the store's to name. */
type Without<T> = Omit<T, 'TableName' | 'ReturnValuesOnConditionCheckFailure'>;
export type Write =
  | { Put: Without<PutCommandInput> }
  | { Update: Without<UpdateCommandInput> }
  | { Delete: Without<DeleteCommandInput> };

/**
 * For tests only: called before each write is sent, and after each that was written. A hook that
 * throws stops the writer right there, as if its process had died between two writes
 * (test/int/killed-writers.int.test.ts).
 */
export const writeHooks: { beforeWrite?: (write: Write) => void; afterWritten?: (write: Write) => void } = {};
