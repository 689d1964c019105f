import { setTimeout as sleep } from 'node:timers/promises';
import { getItem, querySortKeyRange, recordOf, type Item, type Listed, type Range } from './collection';
import { Contended, currentDeadline, LOST_ROUND, RETRY_NOW, whileContended } from './contention';
import { STORE_TIMEOUTS } from './client';
import { CLAIM_AFTER_MS, CLAIM_TIMEOUT_MS, claimTurn, fairCommit, newTurn, type TurnNow } from './fair-turns';
import { Entity, keys } from './keys';
import { inTurn } from './process-queue';
import {
  claimReceipt,
  findClaim,
  releaseClaim,
  takeOverClaim,
  type Claim,
  type Receipt,
  type Replay,
} from './receipts';
import { forget, runFrom, see, seenRun, seeRunItem, type Latest, type SeenRun } from './run-cache';
import { isRefused, writeDerived, writeOnce } from './single-write';
import { afterCommit, repairing } from './write-outcome';
import { whileItsWriterMayBeAtIt } from './write-out';
import type { Comment } from '../comments/comment';
import { newId } from '../ids';

/**
 * Comments on runs. A run's comments are numbered 1, 2, 3… as they are written (never changed or
 * deleted), so any page is a known range of sort keys. Each comment is two identical immutable
 * items: its numbered member of the run's collection (what lists read) and a copy keyed by id
 * (what `GET /comments/:id` reads).
 *
 * A comment commits with one conditional UpdateItem of the run's record: the count goes from n-1
 * to n, and the record holds the comment as its `latest` and the one before as its `prior`. Its
 * two items are derived from that commit and written after it, copy first, then member (so a member
 * always has its copy). Only the two comments the record holds can be unwritten: the commit that
 * drops one from the record writes it out first if its writer has not, and so does a list page
 * that would show one. Two, not one, so a busy run's next commit need not wait for the last
 * comment's writes. A writer that dies before its commit leaves nothing a reader can see; one that
 * dies after it leaves a comment the next reader, or the writer that drops it, finishes.
 */
export interface NewComment {
  runId: string;
  organization: string;
  body: string;
  createdBy: string;
}

const toRecord = (item: Item) => recordOf<Comment>(item);
/** The comments a run's record holds, oldest first: those that may be unwritten. */
const heldBy = (run: Item): Latest[] => [run.prior, run.latest].filter(Boolean) as Latest[];

/** The two items of a run's `sequence`-th comment; exported so tests can bulk-load comments exactly as they are stored. */
export const commentItems = (comment: Comment, sequence: number): Item[] => [
  { ...keys.runComment(comment.runId, sequence), entity: Entity.Comment, ...comment },
  { ...keys.comment(comment.id), entity: Entity.Comment, ...comment },
];

const asComment = ({ number: _number, ...comment }: Latest): Comment => comment;

