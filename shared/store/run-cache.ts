import type { Item } from './collection';

/**
 * What this process last saw of a run: its organization (which never changes) and, as hints for
 * the next comment, its count, its latest comment's time and how far its comments are known to be
 * written out. A stale hint only costs a retry: every commit is conditioned on the count it expects.
 * Bounded, dropping the oldest entry first.
 */
export interface SeenRun {
  organization: string;
  commentCount?: number;
  lastCommentAt?: string;
  /** Comments up to this number are known to have their items written (applied). */
  appliedThrough?: number;
}

const MAX_SEEN_RUNS = 10_000;
const seenRuns = new Map<string, SeenRun>();

export const seenRun = (runId: string): SeenRun | undefined => seenRuns.get(runId);

export function see(runId: string, run: SeenRun): void {
  seenRuns.delete(runId); // re-inserted last: Maps iterate oldest first
  if (seenRuns.size >= MAX_SEEN_RUNS) seenRuns.delete(seenRuns.keys().next().value!);
  seenRuns.set(runId, run);
}

export const forget = (runId: string) => seenRuns.delete(runId);

/** Remembers a run's record as read; what was applied is kept only while the count has not moved. */
export function seeRunItem(runId: string, run: Item): void {
  const count = (run.commentCount as number | undefined) ?? 0;
  const before = seenRuns.get(runId);
  const latest = run.latest as { number: number } | undefined;
  see(runId, {
    organization: run.organization as string,
    commentCount: count,
    lastCommentAt: run.lastCommentAt as string | undefined,
    appliedThrough: before?.appliedThrough !== undefined && before.appliedThrough >= count ? count : (latest ? latest.number - 1 : count),
  });
}
