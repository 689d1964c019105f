import { describe, expect, it } from '@jest/globals';
import { placeOf, spanOf, spansAfter, startOf, WINDOW_CAPACITY } from '#shared/store/tag-key-windows';

/**
 * The spans of creation time an organization's head counts its keys in (shared/store/tag-key-windows.ts):
 * a key belongs to the last span starting at or before its window; a span holds at most
 * WINDOW_CAPACITY keys; a new span never takes a counted key from the span before it.
 */
const spans = (...entries: Array<[number, number]>) => new Map(entries);

describe('spans of creation time', () => {
  it('counts a key in the span its window falls in: the last one starting at or before it', () => {
    const head = spans([10, 3], [50, 2]);
    expect([spanOf(head, 9), spanOf(head, 10), spanOf(head, 49), spanOf(head, 50), spanOf(head, 900)]).toEqual([
      undefined,
      10,
      10,
      50,
      50,
    ]);
  });

  it('counts keys created far apart in the newest span until it holds half the capacity, then starts a span past the last window counted', () => {
    let head: Map<number, number> = new Map();
    let lastWindow = -1;
    const minute = 600;
    for (let i = 0; i < 2.5 * WINDOW_CAPACITY; i++) {
      ({ spans: head, lastWindow } = spansAfter(head, lastWindow, 1_000 + minute * i, 1)); // a key a minute
    }
    // Spans of 50, each older pair merged into one of 100, and the newest, which takes the next keys.
    const half = WINDOW_CAPACITY / 2;
    expect(head).toEqual(
      spans([1_000, WINDOW_CAPACITY], [1_000 + minute * 2 * half, WINDOW_CAPACITY], [1_000 + minute * 4 * half, half]),
    );
    expect(lastWindow).toBe(1_000 + minute * (2.5 * WINDOW_CAPACITY - 1));
  });

  it('never starts a span that would take counted keys from the one before it: a full span waits for a later window', () => {
    const full = spans([10, WINDOW_CAPACITY]);
    // Keys were counted up to window 20: a span from 15 would take those of windows 15 to 20.
    expect(placeOf(full, 20, 15)).toBe('wait');
    expect(placeOf(full, 20, 20)).toBe('wait');
    expect(placeOf(full, 20, 21)).toBe(21);
    // Before every span, a new one takes no key (a writer whose clock is behind).
    expect(placeOf(full, 20, 5)).toBe(5);
    expect(() => spansAfter(full, 20, 15, 1)).toThrow();
    // Creates in one window fill the newest span to capacity before one waits.
    const filling = spans([10, WINDOW_CAPACITY - 1]);
    expect(placeOf(filling, 20, 20)).toBe(10);
    expect(placeOf(filling, 20, 21)).toBe(21);
  });

  it('uncounts a deleted key from its span, drops an empty span, and merges older neighbours that fit in one', () => {
    const head = spans([10, 60], [50, 41], [90, 1], [95, 30]);
    // 90's only key goes; then 10 (60) and 50 (41) do not fit in one span.
    expect(spansAfter(head, 99, 92, -1).spans).toEqual(spans([10, 60], [50, 41], [95, 30]));
    // One more key of 50's goes: 60 + 40 fit, merged into the span from 10.
    expect(spansAfter(head, 99, 55, -1).spans).toEqual(spans([10, 100], [90, 1], [95, 30]));
    // An update moves no count but merges too (50's 41 and 90's 1), never into the newest span;
    // lastWindow moves only with a create.
    expect(spansAfter(head, 99, 55, 0)).toEqual({ spans: spans([10, 60], [50, 42], [95, 30]), lastWindow: 99 });
  });

  it('merges a head from before spans (a window per key) a few spans per commit, counts kept', () => {
    const legacy = new Map(Array.from({ length: 100 }, (_, i) => [1_000 + 10 * i, 1] as [number, number]));
    let head: Map<number, number> = legacy;
    const sizes: number[] = [];
    for (let commit = 0; commit < 6; commit++) {
      head = spansAfter(head, 1_990, 1_000, 0).spans;
      sizes.push(head.size);
    }
    expect(sizes).toEqual([80, 60, 40, 20, 2, 2]);
    expect(head).toEqual(spans([1_000, 99], [1_990, 1]));
    // Every key is found at the same place in the order as before.
    for (const offset of [0, 37, 98]) expect(startOf(head, offset)).toEqual({ window: 1_000, skip: offset });
    expect(startOf(head, 99)).toEqual({ window: 1_990, skip: 0 });
    expect(startOf(legacy, 37)).toEqual({ window: 1_370, skip: 0 });
  });

  it('finds the span a page begins in, and how many of its keys come before the page', () => {
    const head = spans([50, 2], [10, 3]);
    expect([0, 2, 3, 4, 5].map((offset) => startOf(head, offset))).toEqual([
      { window: 10, skip: 0 },
      { window: 10, skip: 2 },
      { window: 50, skip: 0 },
      { window: 50, skip: 1 },
      undefined,
    ]);
  });
});
