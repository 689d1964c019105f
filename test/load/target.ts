import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useLocalEndpoint } from '#infra/local/aws/dynamodb-local';
import { API_BASE_PATH } from '#shared/config';
import { freePort, run, TSX } from '../support/processes';
import { bodyText, type Fixture, type ScenarioRequest } from './scenarios';

/**
 * Where the load goes: an API base URL (ending in /api/v2), its tokens, and what they may use.
 * The stage's WAF limits each token to 30 req/s, so the load spreads over one token per
 * connection (`tokens` round-robin), as a load test against a real stage must.
 */
export interface Target {
  apiUrl: string;
  tokens: string[];
  organization: string;
  runId: string;
  /** Runs to comment on under load (runId among them). */
  commentRunIds: string[];
  /** The organization's run-notification secret; without one, run notifications are not loaded. */
  notificationSecret?: string;
  stop(): Promise<void>;
}

/** A --target as given, the address clients are given (TfeAddress) with or without /api/v2: its API base URL. */
export const apiUrlOf = (target: string) => `${target.replace(/\/+$/, '').replace(/\/api\/v2$/, '')}${API_BASE_PATH}`;

/**
 * `npm start` in its own process over a throwaway DATA_DIR: the load never shares its event loop.
 * Besides the seeded token, `tokenCount - 1` more owner tokens are created in its store, as the
 * operator CLI would.
 */
export async function startLocalTarget(tokenCount: number): Promise<Target> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tfc-load-'));
  const proc = run([TSX, 'infra/local/start.ts'], {
    PORT: String(await freePort()),
    DDB_PORT: String(await freePort()),
    ISSUER_PORT: String(await freePort()),
    DATA_DIR: dataDir,
    TABLE_NAME: undefined,
    AWS_ENDPOINT_URL_DYNAMODB: undefined,
    POWERTOOLS_LOG_LEVEL: 'ERROR',
  });
  const stop = async () => {
    proc.child.kill('SIGINT');
    await proc.exited;
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    // A start after a source change synthesizes first: about 20 s, longer on a busy machine.
    const [, apiUrl] = await proc.waitFor(/API ready in [\d.]+ s at (\S+)/, 180_000);
    const [, token] = await proc.waitFor(/TOKEN=(\S+)/);
    const [, runId] = await proc.waitFor(/RUN=(run-\w+)/);
    const [, endpoint, tableName] = await proc.waitFor(/DynamoDB Local on (\S+) \(table (\S+),/);
    proc.child.stdout.removeAllListeners('data'); // the access log is not for us; keep the pipe drained
    proc.child.stdout.resume();
    const { tokens, runIds, notificationSecret } = await inLocalStore(endpoint!, tableName!, tokenCount - 1);
    return {
      apiUrl: apiUrl!,
      tokens: [token!, ...tokens],
      organization: 'example-org',
      runId: runId!,
      commentRunIds: [runId!, ...runIds],
      notificationSecret,
      stop,
    };
  } catch (error) {
    // A set-up that failed leaves no stack (and no DynamoDB Local) behind.
    await stop();
    throw error;
  }
}

/** What the operator CLI would make in the local store: `count` more owner tokens and runs, and the organization's notification secret. */
async function inLocalStore(
  endpoint: string,
  tableName: string,
  count: number,
): Promise<{ tokens: string[]; runIds: string[]; notificationSecret: string }> {
  useLocalEndpoint(endpoint);
  process.env.TABLE_NAME = tableName;
  // Imported only now: the store's client reads the endpoint when it is created.
  const { createToken } = await import('#shared/store/tokens');
  const { createNotificationSecret } = await import('#shared/store/notification-secrets');
  const { written } = await import('../support/written');
  const { registerNewRun } = await import('#shared/store/runs');
  // A few at a time: a DynamoDB Local just started on a busy machine answers a burst of 120 late.
  const tokens: string[] = [];
  const runIds: string[] = [];
  await inParallel(
    Array.from({ length: count }, (_, i) => i),
    SETUP_WIDTH,
    async (i) => {
      tokens.push((await createToken({ subject: `load-${i}`, grants: { 'example-org': 'owner' } })).token);
      runIds.push((await registerNewRun('example-org', 'load')).runId);
    },
  );
  return {
    tokens,
    runIds,
    notificationSecret: written(await createNotificationSecret('example-org')).current.secret,
  };
}

