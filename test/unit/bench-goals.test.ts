import { describe, expect, it } from '@jest/globals';
import { GOALS, missedGoals, type Figures } from '../bench/goals';

/** What `npm run bench -- --check` judges: a missed goal is a line, and any line makes it exit 1. */
const within: Figures = {
  function: 'comments/create', roundTrips: 1, budget: 1, latencyRatio: 1.0, initRatio: 1.0, initCpuRatio: 1.0, bundleBytes: 400 * 1024,
};

describe('the bench goals', () => {
  it('passes figures inside every goal, limits included', () => {
    expect(missedGoals([within])).toEqual([]);
    expect(missedGoals([{ ...within, latencyRatio: GOALS.latencyRatio, initRatio: GOALS.initRatio, initCpuRatio: GOALS.initCpuRatio, bundleBytes: GOALS.bundleBytes }])).toEqual([]);
  });

  it('names each missed goal with the digit that shows it is over', () => {
    expect(missedGoals([{ ...within, roundTrips: 2, latencyRatio: 1.153, initRatio: 1.175, initCpuRatio: 1.101, bundleBytes: 440 * 1024 }])).toEqual([
      'comments/create: 2 DynamoDB calls > budget 1',
      'comments/create: handler p50 1.153× the bare SDK (goal ≤ 1.15)',
      'comments/create: init 1.175× the minimal bundle in elapsed time (goal ≤ 1.15)',
      'comments/create: init 1.101× the minimal bundle in CPU time (goal ≤ 1.1)',
      'comments/create: bundle 440 KB (goal ≤ 426 KB)',
    ]);
  });

  it('does not judge a warm ratio a function has not got (init-only bundles)', () => {
    expect(missedGoals([{ ...within, function: 'authorizer', latencyRatio: null, roundTrips: 0, budget: 1 }])).toEqual([]);
  });
});
