import { randomUUID } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { TABLE_KEYS } from '#shared/store/table';
import { LOCAL_REGION } from './cloudformation';
import { replicatedWriteConflictRate } from '../settings';

/**
 * The local stand-in for what a DynamoDB global table in multi-Region strong consistency (MRSC)
 * refuses, so that nothing it refuses slips back in unnoticed. The IAM proxy (iam.ts) asks it about
 * each call it has authorized, before forwarding (DynamoDB Developer Guide, global tables):
 * - transactions, which an MRSC replica refuses: a ValidationException;
 * - ReplicatedWriteConflictException, a retryable refusal of a write to an item another Region is
 *   modifying: injected at a rate (to test the callers' handling), or from its real cause, another
 *   local Region's write of the item in flight (`InFlightWrites`); DynamoDB Local never sees it.
 * Answered as DynamoDB answers (HTTP 400, `__type` naming the exception), so the SDK raises the
 * error it would raise in AWS.
 */

/**
 * The namespace of DynamoDB's own exceptions in an error's `__type`, as DynamoDB's answers carry it
 * (`…v20120810#ConditionalCheckFailedException`). DynamoDB Local's own validation errors say
 * `com.amazon.coral.validate#ValidationException`: the SDK keeps only the name after `#`, so both
 * read as a ValidationException.
 */
export const DYNAMODB_ERROR_NAMESPACE = 'com.amazonaws.dynamodb.v20120810';

/** What an MRSC replica refuses whatever they hold. */
export const TRANSACTION_OPERATIONS: ReadonlySet<string> = new Set(['TransactWriteItems', 'TransactGetItems']);
/** The writes a replicated write conflict can refuse. */
export const CONFLICTING_WRITE_OPERATIONS: ReadonlySet<string> = new Set([
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
]);

/**
 * AWS publishes no exact message for a transaction invoked on an MRSC replica (only that it returns
 * an error): this wording is ours.
 */
export const transactionsRefusedMessage = (operation: string) =>
  `${operation} is not supported: transactions are not supported on multi-Region strongly consistent (MRSC) global tables`;

/**
 * AWS publishes no exact runtime message either: this is the SDK model's description of
 * ReplicatedWriteConflictException (@aws-sdk/client-dynamodb).
 */
export const REPLICATED_WRITE_CONFLICT_MESSAGE =
  'The request was rejected because one or more items in the request are being modified by a request in another Region.';

/**
 * Whether the proxy refuses transactions when its options do not say. An MRSC replica refuses
 * them, and the store uses none (shared/store/single-write.ts): on, so none can slip back in.
 */
export const REFUSE_TRANSACTIONS_BY_DEFAULT = true;

/** One item of a table: its key attributes' values, in the table's key order, as canonical JSON. */
export interface ItemRef {
  table: string;
  /** E.g. `{"PK":{"S":"ORG#acme"},"SK":{"S":"TAGKEY#env"}}`. */
  key: string;
}

/** A call the MRSC emulation refused, answered without reaching DynamoDB Local. */
export interface MrscRefusal {
  /** The exception of the answer (`__type` after `#`): the SDK error's `name`. */
  error: 'ValidationException' | 'ReplicatedWriteConflictException';
  /**
   * `transaction`: MRSC has none. `injected`: a draw at the configured rate.
   * `in-flight`: another Region's write of one of the same items was in flight.
   */
  cause: 'transaction' | 'injected' | 'in-flight';
  message: string;
  /** The Region label of the refused call. */
  region: string;
  /** `in-flight`: the other Region, and the item both wrote. */
  conflict?: { region: string; item: ItemRef };
}

/** DynamoDB's answer to a refused call. */
export interface MrscErrorResponse {
  status: 400;
  headers: Record<string, string>;
  body: string;
}

