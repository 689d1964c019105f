import { describe, expect, it } from '@jest/globals';
import { runToEnd, TSX } from '../support/processes';
import { expectWith } from '../support/expect-with';

/** `npm run store-burst` as a maintainer runs it: its own DynamoDB Local, writers in their own processes, a line per burst. */
const storeBurst = (args: string[]) =>
  runToEnd([TSX, 'test/load/store-burst.ts', ...args], { TABLE_NAME: undefined, AWS_ENDPOINT_URL_DYNAMODB: undefined });

describe('npm run store-burst', () => {
  it('creates one comment per writer at once and reports what each burst sent', async () => {
    const { code, output } = await storeBurst(['--writers', '3', '--bursts', '2', '--warm-ups', '1']);
    expectWith(code, output).toBe(0);
    for (const burst of [1, 2]) {
      expect(output).toMatch(
        new RegExp(`^burst ${burst}: 3 created \\(median \\d+ ms\\); last answer at \\d+ ms$`, 'm'),
      );
    }
    // Each writer's two writes before the commit and its commit, at least.
    const sent = [
      ...output.matchAll(/calls per writer \(median latency\): put ([\d.]+) .*commit ([\d.]+) .*; (\d+) in all/g),
    ];
    expect(sent).toHaveLength(2);
    for (const [, puts, commits, total] of sent) {
      expect(Number(puts)).toBeGreaterThanOrEqual(2);
      expect(Number(commits)).toBeGreaterThanOrEqual(1);
      expect(Number(total)).toBeGreaterThanOrEqual(9);
    }
  }, 120_000);

  it('refuses a count that is not a positive whole number, or an unknown flag, with its usage and exit code 2', async () => {
    for (const args of [['--writers', '0'], ['--bursts', 'two'], ['--warm-ups=-1'], ['--writer', '3']]) {
      const { code, output } = await storeBurst(args);
      expectWith(code, output).toBe(2);
      expect(output).toMatch(/^store-burst: [^\n]+\n\nUsage: npm run store-burst/);
    }
  }, 60_000);
});
