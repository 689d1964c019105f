import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from './client';
import { getItem, querySortKeyRange, recordOf, type Item, type Listed, type Range } from './collection';
import { Entity, keys } from './keys';
import { isReplay, receiptPut, replayFrom, type Receipt, type Replay } from './receipts';
import type { Comment } from '../comments/comment';
import { newId } from '../ids';
import { LOST_ROUND, whileContended } from './contention';

/**
 * Comments on runs. A run's comments are numbered 1, 2, 3… as they are written (they are never
 * changed or deleted), and the run's record holds how many there are, so any page is a known range
 * of sort keys. Each comment is two identical immutable items written in one transaction with the
 * run's count: its numbered member of the run's collection (what lists read) and a copy keyed by
 * id (what `GET /comments/:id` reads in one GetItem).
 */

export interface NewComment {
  runId: string;
  organization: string;
  body: string;
  createdBy: string;
}

const toRecord = (item: Item) => recordOf<Comment>(item);

/** The two items of a run's `sequence`-th comment; exported so tests can bulk-load comments exactly as they are stored. */
export const commentItems = (comment: Comment, sequence: number): Item[] => [
  { ...keys.runComment(comment.runId, sequence), entity: Entity.Comment, ...comment },
  { ...keys.comment(comment.id), entity: Entity.Comment, ...comment },
];

/**
 * What this process last saw of a run: its organization (which never changes) and, as a hint for
 * the next comment's number, its count and latest comment's time. A stale hint only costs a retry:
 * every write is conditioned on the count it expects. Bounded, dropping the oldest entry first.
 */
interface SeenRun {
  organization: string;
  commentCount?: number;
  lastCommentAt?: string;
}
const MAX_SEEN_RUNS = 10_000;
const seenRuns = new Map<string, SeenRun>();
function see(runId: string, run: SeenRun): void {
  seenRuns.delete(runId); // re-inserted last: Maps iterate oldest first
  if (seenRuns.size >= MAX_SEEN_RUNS) seenRuns.delete(seenRuns.keys().next().value!);
  seenRuns.set(runId, run);
}
const seeRunItem = (runId: string, run: Item) =>
  see(runId, { organization: run.organization as string, commentCount: (run.commentCount as number | undefined) ?? 0, lastCommentAt: run.lastCommentAt as string | undefined });

/**
 * The run's organization, from what this process has seen (a run's organization never changes)
 * or one GetItem, which also tells the next insert the run's count; undefined when not registered.
 */
export async function findRunOrganization(runId: string): Promise<string | undefined> {
  const seen = seenRuns.get(runId);
  if (seen) return seen.organization;
  const run = await getItem(keys.run(runId));
  if (!run) return undefined;
  seeRunItem(runId, run);
  return run.organization as string;
}

/**
 * A range of a run's comments, oldest first, with their total and the run's organization;
 * undefined when the run is not registered. The first page is one Query (the run's record sorts
 * just before comment 1); any other is the run's record and exactly that range of numbers, read
 * together. Either way at most `limit + 1` items are read, whoever asks and whatever the run holds.
 */
export async function listStoredComments(runId: string, range: Range): Promise<{ organization: string; page: Listed<Comment> } | undefined> {
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
  return {
    organization: run.organization as string,
    page: { items: members.map(toRecord), totalCount: (run.commentCount as number | undefined) ?? 0 },
  };
}

export async function findComment(commentId: string): Promise<Comment | undefined> {
  const found = await getItem(keys.comment(commentId));
  if (!found) return undefined;
  const comment = toRecord(found);
  if (!seenRuns.has(comment.runId)) see(comment.runId, { organization: comment.organization });
  return comment;
}

/**
 * Writes the run's next comment: one transaction of the run's count (conditioned on the count
 * this process expects and on the organization), its numbered member and its copy by id, so the
 * numbering stays dense with no hole to repair. When another writer took that number first, the
 * cancellation carries the run as it is now (ReturnValuesOnConditionCheckFailure), and the next
 * attempt takes the number after it; writers keep trying for as long as the request can wait
 * (contention.ts: bounded by the function's remaining time, fair to the longest waiting). Writers
 * in one process take turns per run, so they do not race each other. Each comment's time is after
 * its predecessor's, so creation time orders a run's comments as their numbers do.
 * 'run-not-found' when the run is not registered in that organization; throws Contended (nothing
 * written) when the run stayed busy for longer than the request can wait. A receipt that already
 * exists refuses the insert with the comment it recorded (see receipts.ts).
 */