/** Set-up and clean-up requests in flight at once: few, so a busy machine's DynamoDB Local answers them in time. */
const SETUP_WIDTH = 4;

let nextToken = 0;
/** The target's tokens in turn, so no one token's rate limit is reached. */
export const anyToken = (target: Target) => target.tokens[nextToken++ % target.tokens.length]!;

/** A tiny API client for setting up and cleaning up around a load run. */
export async function call(target: Target, request: ScenarioRequest): Promise<{ status: number; json: any }> {
  const response = await fetch(`${target.apiUrl}${request.path}`, {
    method: request.method,
    headers: {
      authorization: `Bearer ${anyToken(target)}`,
      'content-type': 'application/vnd.api+json',
      ...request.headers,
    },
    body: bodyText(request),
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined };
}

async function createKey(target: Target, key: string): Promise<string> {
  const response = await call(target, {
    method: 'POST',
    path: `/organizations/${target.organization}/reserved-tag-keys`,
    body: { data: { type: 'reserved-tag-keys', attributes: { key } } },
  });
  if (response.status !== 201)
    throw new Error(`could not create key ${key}: ${response.status} ${JSON.stringify(response.json)}`);
  return response.json.data.id as string;
}

/** Runs `tasks` with at most `width` in flight. */
export async function inParallel<T>(items: T[], width: number, task: (item: T) => Promise<unknown>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: Math.min(width, queue.length) }, async () => {
      while (queue.length > 0) await task(queue.shift()!);
    }),
  );
}

/** Keys to update (one per connection), a comment to show; everything created is recorded for cleanup. */
export async function prepareFixture(target: Target, unique: string, connections: number): Promise<Fixture> {
  const keyIds: string[] = [];
  await inParallel(
    Array.from({ length: connections }, (_, i) => i),
    8,
    async (i) => {
      keyIds.push(await createKey(target, `load-${unique}-fixture-${i}`));
    },
  );
  const comment = await call(target, {
    method: 'POST',
    path: `/runs/${target.runId}/comments`,
    body: { data: { type: 'comments', attributes: { body: `Load test ${unique}: fixture comment` } } },
  });
  if (comment.status !== 201)
    throw new Error(`could not create a comment on ${target.runId}: ${comment.status} ${JSON.stringify(comment.json)}`);
  return {
    organization: target.organization,
    runId: target.runId,
    commentRunIds: target.commentRunIds,
    keyIds,
    deletable: [],
    commentId: comment.json.data.id,
    notificationSecret: target.notificationSecret ?? '',
  };
}

/** Fills the delete pool up to `size` keys (when the create scenario has not already). */
export async function fillDeletable(target: Target, fixture: Fixture, unique: string, size: number): Promise<void> {
  const missing = Array.from({ length: Math.max(0, size - fixture.deletable.length) }, (_, i) => i);
  await inParallel(missing, SETUP_WIDTH, async (i) => {
    fixture.deletable.push(await createKey(target, `load-${unique}-pool-${i}`));
  });
}

/** Deletes every key the run created that is still there (comments are immutable and stay). */
export async function cleanUp(target: Target, ids: string[]): Promise<number> {
  let deleted = 0;
  await inParallel(ids, SETUP_WIDTH, async (id) => {
    const response = await call(target, { method: 'DELETE', path: `/reserved-tags/${id}` });
    if (response.status === 204) deleted++;
  });
  return deleted;
}

export const apiPath = (target: Target, path: string) => `${new URL(target.apiUrl).pathname.replace(/\/$/, '')}${path}`;
