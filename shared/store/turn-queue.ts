import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName, withinDeadline } from './client';
import type { Item } from './collection';
import { isConditionFailed, isReplicatedWriteConflict } from './errors';
import type { Key } from './keys';
import { isWriteOutcomeUnknown } from './write-outcome';
import { writeHooks, type Write } from './writes';

/**
 * A queue of turns on a busy record: a run's (its comments commit there) or an organization's
 * head (its reserved tag keys' changes do). A writer whose commit was refused takes a ticket (the
 * record's `queueNext` counts them out); `queueHead` is the ticket whose turn it is, and only its
 * holder commits, moving the head on as it does. So a waiting writer knows its place: it sleeps for
 * about as many commits as are ahead of it, at the pace it has seen the head move, and then reads
 * the record again, instead of trying and losing round after round (every try of every waiter is a
 * call the store serves before the next commit). A writer that gives up says so (`queueGone`);
 * one that died is passed over once the head has not moved for TURN_LEASE_MS per ticket ahead of
 * its passer; one passed over while alive takes a new ticket. With no one waiting, a commit needs
 * no ticket: under light contention a change costs what it always did. The queue only orders
 * commits: each commit keeps its own conditions, so no state of the queue can change what commits
 * (docs/design.md, "Turns on a busy run or organization").
 */

/** This writer's place in the queue of a record, and what it last saw of the queue. */
export interface Turn {
  /** Its ticket, once a commit of it was refused; none again once it committed. */
  ticket?: number;
  /** The head as last seen, and when (Date.now()) this writer first saw it there. */
  head: number;
  headSince: number;
  /** When the head last moved, as the record says. */
  movedAt: number;
  /** The tickets that gave up, and the next ticket to hand out, as last seen. */
  gone: number[];
  next: number;
  /** When this writer began (Date.now()). */
  since: number;
  /** A commit of it without a ticket was refused by a commit from before it began: its count was stale. */
  staleOnce?: boolean;
  /** It paused: it reads the record again before its next commit. */
  readFirst?: boolean;
  /** The record it holds a ticket of. */
  record?: Key;
  /** Its last step, for a caller that learns of the lost round only as a refusal (lostRound). */
  last?: 'go' | Wait;
  /** The head as first seen with this ticket, and when: the pace the queue moves at. */
  paceFrom?: { head: number; at: number };
}

/** The record's queue, as an item holds it. */
interface QueueAttributes {
  queueNext?: number;
  queueHead?: number;
  queueAt?: number;
  queueGone?: Set<number>;
}

/**
 * How long the head's holder has to commit before the next ticket may pass it over: on a loaded
 * store a call can take most of a second, and a writer passed over while alive starts again.
 */
export const TURN_LEASE_MS = 2_000;
/** The pace assumed (ms per commit) until this writer has seen the head move. */
const FIRST_PACE_MS = 25;
/** The longest pause between two reads: a stale pace or a dead holder is found out this soon. */
const LONGEST_PAUSE_MS = 400;
/** The shortest pause (ms): the next in line reads again about this often. */
const SHORTEST_PAUSE_MS = 2;

export const newTurn = (since = Date.now()): Turn => ({
  since,
  head: 0,
  headSince: Date.now(),
  movedAt: 0,
  gone: [],
  next: 0,
});

/** Whether the record, as `item` has it, has writers waiting for their turn. */
export const hasWaiters = (item: Item): boolean =>
  ((item as QueueAttributes).queueNext ?? 0) > ((item as QueueAttributes).queueHead ?? 0);

/** Whether writers were waiting behind this one when it last saw the queue. */
export const waitedBehind = (turn: Turn): boolean => turn.ticket !== undefined && turn.next > turn.ticket + 1;

/**
 * The commit's condition and update for `turn`: without a ticket, only while no one waits; with
 * one, only while the head is where this writer saw it, moving it past its ticket (and clearing
 * the tickets it passes that gave up). `set` goes on the update's SET, `clauses` after it.
 */
export function queuedCommit(turn: Turn) {
  if (turn.ticket === undefined)
    return {
      condition: '(attribute_not_exists(queueNext) OR queueHead = queueNext)',
      set: '',
      clauses: '',
      values: {},
    };
  const passed = turn.gone.filter((ticket) => ticket >= turn.head && ticket < turn.ticket!);
  return {
    condition: 'queueHead = :queueHead',
    set: ', queueHead = :queueAfter, queueAt = :queueAt',
    clauses: passed.length === 0 ? '' : ' DELETE queueGone :queuePassed',
    values: {
      ':queueHead': turn.head,
      ':queueAfter': turn.ticket + 1,
      ':queueAt': Date.now(),
      ...(passed.length === 0 ? {} : { ':queuePassed': new Set(passed) }),
    } as Record<string, unknown>,
  };
}

/** Takes in the queue as `item` (the record, read or returned by a refusal) has it. */
function see(turn: Turn, item: Item): void {
  const queue = item as QueueAttributes;
  const head = queue.queueHead ?? 0;
  const now = Date.now();
  if (head !== turn.head) [turn.head, turn.headSince] = [head, now];
  turn.movedAt = queue.queueAt ?? 0;
  turn.gone = [...(queue.queueGone ?? [])];
  turn.next = queue.queueNext ?? 0;
  if (turn.ticket !== undefined) turn.paceFrom ??= { head, at: now };
}

/** A pause before reading the record again (ms), and whether this writer is next in line. */
export interface Wait {
  ms: number;
  nextInLine: boolean;
}