export async function insertComment(input: NewComment): Promise<Comment | 'run-not-found'>;
export async function insertComment(input: NewComment, receipt: Receipt): Promise<Comment | 'run-not-found' | Replay<Comment>>;
export async function insertComment(input: NewComment, receipt?: Receipt): Promise<Comment | 'run-not-found' | Replay<Comment>> {
  return inTurn(input.runId, () => {
    const seen = seenRuns.get(input.runId);
    let expected = seen?.organization === input.organization ? seen : { organization: input.organization, commentCount: 0 };
    return whileContended('run', { runId: input.runId }, async () => {
      const sequence = (expected.commentCount ?? 0) + 1;
      const comment: Comment = { id: newId('wsc'), ...input, createdAt: timeAfter(expected.lastCommentAt) };
      const outcome = await appendComment(comment, sequence, receipt);
      if (isReplay<Comment>(outcome)) return outcome;
      if (outcome === 'written') {
        see(comment.runId, { organization: comment.organization, commentCount: sequence, lastCommentAt: comment.createdAt });
        return comment;
      }
      if (outcome === 'run-not-found') {
        seenRuns.delete(comment.runId);
        return outcome;
      }
      if (outcome !== 'conflict') expected = outcome;
      return LOST_ROUND;
    });
  });
}

/** One attempt: 'written', the run as it is now when its count moved, 'conflict' (retry as is), or the receipt's replay. */
async function appendComment(comment: Comment, sequence: number, receipt: Receipt | undefined): Promise<'written' | 'run-not-found' | 'conflict' | SeenRun | Replay<Comment>> {
  const [member, byId] = commentItems(comment, sequence);
  try {
    await documentClient.send(new TransactWriteCommand({
      TransactItems: [
        {
          Update: {
            TableName: tableName(),
            Key: keys.run(comment.runId),
            UpdateExpression: 'SET commentCount = :sequence, lastCommentAt = :createdAt',
            ConditionExpression: sequence === 1
              ? 'organization = :organization AND (attribute_not_exists(commentCount) OR commentCount = :expected)'
              : 'organization = :organization AND commentCount = :expected',
            ExpressionAttributeValues: { ':sequence': sequence, ':expected': sequence - 1, ':createdAt': comment.createdAt, ':organization': comment.organization },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        { Put: { TableName: tableName(), Item: member, ConditionExpression: 'attribute_not_exists(PK)' } },
        { Put: { TableName: tableName(), Item: byId, ConditionExpression: 'attribute_not_exists(PK)' } },
        ...(receipt ? [receiptPut(receipt, comment)] : []),
      ],
    }));
    return 'written';
  } catch (error) {
    if (!(error instanceof TransactionCanceledException)) throw error;
    const [run, numbered, copy, receipted] = error.CancellationReasons ?? [];
    if (receipted?.Code === 'ConditionalCheckFailed') return replayFrom<Comment>(receipted.Item);
    if (run?.Code === 'ConditionalCheckFailed') {
      // The low-level item: the document client does not unmarshall cancellation reasons.
      const now = run.Item;
      if (now?.organization?.S !== comment.organization) return 'run-not-found';
      return { organization: comment.organization, commentCount: Number(now.commentCount?.N ?? 0), lastCommentAt: now.lastCommentAt?.S };
    }
    if ([run, numbered, copy, receipted].some((reason) => reason?.Code === 'TransactionConflict')) return 'conflict';
    // A fresh random id that already exists (62^16 ids), or a number taken while the count says
    // otherwise: a bug, not bad luck.
    throw error;
  }
}

/** Now, or one millisecond after `previous` when the clock has not passed it. */
function timeAfter(previous: string | undefined): string {
  const now = Date.now();
  const after = previous === undefined ? now : Math.max(now, Date.parse(previous) + 1);
  return new Date(after).toISOString();
}

/** Runs `write` after the writes this process already started on the same run. */
const turns = new Map<string, Promise<unknown>>();
function inTurn<T>(runId: string, write: () => Promise<T>): Promise<T> {
  const previous = turns.get(runId) ?? Promise.resolve();
  const mine = previous.then(write, write);
  const settled = mine.catch(() => undefined);
  turns.set(runId, settled);
  void settled.then(() => { if (turns.get(runId) === settled) turns.delete(runId); });
  return mine;
}