/** Writes a committed comment's items, copy first: idempotent, so anyone may (re)do it. */
async function applyComment(latest: Latest): Promise<void> {
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
async function writeOut(held: Latest, { patient = true } = {}): Promise<true | 'wait'> {
  const written = async () => (await getItem(keys.runComment(held.runId, held.number))) !== undefined;
  if (await written()) return true;
  const within = patient ? await whileItsWriterMayBeAtIt(Date.parse(held.createdAt), written) : false;
  if (within !== false) return within;
  await repairing(() => applyComment(held));
  return true;
}

/**
 * The run's organization, from what this process has seen (a run's organization never changes)
 * or one GetItem, which also tells the next insert the run's count; undefined when not registered.
 */
export async function findRunOrganization(runId: string): Promise<string | undefined> {
  const seen = seenRun(runId);
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
  const items = members.map(toRecord);
  // The record's comments are the run's last: one this page reaches whose member is missing is unwritten.
  const unwritten = heldBy(run).filter(
    (held) => held.number >= first && held.number <= last && !items.some((c) => c.id === held.id),
  );
  if (unwritten.length > 0) {
    await repairing(() => Promise.all(unwritten.map(applyComment)));
    items.push(...unwritten.map(asComment));
    items.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }
  return {
    organization: run.organization as string,
    page: { items, totalCount: (run.commentCount as number | undefined) ?? 0 },
  };
}

export async function findComment(commentId: string): Promise<Comment | undefined> {
  const found = await getItem(keys.comment(commentId));
  if (!found) return undefined;
  const comment = toRecord(found);
  if (!seenRun(comment.runId)) see(comment.runId, { organization: comment.organization });
  return comment;
}

/** What a commit knows of the run before it tries: its count, latest time and held comments, and how far it is written out. */
type Expected = SeenRun & { commentCount: number };

/**
 * Writes the run's next comment, exactly once per receipt. The receipt is claimed first with the
 * comment's id (receipts.ts); a retry that finds the claim answers with that comment once it is
 * committed, and takes the claim over if its writer died before committing. 'run-not-found' when
 * the run is not registered in that organization; throws Contended (nothing written) when the
 * run stayed busy for longer than the request can wait.
 */
export async function insertComment(input: NewComment): Promise<Comment | 'run-not-found'>;
export async function insertComment(
  input: NewComment,
  receipt: Receipt,
): Promise<Comment | 'run-not-found' | Replay<Comment>>;
export async function insertComment(
  input: NewComment,
  receipt?: Receipt,
): Promise<Comment | 'run-not-found' | Replay<Comment>> {
  const id = newId('wsc');
  const claim = receipt && (await claimReceipt({ hotSpot: 'run', where: { runId: input.runId } }, receipt, id));
  if (claim) return resolveClaim(input, receipt!, claim);
  const seen = seenRun(input.runId);
  const written = await commitComment(
    input,
    id,
    seen?.organization === input.organization && seen.commentCount !== undefined
      ? { ...seen, commentCount: seen.commentCount }
      : { organization: input.organization, commentCount: 0 },
  );
  if (written === 'run-not-found' && receipt) await releaseClaim(receipt, id);
  return written;
}

/** How often a retry looks again for the comment a live claim is committing. */
const CLAIM_POLL_MS = 25;

/**
 * A create that found its receipt claimed: another request with the same receipt. Its comment,
 * once committed; the same receipt for another request, a Replay the caller refuses (422); a claim
 * whose writer's lease has passed, taken over and committed by this request.
 */
async function resolveClaim(
  input: NewComment,
  receipt: Receipt,
  claim: Claim,
): Promise<Comment | 'run-not-found' | Replay<Comment>> {
  const replay = (record: Comment): Replay<Comment> => ({ replayOf: { fingerprint: claim.fingerprint, record } });
  if (claim.fingerprint !== receipt.fingerprint) return replay(undefined as unknown as Comment);
  for (;;) {
    // Most often the comment is written: its copy says so.
    const written = await findComment(claim.recordId);
    if (written) return replay(written);
    // Else the record first, then the copy again: a comment committed before the record was read
    // and no longer its latest has its copy written (the next commit wrote it out first).
    const run = await getItem(keys.run(input.runId));
    const committed = run && heldBy(run).find((held) => held.id === claim.recordId);
    if (committed) {
      await afterCommit(() => writeOut(committed, { patient: false }));
      return replay(asComment(committed));
    }
    const copy = await findComment(claim.recordId);
    if (copy) return replay(copy);
    if (!run) return 'run-not-found';
    if (Date.now() < claim.leaseUntil) {
      if (Date.now() + CLAIM_POLL_MS + 2 * STORE_TIMEOUTS.requestTimeoutMs > currentDeadline())
        throw new Contended('run', { runId: input.runId }, 0, 0);
      await sleep(CLAIM_POLL_MS);
      continue;
    }
    // Its writer can no longer commit: this request commits the same comment, once.
    if (await takeOverClaim(receipt, claim)) {
      const written = await commitComment(input, claim.recordId, runFrom(run));
      if (written === 'run-not-found') await releaseClaim(receipt, claim.recordId);
      return written;
    }
    const now = await findClaim(receipt);
    if (!now) return insertComment(input, receipt);
    claim = now;
  }
}

/**
 * Commits comment `id` as the run's next: one conditional UpdateItem of the run's record per
 * attempt, conditioned on the count `expected` and on the organization. The commit drops the
 * record's `prior` comment (its `latest` becomes the new `prior`), so that one is written out
 * first. A refused attempt carries the record as it is now, and the next attempt takes the number
 * after it. Writers in one process take turns per run; across processes, fairly (fair-turns.ts).
 * Each comment's time is after its predecessor's, so creation time orders a run's comments as
 * their numbers do.
 */
function commitComment(input: NewComment, id: string, expectedAtStart: Expected): Promise<Comment | 'run-not-found'> {
  return inTurn(input.runId, () => {
    let expected = expectedAtStart;
    const turn = newTurn();
    return whileContended(
      'run',
      { runId: input.runId },
      async () => {
        const dropped = expected.prior;
        if (dropped && dropped.number > (expected.writtenThrough ?? 0)) {
          if ((await writeOut(dropped)) === 'wait') return LOST_ROUND;
          expected = { ...expected, writtenThrough: dropped.number };
        }
        const number = expected.commentCount + 1;
        const latest: Latest = { id, ...input, createdAt: timeAfter(expected.lastCommentAt), number };
        const count =
          number === 1
            ? '(attribute_not_exists(commentCount) OR commentCount = :expected)'
            : 'commentCount = :expected';
        const fair = fairCommit(turn);
        const outcome = await writeOnce({
          Update: {
            Key: keys.run(input.runId),
            // The right-hand side reads the record as it was: its latest comment becomes the prior.
            UpdateExpression: `SET commentCount = :number, lastCommentAt = :createdAt, #prior = if_not_exists(latest, :none), latest = :latest${fair.remove}`,
            ConditionExpression: `organization = :organization AND ${count} AND ${fair.condition}`,
            ExpressionAttributeNames: { '#prior': 'prior' }, // a reserved word
            ExpressionAttributeValues: {
              ':number': number,
              ':expected': number - 1,
              ':createdAt': latest.createdAt,
              ':latest': latest,
              ':none': null,
              ':organization': input.organization,
              ...fair.values,
            },
          },
        });
        if (outcome === 'written') {
          await afterCommit(() => applyComment(latest));
          const writtenThrough = (expected.writtenThrough ?? 0) >= number - 1 ? number : expected.writtenThrough;
          see(input.runId, {
            organization: input.organization,
            commentCount: number,
            lastCommentAt: latest.createdAt,
            latest,
            ...(expected.latest ? { prior: expected.latest } : {}),
            writtenThrough,
          });
          return asComment(latest);
        }
        // Another Region was writing the record: the turn's holder goes again at once.
        if (!isRefused(outcome)) return turn.held ? RETRY_NOW : LOST_ROUND;
        const run = outcome.refused;
        if (run?.organization !== input.organization) {
          forget(input.runId);
          return 'run-not-found' as const;
        }
        // A retry that took over this comment's receipt committed it meanwhile.
        const mine = heldBy(run).find((held) => held.id === id);
        if (mine) {
          await afterCommit(() => applyComment(mine));
          return asComment(mine);
        }
        expected = runFrom(run, expected);
        see(input.runId, expected);
        const turnNow = run as TurnNow;
        // Still this writer's turn (an older writer took the number): the next one is its to take.
        turn.held = turnNow.turnSince === turn.since;
        if (turn.held) return RETRY_NOW;
        // Waited long enough, and no older writer waiting: claim the next turn, and take it at once.
        if (Date.now() - turn.since < CLAIM_AFTER_MS) return LOST_ROUND;
        return (await claimTurn(keys.run(input.runId), input.organization, turn, turnNow)) ? RETRY_NOW : LOST_ROUND;
      },
      { extraMsPerAttempt: CLAIM_TIMEOUT_MS },
    );
  });
}

/** Now, or one millisecond after `previous` when the clock has not passed it. */
function timeAfter(previous: string | undefined): string {
  const now = Date.now();
  const after = previous === undefined ? now : Math.max(now, Date.parse(previous) + 1);
  return new Date(after).toISOString();
}
