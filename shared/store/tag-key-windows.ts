/**
 * Spans of creation time: how a page of reserved tag keys at any depth stays a bounded read. The
 * organization's head counts the live keys of each span: a span starts at a 100 ms window of
 * creation time and runs to the next span's start, holding at most WINDOW_CAPACITY keys. A page
 * after the first skips whole spans by those counts and reads from the start of the span it begins
 * in: at most `limit + WINDOW_CAPACITY - 1` live keys (and the tombstones of recent deletes among
 * them).
 *
 * A new key is counted in the newest span until that holds half the capacity; then a key of a
 * later window starts a span of its own. A new span starts only past every window a key was ever
 * counted in (`lastWindow`), so it never takes keys from the span before it, and the newest span
 * fills up only with more than half the capacity of creates in one window (the next create then
 * waits for the next window). Each commit merges older neighbouring spans that fit in one, so the
 * head holds about one span per 50 to 100 keys, however far apart the keys were created. (A head
 * written before spans holds one per window: each is a span, merged as the next commits go.)
 */
export const WINDOW_MS = 100;
export const WINDOW_CAPACITY = 100;
/** The newest span's count from which a key of a later window starts a new span. */
const SPAN_START_AT = WINDOW_CAPACITY / 2;
/** Merges a commit makes at most: a head from before spans shrinks over several commits, each a short write. */
const MERGES_PER_COMMIT = 20;

export const windowOf = (createdAt: string) => Math.floor(Date.parse(createdAt) / WINDOW_MS);

/** A head's spans: each span's first window and its count of live keys. */
export type Spans = ReadonlyMap<number, number>;

const sorted = (spans: Spans) => [...spans].sort(([a], [b]) => a - b);

/** The span that counts a key created in `window`: the last one starting at or before it. */
export function spanOf(spans: Spans, window: number): number | undefined {
  let found: number | undefined;
  for (const start of spans.keys()) if (start <= window && (found === undefined || start > found)) found = start;
  return found;
}

/**
 * Where a key created in `window` is counted: past `lastWindow`, the newest span unless it holds
 * SPAN_START_AT keys, else a new span from `window`; at or before it, its span while that has room
 * (a writer whose clock is behind), a new span before every other, or 'wait' (a full span: the
 * next window will do).
 */
export function placeOf(spans: Spans, lastWindow: number, window: number): number | 'wait' {
  const span = spanOf(spans, window);
  const count = span === undefined ? 0 : (spans.get(span) ?? 0);
  if (window > lastWindow) return span !== undefined && count < SPAN_START_AT ? span : window;
  if (span === undefined) return window;
  return count < WINDOW_CAPACITY ? span : 'wait';
}

/**
 * The spans after a key created in `window` is counted (`delta` 1) or uncounted (-1), or neither
 * (0), then older neighbours that fit in one span merged (a few per commit; never into the newest,
 * which takes the next keys), and the last window counted.
 */
export function spansAfter(
  spans: Spans,
  lastWindow: number,
  window: number,
  delta: 1 | -1 | 0,
): { spans: Map<number, number>; lastWindow: number } {
  const next = new Map(spans);
  if (delta === 1) {
    const place = placeOf(spans, lastWindow, window);
    if (place === 'wait') throw new Error(`no span can count a key of window ${window}`);
    next.set(place, (next.get(place) ?? 0) + 1);
  } else if (delta === -1) {
    const span = spanOf(spans, window);
    if (span !== undefined) {
      const count = (next.get(span) ?? 0) - 1;
      if (count > 0) next.set(span, count);
      else next.delete(span);
    }
  }
  let merges = 0;
  let previous: [number, number] | undefined;
  for (const [start, count] of sorted(next).slice(0, -1)) {
    if (previous && merges < MERGES_PER_COMMIT && previous[1] + count <= WINDOW_CAPACITY) {
      previous[1] += count;
      next.set(previous[0], previous[1]);
      next.delete(start);
      merges++;
    } else {
      previous = [start, count];
    }
  }
  return { spans: next, lastWindow: delta === 1 ? Math.max(lastWindow, window) : lastWindow };
}

/** The span the `offset`-th live key (from 0) is counted in, and how many live keys of that span come before it. */
export function startOf(spans: Spans, offset: number): { window: number; skip: number } | undefined {
  let before = 0;
  for (const [window, count] of sorted(spans)) {
    if (offset < before + count) return { window, skip: offset - before };
    before += count;
  }
  return undefined;
}
