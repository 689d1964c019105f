import { documentClient } from '#shared/store/client';

/** A DynamoDB request as it leaves the document client: low-level command name, marshalled input. */
export interface DynamoDbCall {
  command: string;
  input: unknown;
  /** DynamoDB refused it (a condition failed, a transaction was cancelled): a replay may be refused too. */
  refused?: boolean;
}

/**
 * Records every DynamoDB request the process sends (the local gateway and the bench run the
 * handlers in-process), so tests and the bench can state what one request costs.
 */
const sent: DynamoDbCall[] = [];
let installed = false;

function install(): void {
  if (installed) return;
  documentClient.middlewareStack.add(
    (next, context) => async (args) => {
      const call: DynamoDbCall = { command: context.commandName ?? 'unknown', input: args.input }; // no copy: the SDK does not change it later
      sent.push(call);
      try {
        return await next(args);
      } catch (error) {
        call.refused = true;
        throw error;
      }
    },
    { step: 'build', name: 'dynamoDbCallRecorder' }, // after the document client has marshalled
  );
  installed = true;
}

/** The calls `fn` makes, with its result. */
export async function recordDynamoDbCalls<T>(fn: () => Promise<T>): Promise<{ result: T; calls: DynamoDbCall[] }> {
  install();
  const start = sent.length;
  const result = await fn();
  return { result, calls: sent.splice(start) };
}

/** The command names of the calls `fn` makes, with its result. */
export async function roundTrips<T>(fn: () => Promise<T>): Promise<{ result: T; commands: string[] }> {
  const { result, calls } = await recordDynamoDbCalls(fn);
  return { result, commands: calls.map((c) => c.command) };
}
