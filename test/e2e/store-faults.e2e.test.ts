import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startDynamoDbLocal, type DynamoDbLocal } from '#infra/local/aws/dynamodb-local';
import type { LocalStack } from '#infra/local/local-stack';
import { newId } from '#shared/ids';
import { TestApi } from '../support/api';
import { adminStreams } from '../support/admin-cli';
import { commentDocument, keyDocument } from '../support/documents';
import { startOwnStore, type OwnStore } from '../support/own-store';

/**
 * Store faults under load, over HTTP through the local stack: this file's own DynamoDB Local (on
 * disk, so that it can be killed and started again without losing the table; the run's shared one
 * keeps serving the other test files) is stalled with SIGSTOP, then killed, while clients keep
 * sending reads and writes. Every answer during a fault is the contract's 503 with Retry-After,
 * within 10 s, well before the function's 15 s timeout; a write whose fate is unknown says so; and the same
 * stack, never restarted, answers normally once the store is back.
 */
const ORG = 'faults-org';
const TABLE = 'store-faults';
/** Bound on a fault's answer: a few store calls' timeouts, far inside the function's (15 s). */
const FAULT_ANSWER_MS = 10_000;
const UNKNOWN_OUTCOME = /outcome is unknown.*Idempotency-Key/;

let own: OwnStore;
let dataDir: string;
let store: DynamoDbLocal;
let stack: LocalStack;
let api: TestApi;
let owner: string;
/** Tokens no request has used yet: each makes the authorizer read the store (a cache miss). */
const freshTokens: string[] = [];
let runId: string;

/** The operator CLI against this file's store, as an operator would run it on a table. */
async function admin(...args: string[]): Promise<any> {
  const env = { AWS_ENDPOINT_URL_DYNAMODB: store.endpoint, TABLE_NAME: TABLE };
  const { code, stdout, stderr } = await adminStreams([...args, '--json'], env);
  if (code !== 0) throw new Error(`npm run admin -- ${args.join(' ')}: exit ${code}\n${stderr}`);
  return JSON.parse(stdout);
}

beforeAll(async () => {
  own = await startOwnStore(TABLE);
  ({ dataDir, store, stack } = own);
  api = new TestApi(stack.url);
  owner = (await admin('token', 'create', '--org', ORG, '--role', 'owner')).token;
  for (let i = 0; i < 2; i++) freshTokens.push((await admin('token', 'create', '--org', ORG, '--role', 'owner')).token);
  runId = newId('run');
  await admin('run', 'register', runId, '--org', ORG);
}, 180_000);

afterAll(() => own?.stop());

interface Answer {
  kind: string;
  status: number;
  ms: number;
  body: any;
  retryAfter: string | null;
  contentType: string | null;
  requestId: string | null;
  written?: string;
}

/** A key create with a fresh name, sent with that name as its Idempotency-Key when `keyed`. */
function createKey(token: string, keyed = false) {
  const written = newId('rtk').slice(4);
  return {
    written,
    response: fetch(`${stack.url}/api/v2/organizations/${ORG}/reserved-tag-keys`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/vnd.api+json',
        ...(keyed ? { 'Idempotency-Key': written } : {}),
      },
      body: JSON.stringify(keyDocument(written)),
    }),
  };
}

/** Each request, and for a write what it would store: a comment body or a key unique to it. */
const requests: Record<string, (token: string) => { response: Promise<Response>; written?: string }> = {
  'list keys': (token) => ({
    response: fetch(`${stack.url}/api/v2/organizations/${ORG}/reserved-tag-keys`, {
      headers: { Authorization: `Bearer ${token}` },
    }),
  }),
  'list comments': (token) => ({
    response: fetch(`${stack.url}/api/v2/runs/${runId}/comments`, { headers: { Authorization: `Bearer ${token}` } }),
  }),
  'create comment': (token) => {
    const written = `written under load ${newId('wsc')}`;
    return {
      written,
      response: fetch(`${stack.url}/api/v2/runs/${runId}/comments`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/vnd.api+json' },
        body: JSON.stringify(commentDocument(written)),
      }),
    };
  },
  'create key': (token) => createKey(token),
  // Its first store call is a write (its receipt's claim), which a stall leaves with no answer: it
  // claims once more, and answers 503 with nothing written.
  'create key with Idempotency-Key': (token) => createKey(token, true),
};

