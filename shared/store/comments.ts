import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from './client';
import { getItem, querySortKeyRange, recordOf, type Item, type Listed, type Range } from './collection';
import { Entity, keys } from './keys';
import { isReplay, receiptPut, replayFrom, type Receipt, type Replay } from './receipts';
import type { Comment } from '../comments/comment';
import { newId } from '../ids';
import { LOST_ROUND, RETRY_NOW, whileContended } from './contention';

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
 * (contention.ts: bounded by the function's remaining time). Writers take turns fairly (see
 * Turn). Writers in one process take turns per run, so they do not race each other. Each
 * comment's time is after its predecessor's, so creation time orders a run's comments as their
 * numbers do. 'run-not-found' when the run is not registered in that organization; throws
 * Contended (nothing written) when the run stayed busy for longer than the request can wait. A
 * receipt that already exists refuses the insert with the comment it recorded (see receipts.ts).
 */
export async function insertComment(input: NewComment): Promise<Comment | 'run-not-found'>;
export async function insertComment(input: NewComment, receipt: Receipt): Promise<Comment | 'run-not-found' | Replay<Comment>>;
export async function insertComment(input: NewComment, receipt?: Receipt): Promise<Comment | 'run-not-found' | Replay<Comment>> {
  return inTurn(input.runId, () => {
    const seen = seenRuns.get(input.runId);
    let expected: RunNow = seen?.organization === input.organization ? seen : { organization: input.organization, commentCount: 0 };
    const turn: Turn = { since: Date.now(), held: false };
    return whileContended('run', { runId: input.runId }, async () => {
      const sequence = (expected.commentCount ?? 0) + 1;
      const comment: Comment = { id: newId('wsc'), ...input, createdAt: timeAfter(expected.lastCommentAt) };
      const outcome = await appendComment(comment, sequence, turn, receipt);
      if (isReplay<Comment>(outcome)) return outcome;
      if (outcome === 'written') {
        see(comment.runId, { organization: comment.organization, commentCount: sequence, lastCommentAt: comment.createdAt });
        return comment;
      }
      if (outcome === 'run-not-found') {
        seenRuns.delete(comment.runId);
        return outcome;
      }
      // The turn's holder goes again at once: the others hold back while its claim stands.
      if (outcome === 'conflict') return turn.held ? RETRY_NOW : LOST_ROUND;
      expected = outcome;
      // Still this writer's turn (an older writer took the number): the next one is its to take.
      turn.held = outcome.turnSince === turn.since;
      if (turn.held) return RETRY_NOW;
      // Waited long enough, and no older writer waiting: claim the next turn, and take it at once.
      if (Date.now() - turn.since < CLAIM_AFTER_MS) return LOST_ROUND;
      return (await claimTurn(comment, turn, outcome)) ? RETRY_NOW : LOST_ROUND;
    }, { extraMsPerAttempt: CLAIM_TIMEOUT_MS });
  });
}

/**
 * Fair turns on a busy run. Without them, the writer that just took a number knows the next one
 * and takes it too, while those that lost wait out their backoff with a count already stale, and
 * one of them can lose every round until its deadline. So the run's record names the oldest
 * writer still waiting (`turnSince`: when its request started; `turnUntil`: when its claim
 * lapses): while a claim holds, only that writer (or an older one) may take a number, and its
 * comment's transaction releases the claim. A writer claims after losing a round, when no older
 * writer holds a claim. A claim lapses after TURN_LEASE_MS, so a writer that gave up or crashed
 * holds the others back for no longer; a holder whose claim lapsed and was taken by a younger
 * writer finds out on its next attempt, and claims it back.
 */
interface Turn {
  /** When this request started waiting: the older, the sooner its turn. */
  since: number;
  /** Whether the run's record names this request as the writer whose turn it is. */
  held: boolean;
}
const TURN_LEASE_MS = 1_000;
/**
 * Writers claim turns only once they have waited this long: under light contention writers take
 * numbers as they come (one call each, the most a run can take), and a writer that keeps losing
 * gets the next turn instead of losing until its deadline.
 */
const CLAIM_AFTER_MS = 500;
/**
 * A claim is best effort and bounded: it gives up after this long (its outcome then unknown, and
 * harmless: an unknown claim lapses with its lease), so an attempt with a claim still ends in time.
 */
export const CLAIM_TIMEOUT_MS = 300;

/** Claims the run's next turn for `turn`; false when an older writer holds it (or another write got there first). */
async function claimTurn(comment: Comment, turn: Turn, now: RunNow): Promise<boolean> {
  const claimed = now.turnSince;
  if (claimed !== undefined && claimed < turn.since && (now.turnUntil ?? 0) >= Date.now()) return false;
  try {
    await documentClient.send(new UpdateCommand({
      TableName: tableName(),
      Key: keys.run(comment.runId),
      UpdateExpression: 'SET turnSince = :since, turnUntil = :until',
      ConditionExpression: 'organization = :organization AND (attribute_not_exists(turnSince) OR turnSince >= :since OR turnUntil < :now)',
      ExpressionAttributeValues: { ':since': turn.since, ':until': Date.now() + TURN_LEASE_MS, ':now': Date.now(), ':organization': comment.organization },
    }), { abortSignal: AbortSignal.timeout(CLAIM_TIMEOUT_MS) });
    turn.held = true;
    return true;
  } catch {
    // Someone older claimed it, a transaction was writing the run at that moment, or the store is
    // slow: wait a round. Nothing but the claim was at stake, and an unanswered one lapses.
    return false;
  }
}

/** The run's record as a refused attempt found it. */
interface RunNow extends SeenRun {
  turnSince?: number;
  turnUntil?: number;
}

/** One attempt: 'written', the run as it is now when it refused this number, 'conflict' (retry as is), or the receipt's replay. */
async function appendComment(comment: Comment, sequence: number, turn: Turn, receipt: Receipt | undefined): Promise<'written' | 'run-not-found' | 'conflict' | RunNow | Replay<Comment>> {
  const [member, byId] = commentItems(comment, sequence);
  const count = sequence === 1 ? '(attribute_not_exists(commentCount) OR commentCount = :expected)' : 'commentCount = :expected';
  // The holder of the turn releases it; anyone else may write only when no older writer holds it.
  const fair = turn.held ? 'turnSince = :since' : '(attribute_not_exists(turnSince) OR turnSince >= :since OR turnUntil < :now)';
  try {
    await documentClient.send(new TransactWriteCommand({
      TransactItems: [
        {
          Update: {
            TableName: tableName(),
            Key: keys.run(comment.runId),
            UpdateExpression: `SET commentCount = :sequence, lastCommentAt = :createdAt${turn.held ? ' REMOVE turnSince, turnUntil' : ''}`,
            ConditionExpression: `organization = :organization AND ${count} AND ${fair}`,
            ExpressionAttributeValues: {
              ':sequence': sequence, ':expected': sequence - 1, ':createdAt': comment.createdAt, ':organization': comment.organization,
              ':since': turn.since, ...(turn.held ? {} : { ':now': Date.now() }),
            },
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
      return {
        organization: comment.organization, commentCount: Number(now.commentCount?.N ?? 0), lastCommentAt: now.lastCommentAt?.S,
        ...(now.turnSince?.N ? { turnSince: Number(now.turnSince.N), turnUntil: Number(now.turnUntil?.N ?? 0) } : {}),
      };
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
