import type { Item } from './collection';
import { hasWaiters } from './turn-queue';
import type { Comment } from '../comments/comment';

/**
 * What this process last saw of a run: its organization (which never changes) and, as hints for
 * the next comment, its count, its latest comment's time, the two comments its record holds and
 * how far its comments are known to be written out. A stale hint only costs a retry: every commit
 * is conditioned on the count it expects. Bounded, dropping the oldest entry first.
 */
export interface SeenRun {
  organization: string;
  commentCount?: number;
  lastCommentAt?: string;
  /** The comments the record holds at `commentCount`: the latest and the one before it. */
  latest?: Latest;
  prior?: Latest;
  /** Every comment numbered up to this one is known to be written out. */
  writtenThrough?: number;
  /** Writers were waiting their turn (turn-queue.ts): the next create takes a ticket at once. */
  busy?: boolean;
}

/** A comment as a run's record holds it: the comment and its number. */
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

/** A comment the record holds (`latest` or `prior`); null or absent when there is none. */
const held = (value: unknown): Latest | undefined => (value ? (value as Latest) : undefined);

/**
 * A run as its record was read. Only the two comments the record holds can be unwritten, so every
 * comment before them is written out; what this process knew before (`before`) still holds.
 */
export function runFrom(run: Item, before?: SeenRun): SeenRun & { commentCount: number } {
  const commentCount = (run.commentCount as number | undefined) ?? 0;
  const latest = held(run.latest);
  const prior = held(run.prior);
  return {
    organization: run.organization as string,
    commentCount,
    lastCommentAt: run.lastCommentAt as string | undefined,
    ...(latest ? { latest } : {}),
    ...(prior ? { prior } : {}),
    writtenThrough: Math.max(before?.writtenThrough ?? 0, commentCount - (latest ? 1 : 0) - (prior ? 1 : 0)),
    busy: hasWaiters(run),
  };
}

/** Remembers a run's record as read. */
export const seeRunItem = (runId: string, run: Item): void => see(runId, runFrom(run, seenRuns.get(runId)));