async function send(kind: string, token = owner): Promise<Answer> {
  const started = performance.now();
  const { response: sent, written } = requests[kind]!(token);
  const response = await sent;
  const text = await response.text();
  return {
    kind,
    status: response.status,
    ms: Math.round(performance.now() - started),
    body: text ? JSON.parse(text) : undefined,
    retryAfter: response.headers.get('retry-after'),
    contentType: response.headers.get('content-type'),
    requestId: response.headers.get('x-request-id'),
    ...(written ? { written } : {}),
  };
}

/** Every comment body of the run and every key of the organization, as the API lists them now. */
async function everythingWritten(): Promise<Set<string>> {
  const found = new Set<string>();
  for (const [path, read] of [
    [`/runs/${runId}/comments`, (item: any) => item.attributes.body],
    [`/organizations/${ORG}/reserved-tag-keys`, (item: any) => item.attributes.key],
  ] as const) {
    for (let page = 1; ; page++) {
      const { json } = await api.get(`${path}?page%5Bsize%5D=100&page%5Bnumber%5D=${page}`, { token: owner });
      for (const item of json.data) found.add(read(item));
      if (json.meta.pagination['next-page'] === null) break;
    }
  }
  return found;
}

/** Clients sending every kind of request, one after the other, until `stop()`; each answer kept with the time it took. */
function load(clients: number) {
  const answers: Answer[] = [];
  let running = true;
  const kinds = Object.keys(requests);
  const loops = Array.from({ length: clients }, async (_, i) => {
    for (let n = i; running; n++) answers.push(await send(kinds[n % kinds.length]!));
  });
  return {
    answers,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** The contract's 503: JSON:API body, Retry-After in whole seconds, the request id, within FAULT_ANSWER_MS. */
function expectUnavailable(answer: Answer) {
  expect(answer).toMatchObject({
    status: 503,
    retryAfter: expect.stringMatching(/^\d+$/),
    contentType: 'application/vnd.api+json',
    requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
  });
  expect(answer.body.errors).toEqual([expect.objectContaining({ status: '503', title: 'service unavailable' })]);
  expect(answer.ms).toBeLessThan(FAULT_ANSWER_MS);
}

/** Polls until the store answers through the stack again; the time it took. */
async function recovery(): Promise<number> {
  const started = performance.now();
  for (;;) {
    if ((await send('list keys')).status === 200) return Math.round(performance.now() - started);
    if (performance.now() - started > 60_000) throw new Error('the stack did not recover within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const summary = (title: string, answers: Answer[]) => {
  const lines = Object.keys(requests).map((kind) => {
    const mine = answers.filter((a) => a.kind === kind);
    const statuses = [...new Set(mine.map((a) => a.status))].join('/');
    return `  ${kind}: ${mine.length} answers (${statuses}), ${Math.min(...mine.map((a) => a.ms))}–${Math.max(...mine.map((a) => a.ms))} ms`;
  });
  for (const odd of answers.filter((a) => ![200, 201, 503].includes(a.status)))
    lines.push(`  unexpected: ${odd.kind} ${odd.status} ${JSON.stringify(odd.body)}`);
  process.stderr.write(`${title}\n${lines.join('\n')}\n`);
};

describe('a store that faults under load', () => {
  it("answers every request during a stall (SIGSTOP) with 503 and Retry-After, says when a write's outcome is unknown, and recovers on SIGCONT", async () => {
    expect((await send('list keys')).status).toBe(200); // warm: authorizer cached, functions started
    const traffic = load(5);
    await new Promise((resolve) => setTimeout(resolve, 500));
    process.kill(store.pid, 'SIGSTOP');
    const stalledAt = performance.now();
    const firstOfFault = traffic.answers.length;
    // A token the authorizer has not cached: it must read the store too.
    const authorizer = await send('list keys', freshTokens[0]);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 8_000 - (performance.now() - stalledAt))));
    process.kill(store.pid, 'SIGCONT');
    const resumedAt = performance.now();
    await traffic.stop();
    const recovered = await recovery();

    // Requests sent while the store was stalled (answered after at least one of its 503s began).
    const during = traffic.answers.slice(firstOfFault).filter((a) => a.status !== 200 && a.status !== 201);
    summary(
      `stall: ${Math.round(resumedAt - stalledAt)} ms stalled; authorizer ${authorizer.status} in ${authorizer.ms} ms; recovered ${recovered} ms after SIGCONT`,
      traffic.answers.slice(firstOfFault),
    );
    expectUnavailable(authorizer);
    expect(during.length).toBeGreaterThan(0);
    for (const answer of during) expectUnavailable(answer);
    // A write answered 503 without the outcome-unknown detail never happened: it failed before its
    // commit was sent (on a read, or on its receipt's claim, which commits nothing: tried twice,
    // unanswered both times); one whose commit had been sent says its outcome is unknown.
    const writes = during.filter((a) => a.written !== undefined);
    const unknown = writes.filter((a) => UNKNOWN_OUTCOME.test(a.body.errors[0].detail ?? ''));
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // what the stalled store had received, committed
    const stored = await everythingWritten();
    for (const failed of writes.filter((a) => !unknown.includes(a)))
      expect([failed.kind, stored.has(failed.written!)]).toEqual([failed.kind, false]);
    for (const read of during.filter((a) => a.written === undefined))
      expect(read.body.errors[0].detail).toBeUndefined();
    process.stderr.write(
      `stall: ${unknown.length} writes answered "outcome unknown", ${unknown.filter((a) => stored.has(a.written!)).length} of them committed once the store resumed\n`,
    );
  }, 120_000);

  it('answers every request while the store is killed with 503 and Retry-After, and recovers when it is started again', async () => {
    expect((await send('list keys')).status).toBe(200);
    const traffic = load(4);
    await new Promise((resolve) => setTimeout(resolve, 500));
    process.kill(store.pid, 'SIGKILL');
    const killedAt = performance.now();
    const firstOfFault = traffic.answers.length;
    const authorizer = await send('list keys', freshTokens[1]);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 5_000 - (performance.now() - killedAt))));
    await traffic.stop();
    const killed = traffic.answers.slice(firstOfFault);
    store = own.store = await startDynamoDbLocal({ dataDir, port: store.port });
    const recovered = await recovery();

    summary(
      `kill: authorizer ${authorizer.status} in ${authorizer.ms} ms; recovered ${recovered} ms after DynamoDB Local answered again`,
      killed,
    );
    expectUnavailable(authorizer);
    const failed = killed.filter((a) => a.status !== 200 && a.status !== 201);
    expect(failed.length).toBeGreaterThan(0);
    for (const answer of failed) expectUnavailable(answer);
    // A write answered as failed for certain (no outcome-unknown detail) never happened.
    const stored = await everythingWritten();
    for (const write of failed.filter(
      (a) => a.written !== undefined && !UNKNOWN_OUTCOME.test(a.body.errors[0].detail ?? ''),
    )) {
      expect([write.kind, stored.has(write.written!)]).toEqual([write.kind, false]);
    }
    // The token, the run and what was written before the kill survived it: the stack serves them.
    expect((await send('list comments')).status).toBe(200);
    expect((await send('create comment')).status).toBe(201);
  }, 120_000);
});
