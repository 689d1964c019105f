import { setTimeout as sleep } from 'node:timers/promises';
import { STORE_TIMEOUTS } from './client';
import { currentDeadline } from './deadline';

/**
 * How long a change's own writer is left to write out its derived items before a writer that
 * needs them out writes them itself: it is at it, and writers waiting on one run or organization
 * would otherwise all write the same items at once. After it, its writer is taken for dead.
 */
export const WRITE_OUT_GRACE_MS = 2_000;
const WRITE_OUT_POLL_MS = 15;

/**
 * Looks again every WRITE_OUT_POLL_MS whether a change committed at `at` (epoch ms) is written
 * out, while its writer may still be at it: true once it is, false once its writer had its time
 * (write it out yourself), 'wait' when this request's deadline comes first.
 */
export async function whileItsWriterMayBeAtIt(at: number, written: () => Promise<boolean>): Promise<boolean | 'wait'> {
  while (Date.now() - at < WRITE_OUT_GRACE_MS) {
    if (Date.now() + WRITE_OUT_POLL_MS + STORE_TIMEOUTS.requestTimeoutMs * 2 > currentDeadline()) return 'wait';
    await sleep(WRITE_OUT_POLL_MS);
    if (await written()) return true;
  }
  return false;
}
