import type { InitializeMiddleware, MiddlewareStack } from '@smithy/types';
import { documentClient } from '#shared/store/client';

/** What one DynamoDB call of the product read: items (Query's ScannedCount, GetItem's 0 or 1) and read units. */
export interface ReadCost {
  command: string;
  itemsRead: number;
  readUnits: number;
}

/**
 * Every call the process's document client sends asks DynamoDB for its consumed capacity
 * (ReturnConsumedCapacity: TOTAL, which DynamoDB Local reports too) while `fn` runs, and what each
 * call read is noted. Added by tests and the bench only; the product never asks for it.
 */
let recording: ReadCost[] | undefined;
const recorder: InitializeMiddleware<any, any> = (next, context) => async (args) => {
  if (recording) args.input.ReturnConsumedCapacity ??= 'TOTAL';
  const calls = recording;
  const result = await next(args);
  const output = result.output as {
    ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[];
    ScannedCount?: number;
    Item?: unknown;
  };
  calls?.push({
    command: String(context.commandName).replace(/Command$/, ''),
    itemsRead: output.ScannedCount ?? (output.Item ? 1 : 0),
    readUnits: [output.ConsumedCapacity ?? []].flat().reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0),
  });
  return result;
};
let installed = false;

/** The DynamoDB calls `fn` made and what each read, with its result. One recording at a time. */
export async function recordReads<T>(fn: () => Promise<T>): Promise<{ result: T; calls: ReadCost[] }> {
  if (!installed) {
    (documentClient.middlewareStack as MiddlewareStack<any, any>).add(recorder, {
      step: 'initialize',
      name: 'readCostRecorder',
      priority: 'low',
    });
    installed = true;
  }
  const calls: ReadCost[] = [];
  recording = calls;
  try {
    return { result: await fn(), calls };
  } finally {
    recording = undefined;
  }
}

export const itemsRead = (calls: ReadCost[]) => calls.reduce((sum, c) => sum + c.itemsRead, 0);
export const readUnits = (calls: ReadCost[]) => calls.reduce((sum, c) => sum + c.readUnits, 0);
