// The bench's warm sandbox (test/bench/warm.ts): a child process started with a function's Lambda
// environment that imports its bundle once, as deployed, then runs the invocations it is sent, one
// at a time as Lambda does. For each it reports the handler's elapsed time, its answer, and the
// DynamoDB requests it sent (operation, body, whether DynamoDB refused it), so that the bench can
// count them and replay them through the bare SDK, bundled alike (bare-replay.ts) and imported
// beside the function when BENCH_BARE_REPLAY names its bundle: the pair shares the process, its
// caches and its idle gaps. Plain JavaScript: it adds nothing to what the bundle loads.
import { ClientRequest } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { lambdaContext } from './lambda-context.mjs';

// Every request passes its body to end() (@smithy/node-http-handler). Noting it costs the same in
// the function's sandbox and in the bare SDK's: the operation and the body as sent, decoded later.
let sent = [];
const end = ClientRequest.prototype.end;
ClientRequest.prototype.end = function (body, ...rest) {
  const request = { target: this.getHeader('x-amz-target'), body, status: 0 };
  sent.push(request);
  this.once('response', (response) => {
    request.status = response.statusCode;
  });
  return end.call(this, body, ...rest);
};

const { handler } = await import(pathToFileURL(join(process.env.LAMBDA_TASK_ROOT, 'index.mjs')).href);
const bare = process.env.BENCH_BARE_REPLAY
  ? await import(pathToFileURL(process.env.BENCH_BARE_REPLAY).href)
  : undefined;
let invocation = 0;

process.on('message', async ({ event, replay }) => {
  if (replay) {
    const started = performance.now();
    const result = await bare.handler(replay);
    process.send({ ms: performance.now() - started, statusCode: result.statusCode, body: result.body, calls: [] });
    return;
  }
  const context = lambdaContext(`bench-${process.pid}-${invocation++}`);
  sent = [];
  const started = performance.now();
  const result = await handler(event, context);
  const ms = performance.now() - started;
  const calls = sent.map(({ target, body, status }) => {
    // The SDK gives each transaction a new idempotency token; a replay's SDK gives it its own.
    const { ClientRequestToken, ...input } = JSON.parse(Buffer.from(body ?? '').toString('utf8') || '{}');
    return { command: `${String(target).split('.').pop()}Command`, input, refused: status !== 200 };
  });
  process.send({ ms, statusCode: result?.statusCode ?? 0, body: result?.body ?? '', calls });
});
process.send({ ready: true });
process.on('disconnect', () => process.exit(0));
