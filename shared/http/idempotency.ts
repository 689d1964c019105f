import {
  IdempotencyAlreadyInProgressError, IdempotencyConfig, IdempotencyPersistenceLayerError, IdempotencyValidationError, makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { BadRequest, Conflict, InvalidAttribute } from '../jsonapi/errors';
import { routeOf } from '../routes';
import { documentClient, tableName } from '../store/client';
import { keys } from '../store/keys';
import { TABLE_KEYS, TTL_ATTRIBUTE } from '../store/table';
import type { ApiRequest, ApiResult } from './handler';

/**
 * Safe retries of a create, with Powertools Idempotency over our table:
 *
 * - With an `Idempotency-Key` header: the same key from the same token on the same route within
 *   24 hours returns the first response (same status, same resource) and writes nothing; the same
 *   key with another body (or another path) is a 422.
 * - Without one (python-tfe replays a POST on 502/503/504, sending no key): the same body from the
 *   same token on the same path within 60 seconds returns the first response.
 *
 * Only a successful create is remembered: a refused one (404, 422, ...) leaves no record, so a
 * corrected retry runs. A second request arriving while the first is still running waits for it
 * briefly and returns its response; still running after that, it gets a 409 to retry.
 */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const KEYED_WINDOW_SECONDS = 24 * 60 * 60;
/**
 * python-tfe retries 502/503/504 up to 5 times, sleeping min(0.5 s × 2^attempt, 8 s) plus up to
 * 0.1 s of jitter (0.5 + 1 + 2 + 4 + 8 ≈ 15.5 s), each attempt bounded by the 29 s API Gateway
 * timeout at worst: a replay arrives well within 60 s of the first try.
 */
export const REPLAY_WINDOW_SECONDS = 60;
/** Waits for a concurrent request with the same key: about 1.5 s in all, a create takes milliseconds. */
const IN_PROGRESS_WAITS_MS = [50, 100, 200, 400, 800];
/** Stripe's bound; printable ASCII so the key is a header value anywhere. */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * Powertools' DynamoDB layer, keyed our way: its idempotency key (`IDEMPOTENCY#<function>#…#<hash>`)
 * is the partition key and SK a constant, so records spread over partitions instead of sharing the
 * one static partition Powertools uses on a table with a sort key (a hot key at 1,000 writes/s).
 */
class TablePersistenceLayer extends DynamoDBPersistenceLayer {
  protected override getKey(idempotencyKey: string): Record<string, AttributeValue> {
    const key = keys.idempotencyRecord(idempotencyKey);
    return { [TABLE_KEYS.partitionKey]: { S: key.PK }, [TABLE_KEYS.sortKey]: { S: key.SK } };
  }
}

type Window = 'keyed' | 'replay';
/** One layer per window and table: Powertools configures a layer once, with one expiry. */
const layers = new Map<string, TablePersistenceLayer>();
function layerFor(window: Window): TablePersistenceLayer {
  const table = tableName();
  let layer = layers.get(`${window}\0${table}`);
  if (!layer) {
    layer = new TablePersistenceLayer({
      tableName: table,
      keyAttr: TABLE_KEYS.partitionKey,
      sortKeyAttr: TABLE_KEYS.sortKey,
      // Epoch seconds: the table's TTL attribute, so DynamoDB deletes expired records on its own.
      expiryAttr: TTL_ATTRIBUTE,
      awsSdkV3Client: documentClient,
    });
    layers.set(`${window}\0${table}`, layer);
  }
  return layer;
}

/** What identifies the operation (hashed into the record's key) and, with a key, what must not change. */
interface Scoped {
  scope: Record<string, unknown>;
  fingerprint?: Record<string, unknown>;
}

export interface IdempotentCreateOptions {
  /** Refusals that need no store (an id's shape, the token's role): made before any record is written. */
  refuseEarly?: (request: ApiRequest) => void;
}

/** `create`, made safe to retry as described above. */
export function idempotentCreate(functionName: string, create: (request: ApiRequest) => Promise<ApiResult>, options: IdempotentCreateOptions = {}) {
  const route = routeOf(functionName);
  return async (request: ApiRequest): Promise<ApiResult> => {
    options.refuseEarly?.(request);
    const key = request.event.headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()];
    if (key !== undefined && !KEY_PATTERN.test(key)) throw new BadRequest(`${IDEMPOTENCY_KEY_HEADER} must be 1 to 255 printable ASCII characters`);
    const operation = { token: request.principal.tokenId, route: `${route.method} ${route.path}` };
    const what = { path: request.pathParameters, data: request.data };
    const window: Window = key === undefined ? 'replay' : 'keyed';
    const payload: Scoped = key === undefined ? { scope: { ...operation, ...what } } : { scope: { ...operation, key }, fingerprint: what };
    const config = new IdempotencyConfig({
      eventKeyJmesPath: 'scope',
      ...(window === 'keyed' ? { payloadValidationJmesPath: 'fingerprint' } : {}),
      expiresAfterSeconds: window === 'keyed' ? KEYED_WINDOW_SECONDS : REPLAY_WINDOW_SECONDS,
      hashFunction: 'sha256',
      throwOnNoIdempotencyKey: true,
    });
    // An in-progress record expires with this invocation: a crashed create does not hold the key for the whole window.
    config.registerLambdaContext(request.context);
    const once = makeIdempotent(async (_payload: Scoped) => create(request), {
      persistenceStore: layerFor(window),
      config,
      keyPrefix: `${keys.idempotencyKeyPrefix(functionName)}#${window}`,
    });
    return withPowertoolsErrors(key !== undefined, () => waitingForConcurrent(() => once(payload)));
  };
}

async function waitingForConcurrent<T>(attempt: () => Promise<T>): Promise<T> {
  for (const wait of IN_PROGRESS_WAITS_MS) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof IdempotencyAlreadyInProgressError)) throw error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
  return attempt();
}

/** Powertools' errors as the contract's; a store failure underneath stays what it is (503 when unavailable). */
async function withPowertoolsErrors<T>(keyed: boolean, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof IdempotencyValidationError) {
      throw new InvalidAttribute(`${IDEMPOTENCY_KEY_HEADER} has already been used for a different request (another body or path)`);
    }
    if (error instanceof IdempotencyAlreadyInProgressError) {
      throw new Conflict(keyed
        ? `a request with this ${IDEMPOTENCY_KEY_HEADER} is still in progress; retry it`
        : 'an identical request is still in progress; retry it');
    }
    if (error instanceof IdempotencyPersistenceLayerError && error.cause !== undefined) throw error.cause;
    throw error;
  }
}
