import type { Item } from './collection';
import type { Comment } from '../comments/comment';

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
  /** The run's latest comment when this process does not know its items are written. */
  unwritten?: Latest;
}

/** The latest comment as a run's record holds it: the comment and its number. */
export type Latest = Comment & { number: number };

const MAX_SEEN_RUNS = 10_000;
const seenRuns = new Map<string, SeenRun>();

export const seenRun = (runId: string): SeenRun | undefined => seenRuns.get(runId);

export function see(runId: string, run: SeenRun): void {
  seenRuns.delete(runId); // re-inserted last: Maps iterate oldest first
  if (seenRuns.size >= MAX_SEEN_RUNS) seenRuns.delete(seenRuns.keys().next().value!);
  seenRuns.set(runId, run);
}

export const forget = (runId: string) => seenRuns.delete(runId);

/** A run as its record was read: its latest comment unwritten unless this process knows better (the count has not moved since). */
export function runFrom(run: Item, before?: SeenRun): SeenRun & { commentCount: number } {
  const commentCount = (run.commentCount as number | undefined) ?? 0;
  const latest = run.latest as Latest | undefined;
  const known = before !== undefined && before.commentCount === commentCount && before.unwritten === undefined;
  return {
    organization: run.organization as string,
    commentCount,
    lastCommentAt: run.lastCommentAt as string | undefined,
    ...(latest && !known ? { unwritten: latest } : {}),
  };
}

/** Remembers a run's record as read. */
export const seeRunItem = (runId: string, run: Item): void => see(runId, runFrom(run, seenRuns.get(runId)));
