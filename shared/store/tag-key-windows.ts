/**
 * Windows of creation time: how a page of reserved tag keys at any depth stays a bounded read. The
 * organization's head counts, per 100 ms window of creation time, how many live keys were created
 * in it (at most WINDOW_CAPACITY: a create in a full window waits for the next). A page after the
 * first skips whole windows by those counts and reads from the start of the window it begins in:
 * at most `limit + WINDOW_CAPACITY - 1` live keys (and the tombstones of recent deletes among them).
 */
export const WINDOW_MS = 100;
export const WINDOW_CAPACITY = 100;

export const windowOf = (createdAt: string) => Math.floor(Date.parse(createdAt) / WINDOW_MS);

/** The window the `offset`-th live key (from 0) was created in, and how many live keys of that window come before it. */
export function startOf(
  windows: ReadonlyMap<number, number>,
  offset: number,
): { window: number; skip: number } | undefined {
  let before = 0;
  for (const [window, count] of [...windows].sort(([a], [b]) => a - b)) {
    if (offset < before + count) return { window, skip: offset - before };
    before += count;
  }
  return undefined;
}
