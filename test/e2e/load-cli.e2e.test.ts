import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runToEnd, TSX } from '../support/processes';
import { expectWith } from '../support/expect-with';

/** `npm run load` as a user runs it: its own local stack, reports, thresholds and exit codes. */
const load = (args: string[], reportDir: string) =>
  runToEnd([TSX, 'test/load/run.ts', ...args, '--report-dir', reportDir], {
    TABLE_NAME: undefined,
    AWS_ENDPOINT_URL_DYNAMODB: undefined,
  });

describe('npm run load', () => {
  it('loads the named functions, writes JSON and HTML reports, and exits 1 when a threshold is breached', async () => {
    const reports = mkdtempSync(join(tmpdir(), 'tfc-load-'));
    // 2 s: a key create's first request meets a cold function and an organization new to it.
    const ok = await load(
      ['comments/show', 'reserved-tag-keys/create', '--duration', '2', '--connections', '2', '--max-error-rate', '0'],
      reports,
    );
    expectWith(ok.code, ok.output).toBe(0);
    expect(ok.output).toMatch(/comments\/show\s+\d+\s+\d+/);
    expect(ok.output).toMatch(/Cleaning up: deleted \d+ keys/);
    const json = JSON.parse(
      readFileSync(join(reports, readdirSync(reports).find((f) => f.endsWith('.json'))!), 'utf8'),
    );
    expect(json.results.map((r: { function: string }) => r.function)).toEqual([
      'comments/show',
      'reserved-tag-keys/create',
    ]);
    for (const result of json.results) {
      expect(result.requests).toBeGreaterThan(0);
      expect(result.non2xx + result.errors).toBe(0);
      expect(result.percentiles['50']).toBe(result.p50);
    }
    for (const result of json.results) {
      // Every answer on the timeline, the percentiles taken from its 2xx latencies.
      expect(result.timeline).toHaveLength(result.requests);
      expect(result.samples).toBe(
        result.timeline.filter(([, , status]: number[]) => status! >= 200 && status! < 300).length,
      );
      expect(result.targetRate).toBe(50);
      expect(typeof result.belowTargetRate).toBe('boolean');
    }
    expect(json.latencies).toMatch(/against the local emulator .* not AWS's$/);
    expect(json['load average before']).toMatch(/^\d+\.\d\d \d+\.\d\d \d+\.\d\d \(1, 5, 15 min; \d+ cores\)$/);
    expect(json['load average after']).toMatch(/^\d+\.\d\d /);
    expect(ok.output).toContain('Latencies: measured by autocannon on this machine');
    const html = readFileSync(join(reports, readdirSync(reports).find((f) => f.endsWith('.html'))!), 'utf8');
    expect(html).toContain('<svg');
    // One curve per function on the overview, one panel per function with its own, and one over time
    // (with its median line).
    expect(html.match(/<figure class="panel">/g)).toHaveLength(2);
    expect(html.match(/<figure class="panel timeline">/g)).toHaveLength(2);
    expect(html.match(/<polyline/g)).toHaveLength(6);
    expect(html).toContain('<p class="source">Latencies: measured by autocannon on this machine');

    const breached = await load(
      ['comments/show', '--duration', '1', '--connections', '2', '--max-p50', '0'],
      mkdtempSync(join(tmpdir(), 'tfc-load-')),
    );
    expect(breached.code).toBe(1);
    expect(breached.output).toMatch(/Thresholds breached:\n\s+comments\/show: p50 [\d.]+ ms > 0 ms/);
  }, 120_000);

  it('refuses a percentile gate the run cannot sample enough for, before it starts anything (exit 2)', async () => {
    const result = await load(
      ['comments/show', '--duration', '10', '--max-p99', '500'],
      mkdtempSync(join(tmpdir(), 'tfc-load-')),
    );
    expect(result.code).toBe(2);
    expect(result.output).toContain(
      '--max-p99 needs at least 1,000 latency samples per function for p99 to be shown and judged, ' +
        'and --duration 10 at --rate 50 gives at most 500: run for --duration 22 or more.',
    );
    expect(result.output).not.toContain('Starting the local stack');
  });

  it('refuses unknown functions with its usage (exit 2)', async () => {
    const result = await load(['no/such-function'], mkdtempSync(join(tmpdir(), 'tfc-load-')));
    expect(result.code).toBe(2);
    expect(result.output).toContain('Unknown function: no/such-function');
  });
});
