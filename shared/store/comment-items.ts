import { getItem, recordOf, type Item } from './collection';
import { Entity, keys } from './keys';
import type { Latest } from './run-cache';
import { writeDerived } from './single-write';
import { repairing } from './write-outcome';
import { whileItsWriterMayBeAtIt } from './write-out';
import type { Comment } from '../comments/comment';

/**
 * A comment's two items, and writing them out. Each comment is two identical immutable items: its
 * numbered member of the run's collection (what lists read) and a copy keyed by id (what
 * `GET /comments/:id` reads). They are derived from the comment's commit on the run's record
 * (comment-commits.ts) and written after it, copy first, then member (so a member always has its
 * copy). A writer that dies after its commit leaves a comment the next reader, or the writer that
 * drops it from the record, finishes.
 */

export const toRecord = (item: Item) => recordOf<Comment>(item);
/** The comments a run's record holds, oldest first: those that may be unwritten. */
export const heldBy = (run: Item): Latest[] => [run.prior, run.latest].filter(Boolean) as Latest[];

/** The two items of a run's `sequence`-th comment; exported so tests can bulk-load comments exactly as they are stored. */
export const commentItems = (comment: Comment, sequence: number): Item[] => [
  { ...keys.runComment(comment.runId, sequence), entity: Entity.Comment, ...comment },
  { ...keys.comment(comment.id), entity: Entity.Comment, ...comment },
];

export const asComment = ({ number: _number, ...comment }: Latest): Comment => comment;

/** Writes a committed comment's items, copy first: idempotent, so anyone may (re)do it. */
export async function applyComment(latest: Latest): Promise<void> {
  const comment = asComment(latest);
  const [member, copy] = commentItems(comment, latest.number);
  const where = { runId: comment.runId };
  await writeDerived('run', where, { Put: { Item: copy!, ConditionExpression: 'attribute_not_exists(PK)' } });
  await writeDerived('run', where, { Put: { Item: member!, ConditionExpression: 'attribute_not_exists(PK)' } });
}

/**
 * Writes out a comment the record holds unless its member is there (written last: then so is its
 * copy), one read when it is, so writers that lost a round do not all write it again. `patient`:
 * while its own writer may still be at it, look again rather than write the same items ('wait'
 * when this request's deadline comes first).
 */
export async function writeOut(held: Latest, { patient = true } = {}): Promise<true | 'wait'> {
  const written = async () => (await getItem(keys.runComment(held.runId, held.number))) !== undefined;
  if (await written()) return true;
  const within = patient ? await whileItsWriterMayBeAtIt(Date.parse(held.createdAt), written) : false;
  if (within !== false) return within;
  await repairing(() => applyComment(held));
  return true;
}
