import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startLocalStack, type LocalStack } from '#infra/local/local-stack';
import { newId } from '#shared/ids';
import { createToken } from '#shared/store/tokens';
import { registerNewRun } from '#shared/store/runs';
import { routes } from '#shared/routes';
import { withoutTableGrants } from '../support/assembly-variant';

/**
 * The line that reports an unexpected failure names its own request: the route, the token id and
 * the request id its client got in X-Request-Id, and the function that failed, even when requests
 * to several functions fail at the same moment. Failures are real: a function whose role lacks its
 * table grant (the local stack, its template's grants taken away), and a table that is gone (the
 * in-process dev gateway).
 */
const ORG = 'logged-org';
/** Requests to three functions, each with its own token. */
const failing = [
  { function: 'reserved-tag-keys/list', path: () => `/api/v2/organizations/${ORG}/reserved-tag-keys` },
  { function: 'comments/list', path: () => `/api/v2/runs/${runId}/comments` },
  { function: 'comments/show', path: () => `/api/v2/comments/${newId('wsc')}` },
].map((target) => {
  const route = routes.find((r) => r.function === target.function)!;
  return { ...target, route: `${route.method} ${route.path}` };
});
const ROUNDS = 4;

let runId: string;
const tokens: Array<{ tokenId: string; token: string }> = [];
beforeAll(async () => {
  runId = (await registerNewRun(ORG)).runId;
  for (let i = 0; i < failing.length * ROUNDS; i++) {
    const { record, token } = await createToken({ subject: `user-${i}`, grants: { [ORG]: 'reader' } });
    tokens.push({ tokenId: record.tokenId, token });
  }
});

/** Every request at once: each kind of request ROUNDS times, each with its own token. */
async function sendConcurrently(baseUrl: string) {
  return Promise.all(
    tokens.map(async ({ tokenId, token }, i) => {
      const target = failing[i % failing.length]!;
      const response = await fetch(`${baseUrl}${target.path()}`, { headers: { Authorization: `Bearer ${token}` } });
      await response.arrayBuffer();
      return { ...target, tokenId, status: response.status, requestId: response.headers.get('x-request-id') };
    }),
  );
}

type Entry = Record<string, unknown>;

function expectOwnErrorLines(answers: Awaited<ReturnType<typeof sendConcurrently>>, entries: Entry[]) {
  const errors = entries.filter((e) => e.level === 'ERROR' && e.message === 'unhandled error');
  expect(answers.map((a) => a.status)).toEqual(answers.map(() => 500));
  for (const answer of answers) {
    const own = errors.filter((e) => e.request_id === answer.requestId);
    expect(own).toHaveLength(1);
    // Lambda's function name: the handler file in the dev gateway, the deployed name (from the construct id) in the stack.
    const functionName = new RegExp(
      `^${answer.function}$|${answer.function
        .split(/[/-]/)
        .map((w) => w[0]!.toUpperCase() + w.slice(1))
        .join('')}Function`,
    );
    expect(own[0]).toMatchObject({
      route: answer.route,
      tokenId: answer.tokenId,
      function_name: expect.stringMatching(functionName),
    });
  }
}

describe('through the local stack (each function in its own process)', () => {
  let local: LocalStack;
  const lines: string[] = [];
  let assembly: Awaited<ReturnType<typeof withoutTableGrants>> | undefined;
  beforeAll(async () => {
    // The three functions without their table grants: every store call they make is denied, an unexpected failure.
    assembly = await withoutTableGrants(
      'error-logs',
      failing.map((f) => f.function),
    );
    local = await startLocalStack({
      assembly,
      dynamoDbEndpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB!,
      tableName: process.env.TABLE_NAME!,
      log: (_, line) => {
        lines.push(line);
      },
    });
  }, 180_000);
  afterAll(async () => {
    await local?.close();
    assembly?.remove();
  });

  it('logs each unexpected failure with its own route, token id and request id', async () => {
    // Each token through the authorizer once first (its answer is then cached): on this small machine a
    // dozen authorizer cold starts at once can outlast the store client's timeout and answer 503.
    for (const { token } of tokens)
      await (
        await fetch(`${local.url}/api/v2/organizations/${ORG}/reserved-tag-keys`, {
          headers: { Authorization: `Bearer ${token}` },
        })
      ).arrayBuffer();
    const answers = await sendConcurrently(local.url);
    await new Promise((resolve) => setTimeout(resolve, 500)); // the last lines on their way from the child processes
    expectOwnErrorLines(
      answers,
      lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Entry),
    );
  }, 60_000);
});

describe('through the dev gateway (every function in this one process)', () => {
  const entries: Entry[] = [];
  let gateway: { url: string; close(): Promise<void> };
  const table = process.env.TABLE_NAME!;
  const consoleError = console.error;
  beforeAll(async () => {
    // Before the handlers' logger is built: its level, and POWERTOOLS_DEV, which makes it write
    // through the global console (its JSON indented), where this test reads the error lines.
    process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
    process.env.POWERTOOLS_DEV = 'true';
    console.error = (line: string) => {
      entries.push(JSON.parse(line) as Entry);
    };
    const { startInProcessStack } = await import('#infra/local/local-stack');
    gateway = await startInProcessStack({ tableName: table });
  });
  afterAll(async () => {
    console.error = consoleError;
    process.env.TABLE_NAME = table;
    process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
    delete process.env.POWERTOOLS_DEV;
    await gateway?.close();
  });

  it('logs each unexpected failure with its own function, route, token id and request id', async () => {
    for (const { token } of tokens) {
      const response = await fetch(`${gateway.url}/api/v2/organizations/${ORG}/reserved-tag-keys`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(response.status).toBe(200); // the authorizer's answer is cached for each token
    }
    process.env.TABLE_NAME = `gone-${newId('run').slice(4)}`; // every function's next store call fails
    const answers = await sendConcurrently(gateway.url);
    expectOwnErrorLines(answers, entries);
  }, 60_000);
});
