import { getItem, querySortKeyRange, type Item, type Listed, type Range } from './collection';
import { applyComment, asComment, heldBy, isOf, numberOf, toRecord } from './comment-items';
import { keys } from './keys';
import { seeRunItem } from './run-cache';
import { repairing } from './write-outcome';
import type { Comment } from '../comments/comment';

/**
 * Pages of a run's comments. A run's comments are numbered 1, 2, 3… as they are written (never
 * changed or deleted), so any page is a known range of sort keys, whoever asks and whatever the
 * run holds. Only the two comments the run's record holds can be unwritten: a page that would show
 * one writes it out first. A member past the count, or at a held comment's number naming another
 * comment, is a create's that has not committed: no page shows it.
 */

/**
 * A range of a run's comments, oldest first, with their total and the run's organization;
 * undefined when the run is not registered. The first page is one Query (the run's record sorts
 * just before comment 1); any other is the run's record and exactly that range of numbers, read
 * together. Either way at most `limit + 1` items are read, whoever asks and whatever the run holds.
 * A page that would show one of the record's two comments before its items are written writes them first.
 */
export async function listStoredComments(
  runId: string,
  range: Range,
): Promise<{ organization: string; page: Listed<Comment> } | undefined> {
  const record = keys.run(runId);
  const first = range.offset + 1;
  const last = range.offset + range.limit;
  let run: Item | undefined;
  let members: Item[];
  if (range.offset === 0) {
    members = await querySortKeyRange(record.PK, record.SK, keys.runComment(runId, last).SK, range.limit + 1);
    run = members[0]?.SK === record.SK ? members.shift() : undefined;
  } else {
    [run, members] = await Promise.all([
      getItem(record),
      querySortKeyRange(record.PK, keys.runComment(runId, first).SK, keys.runComment(runId, last).SK, range.limit),
    ]);
  }
  if (!run) return undefined;
  seeRunItem(runId, run);
  const count = (run.commentCount as number | undefined) ?? 0;
  const held = heldBy(run);
  // A member counts where it names the comment committed at its number: past the count, or
  // beside a held comment it does not name, it is a create's that has not committed (or never will).
  const named = (member: Item) => {
    const number = numberOf(member);
    const holds = held.find((comment) => comment.number === number);
    return number <= count && (!holds || isOf(member, holds));
  };
  const items = members.filter(named).map(toRecord);
  // The record's comments are the run's last: one this page reaches without its member is unwritten.
  const unwritten = held.filter(
    (comment) => comment.number >= first && comment.number <= last && !items.some((c) => c.id === comment.id),
  );
  if (unwritten.length > 0) {
    await repairing(() => Promise.all(unwritten.map((comment) => applyComment(comment))));
    items.push(...unwritten.map(asComment));
    items.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }
  return {
    organization: run.organization as string,
    page: { items, totalCount: count },
  };
}
