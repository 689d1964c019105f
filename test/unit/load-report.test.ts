import { describe, expect, it } from '@jest/globals';
import {
  breachesOf,
  html,
  latencySource,
  linearTicks,
  loadAverage,
  logTicks,
  missedRate,
  percentilesOf,
  runHeader,
  samplesNeeded,
  supported,
  table,
  throughputOf,
  type FunctionResult,
} from '../load/report';
import { apiUrlOf } from '../load/target';

/** What `npm run load` writes to reports/load-*.html, checked for what a reader relies on. */
const PERCENTILES = [0.1, 1, 10, 50, 90, 97.5, 99, 99.9, 99.99, 99.999];
/** `samples` answers spread evenly over 10 s, every 50th a 404 in the first second. */
const timelineOf = (samples: number, base: number): FunctionResult['timeline'] =>
  Array.from({ length: samples }, (_, k) => [
    Math.round((k * 10_000) / samples),
    base * (1 + (k % 7) / 3),
    k % 50 === 0 && k * 10 < samples ? 404 : 200,
  ]);
const result = (name: string, samples: number, base: number, throughput = 50): FunctionResult => ({
  function: name,
  requests: samples,
  seconds: 10,
  throughput,
  p50: base,
  p90: base * 2,
  p99: base * 3,
  non2xx: 0,
  errors: 0,
  samples,
  percentiles: PERCENTILES.map((p, i) => [p, base * (1 + i / 3)]),
  targetRate: 50,
  timeline: timelineOf(Math.min(samples, 3_000), base),
});
const results = [
  result('ping', 200_000, 0.5),
  result('reserved-tag-keys/list', 6_000, 23),
  result('reserved-tag-keys/create', 2_000, 73, 24),
  result('reserved-tag-keys/update', 3_600, 42),
  result('reserved-tag-keys/delete', 900, 72),
  result('comments/list', 14_000, 9),
  result('comments/create', 3_100, 51),
  result('comments/show', 16_000, 9),
];
const page = html(
  results,
  runHeader(
    {
      target: 'local (npm start)',
      latencies: latencySource(undefined),
      connections: 16,
      duration: '10 s per function',
      'target rate': '50 req/s',
    },
    loadAverage(),
  ),
);
const isRound = (value: number) =>
  value === 0 || /^[125]$/.test(String(Number((value / 10 ** Math.floor(Math.log10(value))).toPrecision(6))));

