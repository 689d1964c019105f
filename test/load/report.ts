import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';

/** One function's load result, as printed, saved as JSON and charted. */
export interface FunctionResult {
  function: string;
  requests: number;
  /** How long the run actually took (s): a count-bounded run (delete) may end before its duration. */
  seconds: number;
  /** Requests per second over the run's actual duration. */
  throughput: number;
  p50: number;
  p90: number;
  p99: number;
  non2xx: number;
  /** Socket errors and timeouts: requests that got no HTTP answer. */
  errors: number;
  /** Latency samples behind the percentiles. */
  samples: number;
  /** Latency (ms) at each percentile, for the distribution chart. */
  percentiles: Array<[percentile: number, ms: number]>;
}

/** Requests over the time they took, not autocannon's mean of per-second counts (a partial last second lowers it). */
export const throughputOf = (requests: number, seconds: number) => (seconds > 0 ? requests / seconds : 0);

export const errorRate = (r: FunctionResult) => (r.requests === 0 ? 0 : (r.non2xx + r.errors) / r.requests);

/**
 * A percentile is shown only when at least 10 samples lie beyond it: above it for the tail, pN
 * needing n >= 10 / (1 - N/100) (p99: 1,000 samples; p99.9: 10,000), and below it at the low end
 * (p1: 1,000 samples). Past that, a handful of requests (or one: the maximum) would be drawn as a
 * distribution.
 */
export const MIN_SAMPLES_ABOVE = 10;
export const supported = (percentile: number, samples: number) =>
  (samples * Math.min(percentile, 100 - percentile)) / 100 >= MIN_SAMPLES_ABOVE - 1e-6;

export function table(results: FunctionResult[]): string {
  const header = ['function', 'requests', 'seconds', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'non-2xx', 'errors'];
  const rows = results.map((r) => [r.function, String(r.requests), r.seconds.toFixed(1), r.throughput.toFixed(0),
    shown(r, 50, r.p50), shown(r, 90, r.p90), shown(r, 99, r.p99), String(r.non2xx), String(r.errors)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line),
    `(— : too few samples for that percentile; pN is shown when n >= ${MIN_SAMPLES_ABOVE} / (1 - N/100))`].join('\n');
}

const ms = (value: number) => value.toFixed(value < 10 ? 2 : 1);
const shown = (r: FunctionResult, percentile: number, value: number) => (supported(percentile, r.samples) ? ms(value) : '—');

/** What a reader needs to compare two runs: where, on what, from which code, when, and how. */
export function runHeader(options: Record<string, string | number>): Record<string, string | number> {
  const cpu = cpus();
  const git = (...args: string[]) => {
    try { return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(); } catch { return ''; }
  };
  const commit = git('rev-parse', '--short', 'HEAD');
  const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
  return {
    machine: `${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`,
    node: process.version,
    commit: commit ? `${commit}${dirty ? ' (with uncommitted changes)' : ''}` : 'unknown',
    date: new Date().toISOString(),
    ...options,
  };
}

/** Okabe and Ito's colour-blind-safe palette, less its yellow, which is too faint on white. */
export const PALETTE = ['#E69F00', '#56B4E9', '#009E73', '#0072B2', '#D55E00', '#CC79A7', '#000000'];
/** Past seven functions, colours repeat with a dash pattern, so no two curves look alike. */
const DASHES = ['', '6 3', '2 3'];
const styleOf = (i: number) => ({ color: PALETTE[i % PALETTE.length]!, dash: DASHES[Math.floor(i / PALETTE.length) % DASHES.length]! });

/** Round tick values: 1, 2 or 5 times a power of ten, at most about `count` of them from 0 to max. */
export function linearTicks(max: number, count = 5): number[] {
  const raw = Math.max(max, 1e-9) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((d) => d * power).find((s) => s >= raw)!;
  return Array.from({ length: Math.ceil(max / step - 1e-9) + 1 }, (_, i) => Number((i * step).toPrecision(12)));
}

/** 1-2-5 ticks on a log scale, covering [min, max]. */
export function logTicks(min: number, max: number): number[] {
  const ticks: number[] = [];
  for (let power = Math.floor(Math.log10(min)); power <= Math.ceil(Math.log10(max)); power++) {
    for (const d of [1, 2, 5]) ticks.push(Number((d * 10 ** power).toPrecision(12)));
  }
  const first = ticks.findLastIndex((t) => t <= min);
  const last = ticks.findIndex((t) => t >= max);
  return ticks.slice(Math.max(first, 0), last === -1 ? undefined : last + 1);
}

