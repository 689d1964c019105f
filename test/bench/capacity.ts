import type { MiddlewareStack, SerializeMiddleware } from '@smithy/types';
import { documentClient } from '#shared/store/client';
import { EXPIRY_KEYS } from '#shared/store/expiry';

/**
 * The capacity units a request consumed, as DynamoDB reports them: every call the process's
 * document client sends while `fn` runs asks for ReturnConsumedCapacity: INDEXES, and what each
 * answer reports is summed, the table's and each index's apart. Added by the bench and its tests
 * only: the product never asks for it, and the request the call recorder sees
 * (test/support/round-trips.ts), which the bench replays through the bare SDK, is left as the
 * handler built it (this middleware sends a copy, innermost in the build step).
 */
export interface Capacity {
  /** Write and read units on the table itself. */
  tableWrite: number;
  tableRead: number;
  /** Units per global secondary index, as reported (DynamoDB Local may report none: see `indexReported`). */
  indexWrite: Record<string, number>;
  indexRead: Record<string, number>;
  /** The calls, and how many of them reported an index's units. */
  calls: number;
  indexReported: number;
  /**
   * Per call: command, table write units, table read units, index write units as reported, and
   * whether the item it wrote carries the Expiry index's key (so the index writes an entry).
   */
  perCall: Array<{ command: string; write: number; read: number; indexWrite: number; expiryEntry: boolean }>;
}

interface ConsumedCapacity {
  CapacityUnits?: number;
  WriteCapacityUnits?: number;
  ReadCapacityUnits?: number;
  Table?: { CapacityUnits?: number; WriteCapacityUnits?: number; ReadCapacityUnits?: number };
  GlobalSecondaryIndexes?: Record<
    string,
    { CapacityUnits?: number; WriteCapacityUnits?: number; ReadCapacityUnits?: number }
  >;
}

const READS = new Set([
  'GetItemCommand',
  'QueryCommand',
  'BatchGetItemCommand',
  'ScanCommand',
  'TransactGetItemsCommand',
]);

export const emptyCapacity = (): Capacity => ({
  tableWrite: 0,
  tableRead: 0,
  indexWrite: {},
  indexRead: {},
  calls: 0,
  indexReported: 0,
  perCall: [],
});

let recording: Capacity | undefined;

/**
 * Right before the low-level input is serialized: a copy of it asks for the capacity. Later steps
 * (the call recorder among them) hold that copy, so the request goes back to what the handler
 * built once the answer is in: a recorded call is replayed as the handler sent it in production.
 */
const middleware: SerializeMiddleware<any, any> = (next, context) => async (args) => {
  const into = recording;
  if (!into) return next(args);
  const input: Record<string, unknown> = {
    ...(args.input as Record<string, unknown>),
    ReturnConsumedCapacity: 'INDEXES',
  };
  try {
    const result = await next({ ...args, input });
    add(
      into,
      String(context.commandName),
      (result.output as { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] }).ConsumedCapacity,
      writesExpiryEntry(input),
    );
    return result;
  } finally {
    delete input.ReturnConsumedCapacity;
  }
};

/** Adds one answer's ConsumedCapacity (one, or a list for batch calls) to `into`. */
export function add(
  into: Capacity,
  command: string,
  consumed: ConsumedCapacity | ConsumedCapacity[] | undefined,
  expiryEntry = false,
): void {
  const read = READS.has(command);
  const units = (c?: { CapacityUnits?: number; WriteCapacityUnits?: number; ReadCapacityUnits?: number }) =>
    (read ? c?.ReadCapacityUnits : c?.WriteCapacityUnits) ?? c?.CapacityUnits ?? 0;
  let tableUnits = 0;
  let indexUnits = 0;
  let reported = false;
  for (const c of [consumed ?? []].flat()) {
    // With INDEXES, `Table` is the table's share and CapacityUnits the whole; without a Table part, the whole is the table's.
    tableUnits += c.Table ? units(c.Table) : units(c);
    for (const [index, i] of Object.entries(c.GlobalSecondaryIndexes ?? {})) {
      reported = true;
      indexUnits += units(i);
      const bucket = read ? into.indexRead : into.indexWrite;
      bucket[index] = (bucket[index] ?? 0) + units(i);
    }
  }
  if (read) into.tableRead += tableUnits;
  else into.tableWrite += tableUnits;
  into.calls += 1;
  if (reported) into.indexReported += 1;
  into.perCall.push({
    command: command.replace(/Command$/, ''),
    write: read ? 0 : tableUnits,
    read: read ? tableUnits : 0,
    indexWrite: read ? 0 : indexUnits,
    expiryEntry,
  });
}

/**
 * Whether a write puts an entry in the sparse Expiry index (shared/store/expiry.ts): a PutItem of
 * an item with its shard key, or an UpdateItem that sets it (a tombstone). A DeleteItem of such an
 * item removes its entry; the bench's creates make none.
 */
export function writesExpiryEntry(input: Record<string, unknown>): boolean {
  const item = input.Item as Record<string, unknown> | undefined;
  if (item) return EXPIRY_KEYS.shard in item;
  const names = Object.values((input.ExpressionAttributeNames ?? {}) as Record<string, string>);
  return (
    typeof input.UpdateExpression === 'string' &&
    (names.includes(EXPIRY_KEYS.shard) || new RegExp(`\\b${EXPIRY_KEYS.shard}\\b`).test(input.UpdateExpression))
  );
}

let installed = false;

/** The capacity `fn`'s DynamoDB calls consumed, with its result. One recording at a time. */
export async function recordCapacity<T>(fn: () => Promise<T>): Promise<{ result: T; capacity: Capacity }> {
  if (!installed) {
    (documentClient.middlewareStack as MiddlewareStack<any, any>).add(middleware, {
      step: 'serialize',
      name: 'benchCapacityRecorder',
      priority: 'high',
    });
    installed = true;
  }
  const capacity = emptyCapacity();
  recording = capacity;
  try {
    return { result: await fn(), capacity };
  } finally {
    recording = undefined;
  }
}

/** Write units on the table and every index together, as reported. */
export const totalWrite = (c: Capacity) => c.tableWrite + Object.values(c.indexWrite).reduce((a, b) => a + b, 0);

/**
 * The Expiry index's write units from the items written, for a store that reports none (DynamoDB
 * Local): an entry holds the keys alone (PK, SK, sweepShard, sweepAt, well under 1 KB), so 1 unit
 * per item that carries the index's key.
 */
export const indexUnitsOf = (c: Capacity) => c.perCall.filter((call) => call.expiryEntry).length;

/** Write units per request: the table's, and the index's as reported or, when none was, from the items. */
export const writeUnitsOf = (c: Capacity) => totalWrite(c) + (c.indexReported > 0 ? 0 : indexUnitsOf(c));
