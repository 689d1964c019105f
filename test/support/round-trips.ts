import { documentClient } from '#shared/store/client';

/**
 * Records every DynamoDB command the process sends (the local gateway runs the handlers in-process),
 * so a test can state how many round trips one request costs.
 */
const sent: string[] = [];
let installed = false;

export function recordRoundTrips(): { during<T>(fn: () => Promise<T>): Promise<{ result: T; commands: string[] }> } {
  if (!installed) {
    documentClient.middlewareStack.add(
      (next, context) => async (args) => {
        sent.push(context.commandName ?? 'unknown');
        return next(args);
      },
      { step: 'initialize', name: 'roundTripRecorder' },
    );
    installed = true;
  }
  return {
    async during(fn) {
      const start = sent.length;
      const result = await fn();
      return { result, commands: sent.slice(start) };
    },
  };
}