const escape = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
/** The percentile axis: "1 in N requests is slower", on a log scale: p0 at 0, p90 at 1, p99 at 2… */
const rarity = (p: number) => Math.log10(1 / (1 - Math.min(p, 99.999) / 100));
const PERCENTILE_TICKS = [0, 50, 90, 99, 99.9, 99.99, 99.999];
/** Latencies under this are drawn at it on the log axis (autocannon measures whole milliseconds). */
const LOG_FLOOR_MS = 0.1;

interface Plot { width: number; height: number; left: number; right: number; top: number; bottom: number }
const box = (plot: Plot) => ({ x0: plot.left, x1: plot.width - plot.right, y0: plot.height - plot.bottom, y1: plot.top });

function percentileAxis(plot: Plot, xMax: number): { px(p: number): number; svg: string } {
  const b = box(plot);
  const px = (p: number) => b.x0 + (rarity(p) / xMax) * (b.x1 - b.x0);
  const svg = PERCENTILE_TICKS.filter((p) => rarity(p) <= xMax + 1e-9).map((p) =>
    `<line x1="${px(p).toFixed(1)}" x2="${px(p).toFixed(1)}" y1="${b.y1}" y2="${b.y0}" stroke="#ddd"/>` +
    `<text x="${px(p).toFixed(1)}" y="${b.y0 + 16}" font-size="11" text-anchor="middle">p${p}</text>`).join('') +
    `<text class="axis-title" x="${(b.x0 + b.x1) / 2}" y="${plot.height - 6}" font-size="12" text-anchor="middle">percentile (log scale: each step right is 10× rarer)</text>`;
  return { px, svg };
}

function latencyAxis(plot: Plot, ticks: number[], py: (v: number) => number): string {
  const b = box(plot);
  return ticks.map((v) =>
    `<line x1="${b.x0}" x2="${b.x1}" y1="${py(v).toFixed(1)}" y2="${py(v).toFixed(1)}" stroke="#ddd"/>` +
    `<text class="tick" x="${b.x0 - 6}" y="${(py(v) + 4).toFixed(1)}" font-size="11" text-anchor="end">${v}</text>`).join('') +
    `<text class="axis-title" transform="translate(14 ${(b.y0 + b.y1) / 2}) rotate(-90)" font-size="12" text-anchor="middle">latency (ms)</text>` +
    `<line x1="${b.x0}" x2="${b.x0}" y1="${b.y1}" y2="${b.y0}" stroke="#000"/><line x1="${b.x0}" x2="${b.x1}" y1="${b.y0}" y2="${b.y0}" stroke="#000"/>`;
}

const visible = (r: FunctionResult) => r.percentiles.filter(([p]) => supported(p, r.samples));
/** A line through the points, and a dot on each, so a curve of one supported percentile still shows. */
const curve = (points: string, style: { color: string; dash: string }) =>
  `<polyline fill="none" stroke="${style.color}" stroke-width="2.5"${style.dash ? ` stroke-dasharray="${style.dash}"` : ''} points="${points}"/>` +
  points.split(' ').filter(Boolean).map((point) => {
    const [x, y] = point.split(',');
    return `<circle cx="${x}" cy="${y}" r="2.5" fill="${style.color}"/>`;
  }).join('');

/** Every function on one log-scale latency axis: fast and slow functions both readable. */
function overview(results: FunctionResult[], xMax: number): string {
  const plot: Plot = { width: 900, height: 380, left: 64, right: 220, top: 16, bottom: 44 };
  const b = box(plot);
  const values = results.flatMap((r) => visible(r).map(([, v]) => Math.max(v, LOG_FLOOR_MS)));
  const ticks = logTicks(Math.min(...values, 1), Math.max(...values, 1));
  const [lo, hi] = [Math.log10(ticks[0]!), Math.log10(ticks.at(-1)!)];
  const py = (v: number) => b.y0 - ((Math.log10(Math.max(v, LOG_FLOOR_MS)) - lo) / (hi - lo || 1)) * (b.y0 - b.y1);
  const x = percentileAxis(plot, xMax);
  const lines = results.map((r, i) => {
    const style = styleOf(i);
    const points = visible(r).map(([p, v]) => `${x.px(p).toFixed(1)},${py(v).toFixed(1)}`).join(' ');
    const y = b.y1 + 18 * i + 10;
    return curve(points, style) +
      `<line x1="${b.x1 + 14}" x2="${b.x1 + 40}" y1="${y - 4}" y2="${y - 4}" stroke="${style.color}" stroke-width="2.5"${style.dash ? ` stroke-dasharray="${style.dash}"` : ''}/>` +
      `<text class="legend" x="${b.x1 + 46}" y="${y}" font-size="12">${escape(r.function)}</text>`;
  }).join('');
  return `<svg class="overview" xmlns="http://www.w3.org/2000/svg" width="${plot.width}" height="${plot.height}" font-family="system-ui,sans-serif">` +
    `${x.svg}${latencyAxis(plot, ticks, py).replace('latency (ms)', 'latency (ms, log scale)')}${lines}</svg>`;
}