describe('load report', () => {
  it('counts a count-bounded run over the time it took', () => {
    // The delete run of the issue: 2,156 deletes in 12.5 s is 172 req/s, not a per-second mean of 117.
    expect(Math.round(throughputOf(2156, 12.5))).toBe(172);
    expect(throughputOf(0, 0)).toBe(0);
  });

  it('shows a percentile only when at least 10 samples lie above it', () => {
    expect(supported(99, 999)).toBe(false);
    expect(supported(99, 1000)).toBe(true);
    expect(supported(99.9, 9_999)).toBe(false);
    expect(supported(99.9, 10_000)).toBe(true);
    expect(supported(1, 999)).toBe(false);
    expect(supported(1, 1_000)).toBe(true);
    expect(table([results[4]!])).toMatch(/reserved-tag-keys\/delete +900 +10\.0 +50 +72\.00? +144\.0 +— +0 +0/);
    expect([50, 90, 99, 99.9].map(samplesNeeded)).toEqual([20, 100, 1_000, 10_000]);
    for (const p of [50, 90, 99])
      expect([supported(p, samplesNeeded(p) - 1), supported(p, samplesNeeded(p))]).toEqual([false, true]);
  });

  it('computes percentiles by nearest rank over the latencies themselves', () => {
    const latencies = Array.from({ length: 1_000 }, (_, k) => k + 1); // 1…1000 ms
    const at = Object.fromEntries(percentilesOf(latencies));
    expect([at[50], at[90], at[99], at[99.9]]).toEqual([500, 900, 990, 999]);
    expect(percentilesOf([])).toEqual([]);
  });

  it('puts ticks on round values: 1, 2 or 5 times a power of ten', () => {
    expect(linearTicks(110.5)).toEqual([0, 50, 100, 150]);
    expect(linearTicks(55.2)).toEqual([0, 20, 40, 60]);
    expect(logTicks(0.3, 240)).toEqual([0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500]);
    const ticksOf = (svg: string) =>
      [...svg.matchAll(/<text class="tick"[^>]*>([\d.]+)<\/text>/g)].map((m) => Number(m[1]));
    // The log axis of the overview: every value is round; each panel's linear axis: a round step from 0.
    const [overview, ...panels] = page
      .split('<svg')
      .slice(1)
      .filter((svg) => svg.includes('class="tick"') && !svg.includes('seconds into the run'));
    expect(ticksOf(overview!).filter((v) => !isRound(v))).toEqual([]);
    expect(panels).toHaveLength(results.length);
    for (const panel of panels) {
      const ticks = ticksOf(panel);
      const step = ticks[1]! - ticks[0]!;
      expect({
        first: ticks[0],
        roundStep: isRound(step),
        even: ticks.every((v, i) => Math.abs(v - i * step) < 1e-9),
      }).toEqual({ first: 0, roundStep: true, even: true });
    }
  });

  it('says where, on what, from which code and how it ran', () => {
    const header = page.slice(page.indexOf('<dl class="run">'), page.indexOf('</dl>'));
    for (const field of [
      'machine',
      'node',
      'commit',
      'date',
      'load average before',
      'load average after',
      'target',
      'connections',
      'duration',
      'target rate',
    ])
      expect(header).toContain(`<dt>${field}</dt>`);
    // A run on a busy machine says so: the load averages beside the cores they load.
    expect(header).toMatch(
      /<dt>load average before<\/dt><dd>\d+\.\d\d \d+\.\d\d \d+\.\d\d \(1, 5, 15 min; \d+ cores\)<\/dd>/,
    );
    expect(header).toMatch(/<dd>[^<]+, \d+ cores, \d+ GiB<\/dd>/);
    expect(header).toContain(`<dd>${process.version}</dd>`);
    expect(page).toContain('A percentile pN is shown only when at least 10 samples lie above it');
  });

  it('draws one panel per function, every curve only as far as its samples support, with titled axes', () => {
    const panels = page.split('<figure class="panel">').slice(1);
    expect(panels).toHaveLength(results.length);
    panels.forEach((panel, i) => {
      const r = results[i]!;
      expect(panel).toContain(`<b>${r.function}</b>`);
      const points = /<polyline[^>]* points="([^"]*)"/.exec(panel)![1]!.split(' ');
      expect(points).toHaveLength(PERCENTILES.filter((p) => supported(p, r.samples)).length);
      expect(panel).toContain('latency (ms)');
      expect(panel).toContain('percentile (log scale');
    });
    expect(page).toContain('latency (ms, log scale)');
  });

  it('gives every function a curve style of its own', () => {
    const overview = page.slice(
      page.indexOf('<svg class="overview"'),
      page.indexOf('</svg>', page.indexOf('<svg class="overview"')),
    );
    const styles = [
      ...overview.matchAll(
        /<polyline fill="none" stroke="(#[0-9A-F]{6})" stroke-width="[\d.]+"( stroke-dasharray="[^"]+")?/g,
      ),
    ].map((m) => `${m[1]}${m[2] ?? ''}`);
    expect(styles).toHaveLength(results.length);
    expect(new Set(styles).size).toBe(results.length);
  });

  it('says where the latencies come from: the emulator on this machine, or the network to a deployed target', () => {
    expect(latencySource(undefined)).toMatch(
      /^measured by autocannon on this machine \(\d+ cores\) against the local emulator .*: these are the emulator's latencies on this machine, not AWS's$/,
    );
    expect(latencySource('https://abc.execute-api.eu-west-1.amazonaws.com/prod/api/v2')).toContain(
      'against abc.execute-api.eu-west-1.amazonaws.com: each includes the network round trip from here',
    );
    expect(page).toContain(`<p class="source">Latencies: ${latencySource(undefined)}.</p>`);
  });

  it('flags a function under 90% of the target rate, in the table and the report', () => {
    expect(results.filter(missedRate).map((r) => r.function)).toEqual(['reserved-tag-keys/create']);
    expect(missedRate({ ...results[0]!, throughput: 45 })).toBe(false);
    const printed = table(results);
    expect(printed).toMatch(/reserved-tag-keys\/create +2000 +10\.0 +24 ! /);
    expect(printed).toContain('(! : below 90% of the target rate of 50 req/s: reserved-tag-keys/create 24 req/s;');
    expect(page).toMatch(
      /<tr class="missed"><td>reserved-tag-keys\/create<\/td><td>2000<\/td><td>10\.0<\/td><td>24 !<\/td>/,
    );
    expect(page).toContain(
      '<p class="missed">! below 90% of the target rate of 50 req/s: reserved-tag-keys/create 24 req/s;',
    );
  });

  it('draws each function over time: every answer a dot (non-2xx red), a median line, and answers per second against the target', () => {
    const timelines = page.split('<figure class="panel timeline">').slice(1);
    expect(timelines).toHaveLength(results.length);
    timelines.forEach((panel, i) => {
      const r = results[i]!;
      expect(panel).toContain(`<b>${r.function}</b>`);
      const dots = panel.match(/<circle /g) ?? [];
      expect(dots).toHaveLength(r.timeline.length);
      expect(panel.match(/<circle class="not-2xx"/g) ?? []).toHaveLength(
        r.timeline.filter(([, , status]) => status !== 200).length,
      );
      expect(panel).toMatch(/<polyline class="median"/);
      expect(panel).toContain('class="target-rate"');
      for (const title of ['latency (ms)', 'seconds into the run', 'req/s']) expect(panel).toContain(title);
    });
    expect(timelines[2]).toContain('<span class="missed">below the target rate</span>');
  });

  it('never judges a percentile the report cannot show: too few samples is a breach, not a pass', () => {
    const few = result('comments/show', 640, 9);
    expect(breachesOf([few], [{ percentile: 99, ms: 1_000 }], undefined)).toEqual([
      'comments/show: p99 not judged: 640 latency samples, p99 needs 1,000',
    ]);
    expect(breachesOf([few], [{ percentile: 90, ms: 1_000 }], undefined)).toEqual([]);
    expect(breachesOf([few], [{ percentile: 50, ms: 5 }], undefined)).toEqual(['comments/show: p50 18.0 ms > 5 ms']);
    expect(breachesOf([{ ...few, requests: 0, samples: 0 }], [{ percentile: 50, ms: 5 }], undefined)).toEqual([
      'comments/show: no request completed',
    ]);
  });
});

describe('a --target', () => {
  it('is the address clients are given, with or without /api/v2, as npm run smoke takes it', () => {
    for (const given of [
      'https://tfe.example.com',
      'https://tfe.example.com/',
      'https://tfe.example.com/api/v2',
      'https://tfe.example.com/api/v2/',
    ]) {
      expect(apiUrlOf(given)).toBe('https://tfe.example.com/api/v2');
    }
  });
});
