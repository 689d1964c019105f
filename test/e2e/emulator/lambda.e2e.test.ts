import { describe, expect, it } from '@jest/globals';
import { getPriority } from 'node:os';
import { serve } from './fixture-stacks';
import type { FixtureApi } from '../../support/fixture-assembly';
import { expectWith } from '../../support/expect-with';

/**
 * Lambda (infra/local/aws/lambda.ts): instances, init and invocation, a failed init, versions and
 * aliases. Each case runs on a hand-written template that states exactly the configuration it
 * exercises (fixture-stacks.ts).
 */
describe('Lambda: instances', () => {
  it('serves one invocation per instance: concurrent requests start instances with their own module state and environment', async () => {
    const stack = await serve({
      functions: {
        Counter: {
          code: `let count = 0; export const handler = async () => { count += 1; await new Promise((r) => setTimeout(r, 300)); return { statusCode: 200, body: JSON.stringify({ pid: process.pid, count, table: process.env.TABLE_NAME, own: process.env.OWN, path: process.env.NODE_OPTIONS ?? null }) }; };`,
          environment: { OWN: 'counter' },
        },
      },
      methods: [{ method: 'GET', path: '/count', function: 'Counter' }],
    });
    const concurrent = await Promise.all(
      Array.from({ length: 4 }, async () => (await fetch(`${stack.url}/count`)).json() as Promise<any>),
    );
    expect(new Set(concurrent.map((r) => r.pid)).size).toBe(4);
    expect(concurrent.map((r) => r.count)).toEqual([1, 1, 1, 1]);
    expect(concurrent[0]).toMatchObject({ table: process.env.TABLE_NAME, own: 'counter', path: null });
    const next = (await (await fetch(`${stack.url}/count`)).json()) as any;
    expect(concurrent.map((r) => r.pid)).toContain(next.pid); // a warm instance is reused
    expect(next.count).toBe(2);
    expect(stack.lambda.started.get('Counter')).toBe(4);
  });
});

describe('Lambda: CPU', () => {
  const niceOf = async (env: string | undefined) => {
    const before = process.env.LOCAL_LAMBDA_NICENESS;
    if (env === undefined) delete process.env.LOCAL_LAMBDA_NICENESS;
    else process.env.LOCAL_LAMBDA_NICENESS = env;
    try {
      const stack = await serve({
        functions: {
          Nice: {
            // Every thread's niceness (Linux's is per thread): V8's and libuv's threads do work too.
            code: `import { readdirSync, readFileSync } from 'node:fs'; const nice = (tid) => { const stat = readFileSync('/proc/self/task/' + tid + '/stat', 'utf8'); return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]); }; export const handler = async () => ({ statusCode: 200, body: JSON.stringify([...new Set(readdirSync('/proc/self/task').map(nice))]) });`,
          },
        },
        methods: [{ method: 'GET', path: '/nice', function: 'Nice' }],
      });
      return (await (await fetch(`${stack.url}/nice`)).json()) as number[];
    } finally {
      if (before === undefined) delete process.env.LOCAL_LAMBDA_NICENESS;
      else process.env.LOCAL_LAMBDA_NICENESS = before;
    }
  };

  // nice(1) adds to the niceness of the process that starts it (this one's, 0 unless run niced).
  const above = (n: number) => [Math.min(19, getPriority() + n)];

  it('runs instances niced (10), every thread, so DynamoDB Local and the emulator answer first, as AWS services do', async () => {
    expect(await niceOf(undefined)).toEqual(above(10));
  });

  it('takes the niceness from LOCAL_LAMBDA_NICENESS: 0 shares the CPU evenly', async () => {
    expect(await niceOf('0')).toEqual(above(0));
    expect(await niceOf('19')).toEqual(above(19));
  });
});

