import { describe, expect, it } from '@jest/globals';
import { newTurn, nextStep, queuedCommit, TURN_LEASE_MS, type Turn } from '#shared/store/turn-queue';

/** The queue of turns on a busy run (turn-queue.ts): what a writer does next, given the record as read. */
describe('nextStep', () => {
  const holding = (ticket: number): Turn => ({ ...newTurn(), ticket });
  const record = (queue: { queueHead: number; queueNext: number; queueGone?: number[]; queueAt?: number }) => ({
    ...queue,
    ...(queue.queueGone ? { queueGone: new Set(queue.queueGone) } : {}),
  });

  it('without a ticket, goes again once when its count was merely stale, and queues when others race it', () => {
    const turn = newTurn();
    const before = turn.since - 1;
    // The last commit is from before this writer began and no one waits: it goes again at once, once.
    expect(nextStep(turn, record({ queueHead: 0, queueNext: 0 }), before)).toBe('go');
    expect(nextStep(turn, record({ queueHead: 0, queueNext: 0 }), before)).toBe('ticket');
    // Someone committed while it tried, or others wait: it queues.
    expect(nextStep(newTurn(), record({ queueHead: 0, queueNext: 0 }), Date.now() + 1)).toBe('ticket');
    expect(nextStep(newTurn(), record({ queueHead: 2, queueNext: 3 }), before)).toBe('ticket');
  });

  it('takes a new ticket when the head has passed it over', () => {
    expect(nextStep(holding(3), record({ queueHead: 4, queueNext: 6 }))).toBe('ticket');
  });

  it('goes when its ticket is the head, or when every ticket ahead of it gave up', () => {
    expect(nextStep(holding(3), record({ queueHead: 3, queueNext: 5 }))).toBe('go');
    expect(nextStep(holding(3), record({ queueHead: 1, queueNext: 5, queueGone: [1, 2] }))).toBe('go');
  });

  it('waits while a live ticket is ahead: the next in line looks again at once, the others sleep longer', () => {
    const next = nextStep(holding(3), record({ queueHead: 2, queueNext: 9, queueAt: Date.now() }));
    const later = nextStep(holding(8), record({ queueHead: 2, queueNext: 9, queueAt: Date.now() }));
    expect(next).toEqual({ ms: expect.any(Number), nextInLine: true });
    expect(later).toEqual({ ms: expect.any(Number), nextInLine: false });
    expect((later as { ms: number }).ms).toBeGreaterThan((next as { ms: number }).ms);
    // A gone ticket between counts for nothing: one live ticket ahead is next in line.
    expect(nextStep(holding(4), record({ queueHead: 2, queueNext: 9, queueGone: [3], queueAt: Date.now() }))).toEqual({
      ms: expect.any(Number),
      nextInLine: true,
    });
  });

  it('passes a head that has not moved for a lease per ticket ahead, as both the record and the writer saw', () => {
    const turn = holding(2);
    const stuck = record({ queueHead: 0, queueNext: 3, queueAt: Date.now() - 10 * TURN_LEASE_MS });
    // Just seen there: not yet, however old the record says the head is.
    expect(nextStep(turn, stuck)).not.toBe('go');
    turn.headSince = Date.now() - TURN_LEASE_MS;
    expect(nextStep(turn, stuck)).toBe('go');
    // Moved a moment ago by the record: two live tickets ahead need two leases.
    const moved = record({ queueHead: 0, queueNext: 3, queueAt: Date.now() - TURN_LEASE_MS });
    expect(nextStep(turn, moved)).not.toBe('go');
  });
});

describe('queuedCommit', () => {
  it('commits without a ticket only while no one waits', () => {
    expect(queuedCommit(newTurn()).condition).toBe('(attribute_not_exists(queueNext) OR queueHead = queueNext)');
  });

  it('with a ticket, moves the head past it and clears the gone tickets it passes', () => {
    const turn = { ...newTurn(), ticket: 5, head: 2, gone: [3, 7] };
    const commit = queuedCommit(turn);
    expect(commit.condition).toBe('queueHead = :queueHead');
    expect(commit.values).toMatchObject({ ':queueHead': 2, ':queueAfter': 6, ':queuePassed': new Set([3]) });
    expect(commit.clauses).toBe(' DELETE queueGone :queuePassed');
  });
});
