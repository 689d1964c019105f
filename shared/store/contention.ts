import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { countContention, type HotSpot } from '../observability/metrics';
import { STORE_TIMEOUTS } from './client';
import { DEFAULT_BUDGET_MS, storeDeadline } from './deadline';
import { leaveQueue, newTurn, type Turn } from './turn-queue';

/**
 * Hot spots: many writers meeting at one item (a run's record, an organization's head). Every
 * writer but one loses each round and tries again. How long it may keep trying is bounded by the
 * time its function has left, not by a number of attempts: it starts another attempt only while
 * its commit and what follows could still end before the deadline (ATTEMPT_ROOM_MS), so a request that must give up does so with
 * a definite answer (503, nothing written); and every call is cut at the deadline (client.ts), so
 * none runs into the function's timeout (504).
 */

export type { HotSpot } from '../observability/metrics';

/**
 * The wait of the hot spot this request is on, shared by nested retries: when it began, and the
 * rounds lost so far at any level (an update's read-and-write round holds its transaction's own).
 */
const waits = new AsyncLocalStorage<{ started: number; lost: number; turn?: Turn }>();

export { currentDeadline, withStoreDeadline } from './deadline';

/**
 * Nothing was written: the hot spot stayed busy for as long as this request could wait. The
 * handler answers 503 and logs it with what it carries (which run or organization, how long).
 */
export class Contended extends Error {
  readonly hotSpot: HotSpot;
  readonly where: Record<string, string>;
  readonly attempts: number;
  readonly waitedMs: number;
  constructor(hotSpot: HotSpot, where: Record<string, string>, attempts: number, waitedMs: number) {
    super(`gave up after ${attempts} attempts and ${waitedMs} ms on a busy ${hotSpot}`);
    this.name = 'Contended';
    this.hotSpot = hotSpot;
    this.where = where;
    this.attempts = attempts;
    this.waitedMs = waitedMs;
  }
}

/**
 * Room for one more attempt on a store that answers: its commit and the derived writes that follow
 * it (at most two round trips), each within the client's request timeout. A stalled call is cut
 * at the deadline anyway (client.ts, withinDeadline), so no wait runs into the function's timeout;
 * the room is what keeps an attempt from committing too late to write out what follows (which
 * would answer "outcome unknown" rather than a 503 that wrote nothing).
 */
export const ATTEMPT_ROOM_MS = 3 * STORE_TIMEOUTS.requestTimeoutMs;

/** What an attempt returns to be tried again: it lost a round, and nothing was written. */
export const LOST_ROUND = Symbol('lost round');
/** Like LOST_ROUND, but the next attempt should go at once (it is this writer's turn). */
export const RETRY_NOW = Symbol('retry now');
/** Like LOST_ROUND, but the next attempt should go after `ms` (the writer knows its place: turn-queue.ts). */
export class Pause {
  readonly ms: number;
  constructor(ms: number) {
    this.ms = ms;
  }
}

/**
 * This request's place on the hot spot it waits on (turn-queue.ts), as old as its wait: kept across
 * nested retries, so a request that re-reads and tries again keeps its place.
 */
export function currentTurn(): Turn {
  const wait = waits.getStore();
  if (!wait) return newTurn();
  wait.turn ??= newTurn(wait.started);
  return wait.turn;
}

/**
 * A lost round, for a caller that learned of it only as a refusal: as the commit's step in the
 * queue said (at once when it is this request's turn, after its pause otherwise), else a backoff.
 */
export function lostRound(): typeof LOST_ROUND | typeof RETRY_NOW | Pause {
  const last = waits.getStore()?.turn?.last;
  if (last === 'go') return RETRY_NOW;
  return last ? new Pause(last.ms) : LOST_ROUND;
}

/** The shortest and longest pause between attempts (ms). */
const PAUSE_MIN_MS = 2;
const PAUSE_MAX_MS = 1_000;

/**
 * Runs `attempt` on a hot spot (`where` names it in the log) until it returns something other than
 * LOST_ROUND, RETRY_NOW or a Pause; throws Contended when another attempt could not end before the
 * deadline (leaving its place in a queue of turns, if it took one), and records the wait when there
 * was one. A Pause says how long to pause; otherwise it is full jitter over a window that starts at
 * the last attempt's duration and doubles with each lost round, so writers spread over about as
 * many rounds as there are writers; it narrows (to half at most) as the wait nears its end, so the
 * longest waiters take the next rounds (docs/design.md, "Hot spots").
 */
export async function whileContended<T>(
  hotSpot: HotSpot,
  where: Record<string, string>,
  attempt: () => Promise<T | typeof LOST_ROUND | typeof RETRY_NOW | Pause>,
): Promise<T> {
  // A wait inside another (a transaction retried within an update that re-reads its key) is part
  // of it: one request, one record.
  const outer = waits.getStore();
  const wait = outer ?? { started: Date.now(), lost: 0 };
  const deadline = storeDeadline() ?? wait.started + DEFAULT_BUDGET_MS;
  const attemptMaxMs = ATTEMPT_ROOM_MS;
  const patience = Math.max(1, deadline - attemptMaxMs - wait.started);
  /** Attempts made: one per round lost, and the last one when it won. */
  const attempts = (gaveUp: boolean) => wait.lost + (gaveUp ? 0 : 1);
  /** The outermost wait counts itself once, if it waited at all: attempts, time waited, and whether it gave up. */
  const finish = (gaveUp: boolean) => {
    if (outer || wait.lost === 0) return;
    countContention(hotSpot, { attempts: attempts(gaveUp), waitedMs: Date.now() - wait.started, gaveUp });
  };
  /** Gives up before an attempt that could not end by the deadline: the writers behind it need not wait out its turn. */
  const giveUp = async (now: number) => {
    finish(true);
    if (!outer && wait.turn) await leaveQueue(wait.turn);
    return new Contended(hotSpot, where, attempts(true), now - wait.started);
  };
  for (let lostHere = 1; ; lostHere++) {
    const attemptStarted = Date.now();
    let outcome: T | typeof LOST_ROUND | typeof RETRY_NOW | Pause;
    try {
      outcome = await waits.run(wait, attempt);
    } catch (error) {
      finish(error instanceof Contended);
      // Gave up (or failed) before committing: the writers behind it need not wait out its turn.
      if (!outer && wait.turn) await leaveQueue(wait.turn);
      throw error;
    }
    const now = Date.now();
    if (outcome !== LOST_ROUND && outcome !== RETRY_NOW && !(outcome instanceof Pause)) {
      finish(false);
      return outcome;
    }
    wait.lost++;
    const round = Math.min(PAUSE_MAX_MS, Math.max(PAUSE_MIN_MS, now - attemptStarted));
    const window = Math.min(PAUSE_MAX_MS, round * 2 ** Math.min(lostHere - 1, 8));
    const urgency = Math.min(1, (now - wait.started) / patience);
    const pause =
      outcome instanceof Pause ? outcome.ms : outcome === RETRY_NOW ? 0 : Math.random() * window * (1 - urgency / 2);
    if (now + pause + attemptMaxMs > deadline) throw await giveUp(now);
    // No timer for a retry that goes at once: one of 0 ms still waits a millisecond or more.
    if (pause > 0) {
      await sleep(pause);
      // A busy event loop fires a timer late: the next attempt still needs its room.
      const woke = Date.now();
      if (woke + attemptMaxMs > deadline) throw await giveUp(woke);
    }
  }
}
