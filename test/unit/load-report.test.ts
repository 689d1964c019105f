import { describe, expect, it } from '@jest/globals';
import { html, linearTicks, logTicks, runHeader, supported, table, throughputOf, type FunctionResult } from '../load/report';

/** What `npm run load` writes to reports/load-*.html, checked for what a reader relies on. */
const PERCENTILES = [0.1, 1, 10, 50, 90, 97.5, 99, 99.9, 99.99, 99.999];
const result = (name: string, samples: number, base: number): FunctionResult => ({
  function: name, requests: samples, seconds: 10, throughput: samples / 10, p50: base, p90: base * 2, p99: base * 3,
  non2xx: 0, errors: 0, samples, percentiles: PERCENTILES.map((p, i) => [p, base * (1 + i / 3)]),
});
const results = [result('ping', 200_000, 0.5), result('reserved-tag-keys/list', 6_000, 23), result('reserved-tag-keys/create', 2_000, 73),
  result('reserved-tag-keys/update', 3_600, 42), result('reserved-tag-keys/delete', 900, 72), result('comments/list', 14_000, 9),
  result('comments/create', 3_100, 51), result('comments/show', 16_000, 9)];
const page = html(results, runHeader({ target: 'local (npm start)', connections: 16, duration: '10 s per function', rate: '50 req/s' }));
const isRound = (value: number) => value === 0 || /^[125]$/.test(String(Number((value / 10 ** Math.floor(Math.log10(value))).toPrecision(6))));

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
    expect(table([results[4]!])).toMatch(/reserved-tag-keys\/delete +900 +10\.0 +90 +72\.00? +144\.0 +— +0 +0/);
  });

  it('puts ticks on round values: 1, 2 or 5 times a power of ten', () => {
    expect(linearTicks(110.5)).toEqual([0, 50, 100, 150]);
    expect(linearTicks(55.2)).toEqual([0, 20, 40, 60]);
    expect(logTicks(0.3, 240)).toEqual([0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500]);
    const ticksOf = (svg: string) => [...svg.matchAll(/<text class="tick"[^>]*>([\d.]+)<\/text>/g)].map((m) => Number(m[1]));
    // The log axis of the overview: every value is round; each panel's linear axis: a round step from 0.
    const [overview, ...panels] = page.split('<svg').slice(1).filter((svg) => svg.includes('class="tick"'));
    expect(ticksOf(overview!).filter((v) => !isRound(v))).toEqual([]);
    expect(panels).toHaveLength(results.length);
    for (const panel of panels) {
      const ticks = ticksOf(panel);
      const step = ticks[1]! - ticks[0]!;
      expect({ first: ticks[0], roundStep: isRound(step), even: ticks.every((v, i) => Math.abs(v - i * step) < 1e-9) }).toEqual({ first: 0, roundStep: true, even: true });
    }
  });

  it('says where, on what, from which code and how it ran', () => {
    const header = page.slice(page.indexOf('<dl class="run">'), page.indexOf('</dl>'));
    for (const field of ['machine', 'node', 'commit', 'date', 'target', 'connections', 'duration', 'rate']) expect(header).toContain(`<dt>${field}</dt>`);
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
    const overview = page.slice(page.indexOf('<svg class="overview"'), page.indexOf('</svg>', page.indexOf('<svg class="overview"')));
    const styles = [...overview.matchAll(/<polyline fill="none" stroke="(#[0-9A-F]{6})" stroke-width="[\d.]+"( stroke-dasharray="[^"]+")?/g)].map((m) => `${m[1]}${m[2] ?? ''}`);
    expect(styles).toHaveLength(results.length);
    expect(new Set(styles).size).toBe(results.length);
  });
});
