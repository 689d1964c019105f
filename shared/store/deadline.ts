import { AsyncLocalStorage } from 'node:async_hooks';
import { FUNCTION_TIMEOUT_SECONDS } from '../config';

/**
 * The time by which a request's store calls must have ended (epoch ms), set by the handler from
 * the function's remaining time. Store calls are aborted there (client.ts) and hot-spot waits end
 * before it (contention.ts), so a request answers before the function's timeout whatever the store does.
 */
const deadlines = new AsyncLocalStorage<number>();

/** Without a handler's deadline (operator CLI, tests calling the store): the API function's own budget. */
export const DEFAULT_BUDGET_MS = FUNCTION_TIMEOUT_SECONDS * 1000 - 500;

/** Runs `work` with its store calls bounded by `deadline` (epoch ms). */
export const withStoreDeadline = <T>(deadline: number, work: () => Promise<T>): Promise<T> =>
  deadlines.run(deadline, work);

/** This request's deadline, if a handler set one. */
export const storeDeadline = (): number | undefined => deadlines.getStore();

/** This request's deadline, or the default budget from now. */
export const currentDeadline = (): number => deadlines.getStore() ?? Date.now() + DEFAULT_BUDGET_MS;
