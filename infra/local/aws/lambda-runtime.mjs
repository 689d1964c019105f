// The runtime inside one local Lambda instance (a child process of the emulator, started with the
// function's own environment). Like Lambda's Node.js runtime: it loads `_HANDLER` from
// LAMBDA_TASK_ROOT once (the init phase), then runs one invocation at a time as the emulator
// sends them. Plain JavaScript, so it adds nothing to what the bundle itself loads.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const taskRoot = process.env.LAMBDA_TASK_ROOT;
const [moduleName, exportName] = splitHandler(process.env._HANDLER ?? '');

function splitHandler(handler) {
  const dot = handler.lastIndexOf('.');
  return dot < 0 ? [handler, 'handler'] : [handler.slice(0, dot), handler.slice(dot + 1)];
}

// https://docs.aws.amazon.com/lambda/latest/dg/nodejs-handler.html: .mjs, .js or .cjs, in that order of ESM preference.
async function loadHandler() {
  const file = ['.mjs', '.js', '.cjs'].map((extension) => join(taskRoot, `${moduleName}${extension}`)).find(existsSync);
  if (!file)
    throw Object.assign(new Error(`Cannot find module '${moduleName}'`), { name: 'Runtime.ImportModuleError' });
  const module = await import(pathToFileURL(file).href);
  const handler = module[exportName];
  if (typeof handler !== 'function') {
    throw Object.assign(new Error(`${moduleName}.${exportName} is undefined or not exported`), {
      name: 'Runtime.HandlerNotFound',
    });
  }
  return handler;
}

const init = loadHandler();
init.catch(() => undefined); // reported on the first invocation, as Lambda reports init errors

process.on('message', async ({ id, event, context }) => {
  process.env._X_AMZN_TRACE_ID = context.traceId;
  const lambdaContext = {
    callbackWaitsForEmptyEventLoop: true,
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: process.env.AWS_LAMBDA_FUNCTION_VERSION,
    invokedFunctionArn: context.invokedFunctionArn,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    awsRequestId: context.awsRequestId,
    logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME,
    logStreamName: process.env.AWS_LAMBDA_LOG_STREAM_NAME,
    getRemainingTimeInMillis: () => Math.max(0, context.deadline - Date.now()),
    done() {},
    fail() {},
    succeed() {},
  };
  try {
    const handler = await init;
    const result = await handler(event, lambdaContext);
    process.send({ id, ok: true, result: result ?? null });
  } catch (error) {
    const failure = { errorType: error?.name ?? 'Error', errorMessage: error?.message ?? String(error) };
    console.error(
      `${new Date().toISOString()}\t${context.awsRequestId}\tERROR\tInvoke Error\t${JSON.stringify(failure)}`,
    );
    process.send({ id, ok: false, error: failure });
  }
});
// The Init phase ends when the handler module has loaded (or failed to): only then is the instance
// ready, and only then does the emulator start the invocation's timeout.
// A failed Init is said too: Lambda does not keep such an instance, it runs Init again on the next invocation.
init.then(
  () => process.send({ ready: true }),
  () => process.send({ ready: true, initFailed: true }),
);
// The emulator is gone (however it died): an instance never outlives it.
process.on('disconnect', () => process.exit(0));
