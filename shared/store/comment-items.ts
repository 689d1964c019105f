import { getItem, recordOf, type Item } from './collection';
import { Entity, keys } from './keys';
import type { Latest } from './run-cache';
import { writeDerived, writeOnce, type Write } from './single-write';
import { isStoreUnavailable } from './errors';
import { isWriteOutcomeUnknown, repairing } from './write-outcome';
import { whileItsWriterMayBeAtIt } from './write-out';
import type { Comment } from '../comments/comment';

/**
 * A comment's two items, and writing them. Each comment is two items: its numbered member of the
 * run's collection (what lists read) and a copy keyed by id (what `GET /comments/:id` reads). A
 * create writes both before its commit on the run's record (comment-commits.ts), each only where
 * nothing is yet, so a member may name a comment that never committed; the commit decides. The
 * rule every reader and writer keeps: **a member that names the comment its number committed has
 * its copy written**. So a writer that must write them after its commit writes the copy first,
 * and the member over any other comment's; only the two comments the record holds may be unwritten.
 */

/** The copy's attributes, and the number it was written for (a create that retries takes a new one). */
export const toRecord = (item: Item) => {
  const { number: _number, ...record } = recordOf<Comment & { number?: number }>(item);
  return record as Comment;
};
/** The comments a run's record holds, oldest first: those that may be unwritten. */
export const heldBy = (run: Item): Latest[] => [run.prior, run.latest].filter(Boolean) as Latest[];
/** Whether an item is of `comment` as committed (a create that retried under the same id wrote another time). */
export const isOf = (item: Item | undefined, comment: Comment): boolean =>
  item?.id === comment.id && item.createdAt === comment.createdAt;
/** A member's number, from its sort key. */
export const numberOf = (member: Item): number => Number((member.SK as string).split('#')[1]);

/** The two items of a run's `sequence`-th comment; exported so tests can bulk-load comments exactly as they are stored. */
export const commentItems = (comment: Comment, sequence: number): Item[] => [
  { ...keys.runComment(comment.runId, sequence), entity: Entity.Comment, ...comment },
  { ...keys.comment(comment.id), entity: Entity.Comment, ...comment, number: sequence },
];

export const asComment = ({ number: _number, ...comment }: Latest): Comment => comment;

/** What a create wrote before its commit: the comment as it meant to commit it, and which of its items it wrote. */
export interface Prewritten {
  latest: Latest;
  copy: boolean;
  member: boolean;
}

/**
 * Writes a comment's items before its commit, side by side, each only where nothing is: the copy
 * under its fresh id, the member at the number the create expects to take. A member already there
 * (a create's that did not commit) is written over after the commit, the copy being written.
 * A put whose answer was lost (a loaded store's timeout) may or may not have landed. The member's
 * then counts as not written: the create writes it after its commit. The copy's is put once more,
 * whole: the member may have landed, and a member may name a committed comment only once its copy
 * is there. The create fails only when the store refused a put, or did not answer the copy twice
 * (nothing committed: then its answer is the store's 503, not an unknown outcome).
 */
export async function prewrite(latest: Latest): Promise<Prewritten> {
  const [member, copy] = commentItems(asComment(latest), latest.number);
  const where = { runId: latest.runId };
  const put = (Item: Item) =>
    writeDerived('run', where, { Put: { Item, ConditionExpression: 'attribute_not_exists(PK)' } });
  const [copyPut, memberPut] = await Promise.allSettled([put(copy!), put(member!)]);
  const written = {
    latest,
    copy: copyPut.status === 'fulfilled' && copyPut.value,
    member: memberPut.status === 'fulfilled' && memberPut.value,
  };
  try {
    if (memberPut.status === 'rejected' && !isWriteOutcomeUnknown(memberPut.reason)) throw memberPut.reason;
    if (copyPut.status === 'rejected') {
      if (!isWriteOutcomeUnknown(copyPut.reason)) throw copyPut.reason;
      // A fresh id's copy: no one else writes it before this create commits.
      written.copy = await repairing(() => writeDerived('run', where, { Put: { Item: copy! } }));
    }
  } catch (error) {
    // Nothing is committed: what a write left is taken back (unless the store is not answering:
    // then it is left unseen), and the create fails as that write did.
    if (!isStoreUnavailable(error) && !isWriteOutcomeUnknown(error)) await discard(written);
    throw error;
  }
  // A fresh id's copy: only a retry under the same id (which does not prewrite) finds one there.
  if (copyPut.status === 'fulfilled' && !copyPut.value)
    throw new Error(`comment ${latest.id} already had a copy before its commit`);
  return written;
}

/**
 * Best effort, for a create that did not commit what it prewrote (its receipt named another
 * attempt): its copy, and its member unless another comment's replaced it. Left behind, neither
 * is seen: nobody knows the copy's id, and a member counts only where it names the comment
 * committed at its number.
 */
export async function discard(prewritten: Prewritten): Promise<void> {
  const { latest } = prewritten;
  const deletes: Write[] = [
    ...(prewritten.copy ? [{ Delete: { Key: keys.comment(latest.id) } }] : []),
    ...(prewritten.member
      ? [
          {
            Delete: {
              Key: keys.runComment(latest.runId, latest.number),
              ConditionExpression: 'id = :id',
              ExpressionAttributeValues: { ':id': latest.id },
            },
          },
        ]
      : []),
  ];
  await Promise.all(deletes.map((write) => writeOnce(write).catch(() => undefined)));
}

/**
 * Writes a committed comment's items, copy first: idempotent, so anyone may (re)do it. The copy is
 * written whole (its create may have prewritten it for another number or time); the member over
 * one that is not of this comment.
 */
export async function applyComment(latest: Latest, prewritten?: Prewritten): Promise<void> {
  const same = prewritten?.latest === latest;
  const [member, copy] = commentItems(asComment(latest), latest.number);
  const where = { runId: latest.runId };
  if (!(same && prewritten.copy)) await writeDerived('run', where, { Put: { Item: copy! } });
  if (!(same && prewritten.member))
    await writeDerived('run', where, {
      Put: {
        Item: member!,
        ConditionExpression: 'attribute_not_exists(PK) OR id <> :id OR createdAt <> :createdAt',
        ExpressionAttributeValues: { ':id': latest.id, ':createdAt': latest.createdAt },
      },
    });
}

/**
 * Writes out a comment the record holds unless its member names it (then so is its copy), one
 * read when it is, so writers that lost a round do not all write it again. `patient`: while its
 * own writer may still be at it, look again rather than write the same items ('wait' when this
 * request's deadline comes first).
 */
export async function writeOut(held: Latest, { patient = true } = {}): Promise<true | 'wait'> {
  const written = async () => isOf(await getItem(keys.runComment(held.runId, held.number)), held);
  if (await written()) return true;
  const within = patient ? await whileItsWriterMayBeAtIt(Date.parse(held.createdAt), written) : false;
  if (within !== false) return within;
  await repairing(() => applyComment(held));
  return true;
}