export interface MrscOptions {
  /**
   * Refuse TransactWriteItems and TransactGetItems with a ValidationException, as an MRSC replica
   * does. Default: REFUSE_TRANSACTIONS_BY_DEFAULT.
   */
  refuseTransactions?: boolean;
  /**
   * The share of writes (PutItem, UpdateItem, DeleteItem, BatchWriteItem) refused with a
   * ReplicatedWriteConflictException and not applied, from 0 to 1. Default:
   * LOCAL_REPLICATED_WRITE_CONFLICT_RATE (infra/local/settings.ts), else 0 (off).
   */
  replicatedWriteConflictRate?: number;
  /** Seeds the rate's draws, so that a run refuses the same writes every time; Math.random otherwise. */
  seed?: number;
  /**
   * Refuse a write of an item while another Region's write of it is in flight. Give the same object
   * to every local Region's proxy. Off without it.
   */
  inFlightWrites?: InFlightWrites;
  /** The Region label of this proxy's callers. Default: the Region each request was signed for. */
  region?: string;
  /** A table's key attributes, partition key first. Default: its partition key and the project's sort key (`SK`). */
  keyAttributesOf?(table: string): readonly string[];
}

/** The emulation's answer about one call: refused, or forwarded and `done()` once DynamoDB Local answered. */
export type MrscAdmission = { refusal: MrscRefusal; done?: undefined } | { refusal?: undefined; done(): void };

export class MrscEmulation {
  readonly refuseTransactions: boolean;
  readonly replicatedWriteConflictRate: number;
  readonly inFlightWrites: InFlightWrites | undefined;
  private readonly region: string | undefined;
  private readonly random: () => number;
  private readonly keyAttributesOf: (table: string) => readonly string[];

  /** `partitionKeyOf` names each table's partition key (the proxy's, from the template). */
  constructor(options: MrscOptions = {}, partitionKeyOf: (table: string) => string = () => TABLE_KEYS.partitionKey) {
    this.refuseTransactions = options.refuseTransactions ?? REFUSE_TRANSACTIONS_BY_DEFAULT;
    const rate = options.replicatedWriteConflictRate ?? replicatedWriteConflictRate();
    if (!(rate >= 0 && rate <= 1)) throw new Error(`replicatedWriteConflictRate ${rate} is not a rate from 0 to 1`);
    this.replicatedWriteConflictRate = rate;
    this.inFlightWrites = options.inFlightWrites;
    this.region = options.region;
    this.random = options.seed === undefined ? Math.random : seededRandom(options.seed);
    this.keyAttributesOf = options.keyAttributesOf ?? ((table) => [partitionKeyOf(table), TABLE_KEYS.sortKey]);
  }

  /**
   * One call the proxy is about to forward: refused, or admitted. An admitted write counts as in
   * flight (with `inFlightWrites`) until `done()`, which the proxy calls once DynamoDB Local answered
   * (or failed to). `signedRegion` is the Region the request was signed for, the caller's label
   * unless the options name this proxy's Region.
   */
  admit(operation: string, body: unknown, signedRegion?: string): MrscAdmission {
    const region = this.region ?? signedRegion ?? LOCAL_REGION;
    if (TRANSACTION_OPERATIONS.has(operation)) {
      return this.refuseTransactions
        ? {
            refusal: {
              error: 'ValidationException',
              cause: 'transaction',
              message: transactionsRefusedMessage(operation),
              region,
            },
          }
        : admitted();
    }
    if (!CONFLICTING_WRITE_OPERATIONS.has(operation)) return admitted();
    const conflict = (cause: 'injected' | 'in-flight', other?: MrscRefusal['conflict']): MrscAdmission => ({
      refusal: {
        error: 'ReplicatedWriteConflictException',
        cause,
        message: REPLICATED_WRITE_CONFLICT_MESSAGE,
        region,
        ...(other ? { conflict: other } : {}),
      },
    });
    const items = this.inFlightWrites ? itemsWritten(operation, body, this.keyAttributesOf) : [];
    if (this.inFlightWrites) {
      const other = this.inFlightWrites.conflictOf(region, items);
      if (other) return conflict('in-flight', other);
    }
    if (this.replicatedWriteConflictRate > 0 && this.random() < this.replicatedWriteConflictRate)
      return conflict('injected');
    return this.inFlightWrites ? { done: this.inFlightWrites.begin(region, items) } : admitted();
  }
}

