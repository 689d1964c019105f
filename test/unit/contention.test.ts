import { describe, expect, it } from '@jest/globals';
import { Contended, LOST_ROUND, RETRY_NOW, whileContended, withStoreDeadline } from '#shared/store/contention';
import { ATTEMPT_ROOM_MS as ROOM_MS } from '#shared/store/contention';
import { isWriteAction, routes } from '#shared/routes';

/** The waiting rule on a hot spot: bounded by the request's deadline, never by a count of attempts. */
describe('whileContended', () => {
  it('keeps trying while an attempt can still end before the deadline, then gives up in time to answer', async () => {
    const started = Date.now();
    const deadline = started + ROOM_MS + 400;
    const attemptStarts: number[] = [];
    const outcome = withStoreDeadline(deadline, () =>
      whileContended('run', { runId: 'run-x' }, async () => {
        attemptStarts.push(Date.now());
        return LOST_ROUND;
      }),
    );
    await expect(outcome).rejects.toBeInstanceOf(Contended);
    // Far more than the old fixed counts (6 or 30 attempts)…
    expect(attemptStarts.length).toBeGreaterThan(6);
    // …and none started too late for a slow store call to end before the deadline.
    expect(Math.max(...attemptStarts)).toBeLessThanOrEqual(deadline - ROOM_MS);
    expect(Date.now()).toBeLessThan(deadline - ROOM_MS + 200); // + a loaded event loop's delay
  });

  it('gives up instead of starting an attempt that a late timer left without its room', async () => {
    const deadline = Date.now() + ROOM_MS + 300;
    const attemptStarts: number[] = [];
    const outcome = withStoreDeadline(deadline, () =>
      whileContended('run', { runId: 'run-x' }, async () => {
        attemptStarts.push(Date.now());
        // While this attempt's pause runs, the event loop is busy past the last moment an attempt
        // may start (a loaded machine): its timer fires late.
        if (attemptStarts.length === 1)
          setImmediate(() => {
            while (Date.now() <= deadline - ROOM_MS + 50);
          });
        return LOST_ROUND;
      }),
    );
    await expect(outcome).rejects.toBeInstanceOf(Contended);
    expect(attemptStarts).toHaveLength(1);
  });

  it('returns the first attempt that did not lose, after as many rounds as it took', async () => {
    let attempts = 0;
    const outcome = await whileContended('organization', { organization: 'acme' }, async () =>
      ++attempts < 5 ? LOST_ROUND : 'written',
    );
    expect(outcome).toBe('written');
    expect(attempts).toBe(5);
  });

  it('goes again at once after RETRY_NOW: no timer between the attempts (a timer of 0 ms waits 1 ms or more)', async () => {
    // A timer set before the first attempt fires only once the event loop reaches its timers: an
    // attempt that runs before it followed the last without waiting for one of its own.
    let timerFired = false;
    setTimeout(() => {
      timerFired = true;
    }, 0);
    const firedBeforeAttempt: boolean[] = [];
    const outcome = await whileContended('organization', { organization: 'acme' }, async () => {
      firedBeforeAttempt.push(timerFired);
      return firedBeforeAttempt.length < 3 ? RETRY_NOW : 'deleted';
    });
    expect(outcome).toBe('deleted');
    expect(firedBeforeAttempt).toEqual([false, false, false]);
  });

  it('gives up at once when the deadline leaves no room for another attempt', async () => {
    let attempts = 0;
    const outcome = withStoreDeadline(Date.now() + 10, () =>
      whileContended('run', { runId: 'run-y' }, async () => {
        attempts++;
        return LOST_ROUND;
      }),
    );
    await expect(outcome).rejects.toThrow(/gave up after 1 attempts/);
    expect(attempts).toBe(1);
  });

  it('lets an error through as it is, without trying again', async () => {
    let attempts = 0;
    await expect(
      whileContended('run', { runId: 'run-z' }, async () => {
        attempts++;
        throw new Error('store down');
      }),
    ).rejects.toThrow('store down');
    expect(attempts).toBe(1);
  });
});

/** The EMF lines of the hot-spot metrics written while `work` runs (metrics are on for it). */
async function waitMetrics(work: () => Promise<unknown>): Promise<Array<Record<string, unknown>>> {
  const written: string[] = [];
  const write = process.stdout.write;
  const disabled = process.env.POWERTOOLS_METRICS_DISABLED;
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  process.stdout.write = ((chunk: unknown) => written.push(String(chunk)) > 0) as typeof process.stdout.write;
  try {
    await work().catch(() => undefined);
  } finally {
    process.stdout.write = write;
    if (disabled === undefined) delete process.env.POWERTOOLS_METRICS_DISABLED;
    else process.env.POWERTOOLS_METRICS_DISABLED = disabled;
  }
  return written
    .filter((line) => line.startsWith('{"_aws"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.HotSpotWaits !== undefined);
}

describe('the hot-spot wait metrics', () => {
  // An update's round (read, then a transaction that has a wait of its own) and a delete's are nested waits.
  const nested = (outcomes: Array<'lost' | 'won'>) =>
    whileContended('organization', { organization: 'acme' }, () =>
      whileContended('organization', { organization: 'acme' }, async () =>
        outcomes.shift() === 'lost' ? LOST_ROUND : 'written',
      ),
    );

  it('records nothing for a write that won its first round, nested or not', async () => {
    expect(await waitMetrics(() => nested(['won']))).toEqual([]);
    expect(await waitMetrics(() => whileContended('run', { runId: 'run-x' }, async () => 'written'))).toEqual([]);
  });

  it('records one wait with the attempts made when a round was lost', async () => {
    expect(await waitMetrics(() => nested(['lost', 'lost', 'won']))).toEqual([
      expect.objectContaining({ hotSpot: 'organization', HotSpotWaits: 1, HotSpotAttempts: 3, HotSpotGaveUp: 0 }),
    ]);
  });

  it('records a give-up with every attempt it made', async () => {
    let attempts = 0;
    const gaveUp = () =>
      withStoreDeadline(Date.now() + ROOM_MS + 30, () =>
        whileContended('run', { runId: 'run-y' }, async () => {
          attempts++;
          return LOST_ROUND;
        }),
      );
    expect(await waitMetrics(gaveUp)).toEqual([
      expect.objectContaining({ hotSpot: 'run', HotSpotWaits: 1, HotSpotGaveUp: 1, HotSpotAttempts: attempts }),
    ]);
    expect(attempts).toBeGreaterThanOrEqual(1);
  });
});

/** The handler gives a deadline to the routes that can write (shared/http/handler.ts), and only those wait on hot spots. */
describe('the routes that write', () => {
  it('are every POST, PATCH and DELETE, and the two lists (which write out a change they meet unwritten); no other GET', () => {
    for (const route of routes) {
      expect({ route: route.operationId, writes: route.table.actions.some(isWriteAction) }).toEqual({
        route: route.operationId,
        writes: route.method !== 'GET' || route.function.endsWith('/list'),
      });
    }
  });
});
