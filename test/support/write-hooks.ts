import { writeHooks } from '#shared/store/writes';

/**
 * Runs `work` with these store write hooks (shared/store/writes.ts: a hook that throws stops the
 * writer there), and removes them afterwards whatever `work` did.
 */
export async function withWriteHooks<T>(hooks: typeof writeHooks, work: () => Promise<T>): Promise<T> {
  Object.assign(writeHooks, hooks);
  try {
    return await work();
  } finally {
    writeHooks.beforeWrite = undefined;
    writeHooks.afterWritten = undefined;
  }
}
