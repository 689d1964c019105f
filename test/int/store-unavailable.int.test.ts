import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { promisify } from 'node:util';
import { freePort } from '#infra/local/ports';
import type { Principal } from '#shared/auth/principal';
import type { Invocation, InvocationOutcome } from '../support/invoke-in-process';
import { TSX } from '../support/processes';

/**
 * A store that fails or stalls ends as the contract's 503 (or, in the authorizer, a thrown error
 * that API Gateway answers as AUTHORIZER_FAILURE), within a bound far below the function's 15 s
 * timeout. Each case runs the real handler in a fresh process whose store client is pointed at the
 * broken store, exactly as a Lambda instance would build it.
 */
const BOUND_MS = 5_000;
const principal: Principal = { subject: 'user-outage', tokenId: 'at-outageoutageout', grants: { acme: 'owner' } };
const unavailable = { errors: [{ status: '503', title: 'service unavailable' }] };

let stalled: Server;
const held: Socket[] = [];
let stalledEndpoint: string;
let closedEndpoint: string;

beforeAll(async () => {
  // Accepts every connection and never answers a byte: a store that hangs.
  stalled = createServer((socket) => {
    held.push(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
  stalledEndpoint = `http://127.0.0.1:${(stalled.address() as { port: number }).port}`;
  closedEndpoint = `http://127.0.0.1:${await freePort()}`; // nothing listens: connections refused
});
afterAll(async () => {
  for (const socket of held) socket.destroy();
  await new Promise((resolve) => stalled.close(resolve));
});

/** The outcome, and the EMF metric names the invocation emitted (its stdout). */
async function invokeAgainst(
  endpoint: string,
  request: Invocation,
): Promise<InvocationOutcome & { metrics: string[] }> {
  const { stdout } = await promisify(execFile)(TSX, ['test/support/invoke-in-process.ts', JSON.stringify(request)], {
    env: {
      ...process.env,
      AWS_ENDPOINT_URL_DYNAMODB: endpoint,
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'false',
    },
    timeout: 30_000,
  });
  const lines = stdout.trim().split('\n');
  const metrics = lines
    .filter((line) => line.startsWith('{"_aws"'))
    .flatMap((line) =>
      (JSON.parse(line)._aws.CloudWatchMetrics as Array<{ Metrics: Array<{ Name: string }> }>).flatMap((m) =>
        m.Metrics.map((metric) => metric.Name),
      ),
    );
  return { ...(JSON.parse(lines.at(-1)!) as InvocationOutcome), metrics };
}

const listKeys: Invocation = {
  function: 'reserved-tag-keys/list',
  path: '/organizations/acme/reserved-tag-keys',
  principal,
};

describe('a store that cannot answer', () => {
  it.each([
    ['refuses connections', () => closedEndpoint],
    ['accepts connections and never answers', () => stalledEndpoint],
  ])(
    'answers 503 when the store %s, within the bound',
    async (_, endpoint) => {
      const outcome = await invokeAgainst(endpoint(), listKeys);
      expect(outcome).toMatchObject({ status: 503, body: unavailable, headers: { 'Retry-After': '1' } });
      expect(outcome.ms).toBeLessThan(BOUND_MS);
      expect(outcome.metrics).toContain('StoreUnavailable');
    },
    40_000,
  );

  it.each([
    ['refuses connections', () => closedEndpoint],
    ['accepts connections and never answers', () => stalledEndpoint],
  ])(
    'makes the authorizer fail (not deny) when the store %s, within the bound',
    async (_, endpoint) => {
      const outcome = await invokeAgainst(endpoint(), {
        function: 'authorizer',
        authorization: `Bearer tfcapi_${'A'.repeat(16)}${'b'.repeat(40)}`,
      });
      expect(outcome.threw).toBeDefined(); // API Gateway: AUTHORIZER_FAILURE, which the stack answers 503
      expect(outcome.ms).toBeLessThan(BOUND_MS);
      expect(outcome.metrics).toContain('StoreUnavailable'); // classified as the store's failure, not a bug
      expect(outcome.metrics).not.toContain('AuthorizationOutcome'); // and not counted as a refusal
    },
    40_000,
  );

  it("answers with the store when it is there (the same path, the run's DynamoDB Local)", async () => {
    const outcome = await invokeAgainst(process.env.AWS_ENDPOINT_URL_DYNAMODB!, listKeys);
    expect(outcome.status).toBe(200);
    expect(outcome.metrics).not.toContain('StoreUnavailable');
  }, 40_000);
});
