// Runs one function once in this fresh process, so its store client is built from this process's
// environment (e.g. AWS_ENDPOINT_URL_DYNAMODB pointed at a store that fails), then prints one JSON
// line: what it answered (or threw) and how long the invocation took.
// Usage: tsx test/support/invoke-in-process.ts '{"function":"reserved-tag-keys/list","path":"/organizations/acme/reserved-tag-keys","principal":{…}}'
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import type { Principal } from '#shared/auth/principal';
import { AUTHORIZER_FUNCTION } from '#shared/routes';
import { lambdaContext, routeInvocation } from './lambda-events';

export interface Invocation {
  function: string;
  /** Route functions: the request path under /api/v2 and the principal the authorizer passed. */
  path?: string;
  principal?: Principal;
  /** The authorizer: the Authorization header it is given. */
  authorization?: string;
}

export interface InvocationOutcome {
  status?: number;
  headers?: Record<string, unknown>;
  body?: unknown;
  /** The name of what the handler threw (the authorizer throws on store failures). */
  threw?: string;
  ms: number;
}

async function invoke(request: Invocation): Promise<InvocationOutcome> {
  let call: () => Promise<{ statusCode: number; headers?: Record<string, unknown>; body: string }>;
  if (request.function === AUTHORIZER_FUNCTION) {
    const { handler } = await import('#functions/authorizer');
    const event = {
      type: 'REQUEST',
      methodArn: 'arn:aws:execute-api:us-east-1:1:api/local/GET/x',
      headers: { Authorization: request.authorization },
    };
    call = async () => {
      await handler(event as unknown as APIGatewayRequestAuthorizerEvent, lambdaContext(AUTHORIZER_FUNCTION));
      return { statusCode: 200, body: '' };
    };
  } else {
    const { function: name, path, principal } = request;
    const { handler, event } = await routeInvocation({ function: name, path: path!, principal: principal! });
    call = () => handler(event, lambdaContext(request.function));
  }
  const started = performance.now();
  try {
    const response = await call();
    return {
      status: response.statusCode,
      headers: response.headers,
      body: response.body ? JSON.parse(response.body) : undefined,
      ms: performance.now() - started,
    };
  } catch (error) {
    return { threw: (error as Error).name, ms: performance.now() - started };
  }
}

process.stdout.write(`\n${JSON.stringify(await invoke(JSON.parse(process.argv[2]!) as Invocation))}\n`);
process.exit(0); // a stalled socket must not keep this process alive