const admitted = (): MrscAdmission => ({ done: () => undefined });

/**
 * The writes in flight through the local Regions' proxies, by item: the one object every local
 * Region's proxy is given, as the replicas of one MRSC table share its items. Writes of one item
 * from the same Region are not refused (a Region orders its own writes); another Region's are.
 */
export class InFlightWrites {
  /** Item → Region → its writes of the item in flight. */
  private readonly writers = new Map<string, Map<string, number>>();

  /** Another Region's write in flight of one of `items`, if any. */
  conflictOf(region: string, items: readonly ItemRef[]): { region: string; item: ItemRef } | undefined {
    for (const item of items) {
      for (const [other, count] of this.writers.get(idOf(item)) ?? []) {
        if (other !== region && count > 0) return { region: other, item };
      }
    }
    return undefined;
  }

  /** Counts a write of `items` from `region` as in flight; the function returned ends it (once, however often called). */
  begin(region: string, items: readonly ItemRef[]): () => void {
    const ids = [...new Set(items.map(idOf))];
    for (const id of ids) {
      const regions = this.writers.get(id) ?? new Map<string, number>();
      regions.set(region, (regions.get(region) ?? 0) + 1);
      this.writers.set(id, regions);
    }
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      for (const id of ids) {
        const regions = this.writers.get(id)!;
        const left = regions.get(region)! - 1;
        if (left > 0) regions.set(region, left);
        else regions.delete(region);
        if (regions.size === 0) this.writers.delete(id);
      }
    };
  }

  /** How many items have a write in flight (0 once every write was answered). */
  get size(): number {
    return this.writers.size;
  }
}

const idOf = (item: ItemRef) => `${item.table}\u0000${item.key}`;

/** The items a write names: PutItem's Item, UpdateItem's and DeleteItem's Key, each of BatchWriteItem's requests. */
export function itemsWritten(
  operation: string,
  body: any,
  keyAttributesOf: (table: string) => readonly string[],
): ItemRef[] {
  const ref = (table: string, item: Record<string, unknown> | undefined): ItemRef => {
    const key: Record<string, unknown> = {};
    for (const name of keyAttributesOf(table)) if (item?.[name] !== undefined) key[name] = item[name];
    return { table, key: JSON.stringify(key) };
  };
  switch (operation) {
    case 'PutItem':
      return [ref(body?.TableName, body?.Item)];
    case 'UpdateItem':
    case 'DeleteItem':
      return [ref(body?.TableName, body?.Key)];
    case 'BatchWriteItem':
      return Object.entries((body?.RequestItems ?? {}) as Record<string, any[]>).flatMap(([table, requests]) =>
        (requests ?? []).map((request) => ref(table, request?.PutRequest?.Item ?? request?.DeleteRequest?.Key)),
      );
    default:
      return [];
  }
}

/** DynamoDB's answer to a refused call: HTTP 400, `__type` in DynamoDB's namespace, its request id and CRC32 headers. */
export function mrscErrorResponse(refusal: Pick<MrscRefusal, 'error' | 'message'>): MrscErrorResponse {
  const body = JSON.stringify({ __type: `${DYNAMODB_ERROR_NAMESPACE}#${refusal.error}`, message: refusal.message });
  return {
    status: 400,
    headers: {
      'Content-Type': 'application/x-amz-json-1.0',
      'Content-Length': String(Buffer.byteLength(body)),
      'x-amzn-RequestId': randomUUID().replace(/-/g, '').toUpperCase(),
      'x-amz-crc32': String(crc32(body)),
    },
    body,
  };
}

/** A reproducible source of draws in [0, 1) (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