/**
 * What a writer does after its commit was refused, or after reading the record again: 'ticket'
 * when it has no place (or was passed over), 'go' when it is its turn, else wait. A writer
 * without a ticket whose count was merely stale (no one waits, and the last commit, at
 * `lastCommitAt`, is from before it began) goes once more at once: no one is racing it.
 */
export function nextStep(turn: Turn, item: Item, lastCommitAt = 0): 'ticket' | 'go' | Wait {
  see(turn, item);
  const ticket = turn.ticket;
  if (ticket === undefined && !turn.staleOnce && !hasWaiters(item) && lastCommitAt < turn.since) {
    turn.staleOnce = true;
    return 'go';
  }
  if (ticket === undefined || turn.head > ticket) return 'ticket';
  let ahead = 0;
  for (let waiting = turn.head; waiting < ticket; waiting++) if (!turn.gone.includes(waiting)) ahead++;
  if (ahead === 0) return 'go';
  const now = Date.now();
  // The head has not moved for a lease per writer ahead, as the record and this writer both saw: they died.
  if (now - turn.headSince >= TURN_LEASE_MS && now - turn.movedAt >= ahead * TURN_LEASE_MS) return 'go';
  const from = turn.paceFrom!;
  const pace = turn.head > from.head ? (now - from.at) / (turn.head - from.head) : FIRST_PACE_MS;
  // The next in line looks again at once; the others sleep through most of the commits ahead of them.
  const pause = ahead === 1 ? 0 : (ahead - 1) * pace * 0.8;
  return { ms: Math.min(LONGEST_PAUSE_MS, Math.max(SHORTEST_PAUSE_MS, pause)), nextInLine: ahead === 1 };
}

/** A record's queue, as a writer on it sees it. */
export interface QueueOf {
  record: Key;
  /** The condition that the record is the one meant (a ticket never makes an item). */
  owned: { condition: string; values: Record<string, unknown> };
  /** Takes in the record as read or refused (what the writer knows of it); says when it last committed. */
  takeIn: (item: Item) => number;
}

/**
 * The writer's next step once the record was read or refused as `item`, taking a ticket when it
 * needs one: 'go', a Wait (after which it reads the record again), 'not-owned' when the record is
 * not the one meant, 'conflict' when another Region was writing it.
 */
export async function stepAfter(
  queue: QueueOf,
  turn: Turn,
  item: Item,
): Promise<'go' | Wait | 'not-owned' | 'conflict'> {
  const step = nextStep(turn, item, queue.takeIn(item));
  if (step === 'ticket') return joinQueue(queue, turn);
  turn.readFirst = step !== 'go';
  turn.last = step;
  return step;
}

/** Takes a ticket, and the step after it (as stepAfter). */
export async function joinQueue(queue: QueueOf, turn: Turn): Promise<'go' | Wait | 'not-owned' | 'conflict'> {
  const taken = await takeTicket(queue.record, turn, queue.owned);
  if (taken === undefined) return 'not-owned';
  return taken === 'conflict' ? taken : stepAfter(queue, turn, taken);
}

/**
 * Takes the record's next ticket, unconditionally but for `owned` (the record is the one meant:
 * never makes an item), so all who lost a round get theirs at once; the record as it is after,
 * undefined when it is not the one meant, 'conflict' when another Region was writing it.
 */
export async function takeTicket(
  record: Key,
  turn: Turn,
  owned: { condition: string; values: Record<string, unknown> },
): Promise<Item | undefined | 'conflict'> {
  const write = {
    Update: {
      Key: record,
      UpdateExpression:
        'SET queueNext = if_not_exists(queueNext, :zero) + :one, queueHead = if_not_exists(queueHead, :zero)',
      ConditionExpression: owned.condition,
      ExpressionAttributeValues: { ':zero': 0, ':one': 1, ...owned.values },
    },
  };
  try {
    writeHooks.beforeWrite?.(write);
    const { Attributes: item } = await documentClient.send(
      new UpdateCommand({ TableName: tableName(), ...write.Update, ReturnValues: 'ALL_NEW' }),
      withinDeadline(),
    );
    writeHooks.afterWritten?.(write);
    turn.ticket = (item!.queueNext as number) - 1;
    turn.record = record;
    turn.paceFrom = undefined;
    return item;
  } catch (error) {
    if (isConditionFailed(error)) return undefined;
    // Another Region was writing the record, or the answer was lost (a loaded store's timeout): try
    // again. A lost ticket that was taken nonetheless is passed over once its lease ends.
    if (isReplicatedWriteConflict(error) || isWriteOutcomeUnknown(error)) return 'conflict';
    throw error;
  }
}

/**
 * Gives up this writer's place, best effort: the tickets behind it need not wait out its lease.
 * Left undone (the store not answering, the writer dead), its lease still ends its turn.
 */
export async function leaveQueue(turn: Turn): Promise<void> {
  const { ticket, record } = turn;
  if (ticket === undefined || record === undefined) return;
  turn.ticket = undefined;
  const write = {
    Update: {
      Key: record,
      UpdateExpression: 'ADD queueGone :ticket',
      ConditionExpression: 'queueHead <= :at',
      ExpressionAttributeValues: { ':ticket': new Set([ticket]), ':at': ticket },
    },
  };
  try {
    writeHooks.beforeWrite?.(write);
    await documentClient.send(new UpdateCommand({ TableName: tableName(), ...write.Update }), withinDeadline());
  } catch {
    // Its lease ends its turn all the same.
  }
}

/** Whether `write` is a writer taking or giving up its place, not a change (for tests that stop writers at commits). */
export const isQueueWrite = (write: Write): boolean =>
  'Update' in write && /^(SET queueNext|ADD queueGone)/.test(write.Update.UpdateExpression ?? '');