describe('Lambda: init and invocation', () => {
  it('gives a function’s init its own time: an init longer than the timeout does not time the first invocation out', async () => {
    const stack = await serve({
      functions: {
        SlowInit: {
          code: `await new Promise((r) => setTimeout(r, 1500)); export const handler = async () => ({ statusCode: 200, body: 'ready' });`,
          timeout: 1,
        },
      },
      methods: [{ method: 'GET', path: '/slow-init', function: 'SlowInit' }],
    });
    const response = await fetch(`${stack.url}/slow-init`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ready');
  });

  it('stops an init past its 10 s and retries it with the invocation, within the function’s timeout', async () => {
    const stack = await serve({
      functions: {
        StuckInit: {
          code: `await new Promise((r) => setTimeout(r, 10_500)); export const handler = async () => ({ statusCode: 200, body: 'ready' });`,
          timeout: 1,
        },
      },
      methods: [{ method: 'GET', path: '/stuck', function: 'StuckInit' }],
    });
    const started = Date.now();
    const response = await fetch(`${stack.url}/stuck`);
    // 10 s of init, then the retried init runs out the 1 s timeout: a function error.
    expect(response.status).toBe(502);
    expect(Date.now() - started).toBeGreaterThanOrEqual(11_000);
    expect(stack.lambda.started.get('StuckInit')).toBe(2);
  }, 30_000);
});

describe('Lambda: an init that failed', () => {
  it('is run again on the next invocation, in a fresh instance: an init that throws once fails one request only', async () => {
    // Throws on its first init only (a marker file beside the bundle), as a store or secret briefly unreachable at start would.
    const flaky = `import { existsSync, writeFileSync } from 'node:fs';
const marker = new URL('./init-failed-once', import.meta.url);
if (!existsSync(marker)) { writeFileSync(marker, ''); throw new Error('init failed once'); }
export const handler = async () => ({ statusCode: 200, body: String(process.pid) });`;
    const stack = await serve({
      functions: { Flaky: { code: flaky } },
      methods: [{ method: 'GET', path: '/flaky', function: 'Flaky' }],
    });
    const failed = await fetch(`${stack.url}/flaky`);
    expect(failed.status).toBe(502); // the init's error is the invocation's: INTEGRATION_FAILURE when not customized
    const after = await fetch(`${stack.url}/flaky`);
    expectWith(after.status, await after.text()).toBe(200);
    expect(stack.lambda.started.get('Flaky')).toBe(2);
  });
});

describe('Lambda: versions and aliases', () => {
  const versioned = `export const handler = async (event, context) => ({ statusCode: 200, body: JSON.stringify({
    pid: process.pid, version: process.env.AWS_LAMBDA_FUNCTION_VERSION, functionVersion: context.functionVersion, arn: context.invokedFunctionArn,
  }) });`;
  const api = (alias: Record<string, unknown> = {}): FixtureApi => ({
    functions: { Echo: { code: versioned, alias: 'live' } },
    methods: [
      { method: 'GET', path: '/live', function: 'Echo', throughAlias: true },
      { method: 'GET', path: '/latest', function: 'Echo' },
    ],
    resources: alias,
  });

  it('runs what an alias points at: its version, in instances of its own, apart from $LATEST', async () => {
    const stack = await serve(api());
    const live = (await (await fetch(`${stack.url}/live`)).json()) as any;
    expect(live).toMatchObject({
      version: '1',
      functionVersion: '1',
      arn: 'arn:aws:lambda:us-east-1:000000000000:function:Echo:live',
    });
    const latest = (await (await fetch(`${stack.url}/latest`)).json()) as any;
    expect(latest).toMatchObject({
      version: '$LATEST',
      functionVersion: '$LATEST',
      arn: 'arn:aws:lambda:us-east-1:000000000000:function:Echo',
    });
    expect(latest.pid).not.toBe(live.pid);
    expect(stack.lambda.invocations.map(({ qualifier, version }) => `${qualifier}→${version}`)).toEqual([
      'live→1',
      '$LATEST→$LATEST',
    ]);
  });

  it('refuses to start on an alias that splits traffic between versions (what CodeDeploy sets during a shift)', async () => {
    const split = api();
    const stack = serve({
      ...split,
      resources: {
        Echo2: { Type: 'AWS::Lambda::Version', Properties: { FunctionName: { Ref: 'Echo' } } },
        EchoAlias: {
          Type: 'AWS::Lambda::Alias',
          Properties: {
            FunctionName: { Ref: 'Echo' },
            FunctionVersion: '1',
            Name: 'live',
            RoutingConfig: { AdditionalVersionWeights: [{ FunctionVersion: '2', FunctionWeight: 0.1 }] },
          },
        },
      },
    });
    await expect(stack).rejects.toThrow(/^Lambda alias EchoAlias: RoutingConfig not emulated by the local stack$/);
  });
});
