// The context Lambda's Node.js runtime hands each invocation, as the bench's sandboxes
// (lambda-like-runtime.mjs, warm-runtime.mjs) hand it: the function's 10 s timeout runs from now.
// Plain JavaScript: it adds nothing to what a bundle loads.
const TIMEOUT_MS = 10_000;

export function lambdaContext(awsRequestId) {
  const deadline = Date.now() + TIMEOUT_MS;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${process.env.AWS_LAMBDA_FUNCTION_NAME}`,
    memoryLimitInMB: '1024',
    awsRequestId,
    logGroupName: 'bench',
    logStreamName: 'bench',
    getRemainingTimeInMillis: () => deadline - Date.now(),
    done() {},
    fail() {},
    succeed() {},
  };
}
