import { describe, expect, it } from '@jest/globals';
import { GOALS, missedGoals, type Figures } from '../bench/goals';

/** What `npm run bench -- --check` judges: a missed goal is a line, and any line makes it exit 1. */
const within: Figures = {
  function: 'comments/create', roundTrips: 1, budget: 1, latencyRatio: 1.0, initRatio: 1.0, initCpuRatio: 1.0, bundleBytes: 400 * 1024,
  coldStartRatio: 0.9, coldStartCpuRatio: 0.9,
};

describe('the bench goals', () => {
  it('passes figures inside every goal, limits included', () => {
    expect(missedGoals([within])).toEqual([]);
    expect(missedGoals([{
      ...within, latencyRatio: GOALS.latencyRatio, initRatio: GOALS.initRatio, initCpuRatio: GOALS.initCpuRatio, bundleBytes: GOALS.bundleBytes,
      coldStartRatio: GOALS.coldStartRatio, coldStartCpuRatio: GOALS.coldStartCpuRatio,
    }])).toEqual([]);
  });

  it('names each missed goal with the digit that shows it is over', () => {
    expect(missedGoals([{
      ...within, roundTrips: 2, latencyRatio: 1.153, initRatio: 1.175, initCpuRatio: 1.101, bundleBytes: 440 * 1024, coldStartRatio: 1.004, coldStartCpuRatio: 1.16,
    }])).toEqual([
      'comments/create: 2 DynamoDB calls > budget 1',
      'comments/create: handler p50 1.153× the bare SDK (goal ≤ 1.15)',
      'comments/create: init 1.175× the floor built alike in elapsed time (goal ≤ 1.15)',
      'comments/create: init 1.101× the floor built alike in CPU time (goal ≤ 1.1)',
      'comments/create: bundle 440 KB (goal ≤ 426 KB)',
      'comments/create: import + first invocation 1.004× the floor as esbuild builds it in elapsed time (goal ≤ 1)',
      'comments/create: import + first invocation 1.160× the floor as esbuild builds it in CPU time (goal ≤ 1)',
    ]);
  });

  it('holds the cold start to the floor as esbuild builds it by default: a whole endpoint no slower than a bare DynamoDB function', () => {
    expect(GOALS.coldStartRatio).toBe(1.0);
    expect(GOALS.coldStartCpuRatio).toBe(1.0);
  });

  it('does not judge a warm ratio a function has not got (init-only bundles)', () => {
    expect(missedGoals([{ ...within, function: 'authorizer', latencyRatio: null, roundTrips: 0, budget: 1 }])).toEqual([]);
  });

  it('holds one function to a goal of its own, the others to the common one', () => {
    const authorizer = { ...within, function: 'authorizer', latencyRatio: null, initRatio: 1.12 };
    expect(missedGoals([authorizer, { ...within, initRatio: 1.12 }], GOALS, { authorizer: { initRatio: 1.1 } })).toEqual([
      'authorizer: init 1.120× the floor built alike in elapsed time (goal ≤ 1.1)',
    ]);
  });

  it('judges a measurement only one function has against its own goal, and shows one without a goal unjudged', () => {
    expect(missedGoals([within], GOALS, {}, [
      { function: 'authorizer', measurement: 'JWT verification per cache miss', value: 0.41, unit: 'ms', goal: 0.5 },
      { function: 'authorizer', measurement: 'JWKS fetch at cold start', value: 0.62, unit: 'ms', goal: 0.5 },
      { function: 'authorizer', measurement: 'JWKS size', value: 2048, unit: 'bytes' },
    ])).toEqual(['authorizer: JWKS fetch at cold start 0.620 ms (goal ≤ 0.5)']);
  });
});