/** One function: its own linear latency axis from 0, so its shape is readable whatever the others do. */
function panel(r: FunctionResult, i: number, xMax: number): string {
  const plot: Plot = { width: 440, height: 240, left: 60, right: 28, top: 14, bottom: 44 };
  const b = box(plot);
  const points = visible(r);
  const ticks = linearTicks(Math.max(...points.map(([, v]) => v), 1));
  const top = ticks.at(-1)!;
  const py = (v: number) => b.y0 - (v / top) * (b.y0 - b.y1);
  const x = percentileAxis(plot, xMax);
  const highest = points.at(-1)?.[0];
  const note = points.length === 0 ? 'no latency samples' :
    `n = ${r.samples.toLocaleString('en')} samples · up to p${highest} · ${r.throughput.toFixed(0)} req/s`;
  return `<figure class="panel"><figcaption><b>${escape(r.function)}</b><br><small>${note}</small></figcaption>` +
    `<svg xmlns="http://www.w3.org/2000/svg" width="${plot.width}" height="${plot.height}" font-family="system-ui,sans-serif">` +
    `${x.svg}${latencyAxis(plot, ticks, py)}${curve(points.map(([p, v]) => `${x.px(p).toFixed(1)},${py(v).toFixed(1)}`).join(' '), styleOf(i))}</svg></figure>`;
}

/**
 * A self-contained page (no scripts, no network): the run's header, the summary table, every
 * function on one log-scale latency chart, and one panel per function on its own axis; each curve
 * drawn only as far as its sample count supports.
 */
export function html(results: FunctionResult[], header: Record<string, string | number>): string {
  // Whole decades of rarity, so the axis ends on a labelled percentile (p90, p99, p99.9…).
  const xMax = Math.max(1, Math.ceil(Math.max(0, ...results.flatMap((r) => visible(r).map(([p]) => rarity(p)))) - 1e-9));
  const rows = results.map((r) => `<tr><td>${escape(r.function)}</td><td>${r.requests}</td><td>${r.seconds.toFixed(1)}</td><td>${r.throughput.toFixed(0)}</td>` +
    `<td>${shown(r, 50, r.p50)}</td><td>${shown(r, 90, r.p90)}</td><td>${shown(r, 99, r.p99)}</td><td>${r.non2xx}</td><td>${r.errors}</td></tr>`).join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Load test ${escape(String(header.date ?? ''))}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;color:#111}table{border-collapse:collapse}td,th{padding:4px 10px;border-bottom:1px solid #ddd;text-align:right}
td:first-child,th:first-child{text-align:left}dl.run{display:grid;grid-template-columns:max-content auto;gap:2px 12px}dl.run dt{color:#555}dl.run dd{margin:0;font-weight:600}
.panels{display:flex;flex-wrap:wrap;gap:8px}.panel{margin:0}figcaption{margin-left:60px}</style></head><body>
<h1>Load test</h1>
<dl class="run">${Object.entries(header).map(([k, v]) => `<dt>${escape(k)}</dt><dd>${escape(String(v))}</dd>`).join('')}</dl>
<table><tr><th>function</th><th>requests</th><th>seconds</th><th>req/s</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>non-2xx</th><th>errors</th></tr>${rows}</table>
<p class="rule">req/s is requests over the run's actual duration. A percentile pN is shown only when at least ${MIN_SAMPLES_ABOVE} samples lie above it
(n &ge; ${MIN_SAMPLES_ABOVE} / (1 &minus; N/100): p99 needs 1,000 samples, p99.9 10,000); "—" and a curve that stops early mean fewer.</p>
<h2>All functions</h2>${overview(results, xMax)}
<h2>Per function</h2><div class="panels">${results.map((r, i) => panel(r, i, xMax)).join('')}</div>
</body></html>`;
}
