// The bench's Lambda-like sandbox (test/bench/tracers-warm.ts): a child process started with a
// function's Lambda environment that imports its bundle once (the init), then runs the batches of
// invocations it is sent, one at a time as Lambda does, setting `_X_AMZN_TRACE_ID` before each as
// Lambda's Node.js runtime does. For each invocation it reports the elapsed time and the CPU time of
// the handler, plus one turn of the event loop after it returns (a datagram the handler handed to
// a socket leaves then, before Lambda would freeze the sandbox). Plain JavaScript: it adds nothing
// to what the bundle loads.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { lambdaContext } from './lambda-context.mjs';

const { handler } = await import(pathToFileURL(join(process.env.LAMBDA_TASK_ROOT, 'index.mjs')).href);
const turn = () => new Promise((resolve) => setImmediate(resolve));

process.on('message', async ({ events, traceHeaders }) => {
  const timings = [];
  const statuses = [];
  for (let i = 0; i < events.length; i++) {
    process.env._X_AMZN_TRACE_ID = traceHeaders[i];
    const context = lambdaContext(`bench-${process.pid}-${i}`);
    const cpu = process.cpuUsage();
    const started = performance.now();
    const result = await handler(events[i], context);
    await turn();
    const elapsed = performance.now() - started;
    const used = process.cpuUsage(cpu);
    timings.push([elapsed, (used.user + used.system) / 1000]);
    statuses.push(result?.statusCode ?? 0);
  }
  process.send({ timings, statuses });
});
process.send({ ready: true });
process.on('disconnect', () => process.exit(0));
