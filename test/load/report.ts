import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';

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
  /** The rate the run asked for (req/s); absent when none was set. */
  targetRate?: number;
  /** Every answer in the order it came: ms since the function's run began, its latency (ms) and HTTP status. */
  timeline: Array<[atMs: number, latencyMs: number, status: number]>;
}

/** The percentiles a run reports and charts, as far as its samples support each. */
export const PERCENTILES = [0.1, 1, 2.5, 10, 25, 50, 75, 90, 97.5, 99, 99.9, 99.99, 99.999];

/**
 * Latency at each percentile by nearest rank, over the latencies themselves (autocannon's own
 * histogram, under --rate, also holds values it adds for coordinated omission at a 1 ms interval,
 * which would pull every percentile down).
 */
export function percentilesOf(latencies: number[]): Array<[percentile: number, ms: number]> {
  if (latencies.length === 0) return [];
  const sorted = [...latencies].sort((a, b) => a - b);
  return PERCENTILES.map((p) => [p, sorted[Math.max(0, Math.ceil((p * sorted.length) / 100 - 1e-9) - 1)]!]);
}

export const percentile = (r: FunctionResult, p: number) => r.percentiles.find(([q]) => q === p)?.[1] ?? Number.NaN;

/** A function that answered under 90% of the target rate: its latencies were measured under less load than asked. */
export const MISSED_RATE_FRACTION = 0.9;
export const missedRate = (r: FunctionResult) =>
  r.targetRate !== undefined && r.throughput < MISSED_RATE_FRACTION * r.targetRate;

/** Requests over the time they took, not autocannon's mean of per-second counts (a partial last second lowers it). */
export const throughputOf = (requests: number, seconds: number) => (seconds > 0 ? requests / seconds : 0);

export const errorRate = (r: FunctionResult) => (r.requests === 0 ? 0 : (r.non2xx + r.errors) / r.requests);

/** A latency gate: pN at most this many ms (`--max-pN`). */
export interface Gate {
  percentile: number;
  ms: number;
}

/** What the gates and the error-rate threshold find wrong, one line each; none when the run passes. */
export function breachesOf(results: FunctionResult[], gates: Gate[], maxErrorRate: number | undefined): string[] {
  return results.flatMap((r) => [
    // A run that measured nothing passes no threshold.
    ...(r.requests === 0 && (gates.length > 0 || maxErrorRate !== undefined)
      ? [`${r.function}: no request completed`]
      : []),
    ...gates.flatMap(({ percentile: p, ms }) => {
      if (r.requests === 0) return [];
      // Never a percentile the report cannot show: too few answers is a breach of its own, not a pass.
      if (!supported(p, r.samples))
        return [
          `${r.function}: p${p} not judged: ${r.samples} latency samples, p${p} needs ${samplesNeeded(p).toLocaleString('en')}`,
        ];
      const value = percentile(r, p);
      return value > ms ? [`${r.function}: p${p} ${value.toFixed(1)} ms > ${ms} ms`] : [];
    }),
    ...(maxErrorRate !== undefined && errorRate(r) > maxErrorRate
      ? [`${r.function}: error rate ${(errorRate(r) * 100).toFixed(2)}% > ${(maxErrorRate * 100).toFixed(2)}%`]
      : []),
  ]);
}

/**
 * A percentile is shown only when at least 10 samples lie beyond it: above it for the tail, pN
 * needing n >= 10 / (1 - N/100) (p99: 1,000 samples; p99.9: 10,000), and below it at the low end
 * (p1: 1,000 samples). Past that, a handful of requests (or one: the maximum) would be drawn as a
 * distribution.
 */
export const MIN_SAMPLES_ABOVE = 10;
export const supported = (percentile: number, samples: number) =>
  (samples * Math.min(percentile, 100 - percentile)) / 100 >= MIN_SAMPLES_ABOVE - 1e-6;
/** The fewest samples that show pN: 20 for p50, 100 for p90, 1,000 for p99. */
export const samplesNeeded = (percentile: number) =>
  Math.ceil((MIN_SAMPLES_ABOVE * 100) / Math.min(percentile, 100 - percentile) - 1e-6);

export function table(results: FunctionResult[]): string {
  const header = ['function', 'requests', 'seconds', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'non-2xx', 'errors'];
  const rows = results.map((r) => [
    r.function,
    String(r.requests),
    r.seconds.toFixed(1),
    `${r.throughput.toFixed(0)}${missedRate(r) ? ' !' : ''}`,
    shown(r, 50, r.p50),
    shown(r, 90, r.p90),
    shown(r, 99, r.p99),
    String(r.non2xx),
    String(r.errors),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const missed = results.filter(missedRate);
  return [
    line(header),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.map(line),
    `(— : too few samples for that percentile; pN is shown when n >= ${MIN_SAMPLES_ABOVE} / (1 - N/100): p99 needs ${samplesNeeded(99).toLocaleString('en')})`,
    ...(missed.length === 0 ? [] : [`(! : ${missedRateLine(missed)})`]),
  ].join('\n');
}

/** The functions that missed their target rate, in one sentence. */
export function missedRateLine(missed: FunctionResult[]): string {
  const target = missed[0]!.targetRate!;
  return (
    `below ${MISSED_RATE_FRACTION * 100}% of the target rate of ${target} req/s: ${missed.map((r) => `${r.function} ${r.throughput.toFixed(0)} req/s`).join(', ')}; ` +
    'the service (or this machine) could not keep up, and its latencies were measured under less load than asked'
  );
}

/** Where the latencies were measured, for the terminal and the report: never to be read as AWS's own. */
export function latencySource(target: string | undefined): string {
  const cores = cpus().length;
  return target === undefined
    ? `measured by autocannon on this machine (${cores} cores) against the local emulator started for the run (npm start: ` +
        'WAF, API Gateway, Lambda and IAM played by Node.js processes, DynamoDB Local in Java), all sharing those cores with the load ' +
        "generator: these are the emulator's latencies on this machine, not AWS's"
    : `measured by autocannon on this machine (${cores} cores) against ${new URL(target).host}: each includes the network round trip from here`;
}

const ms = (value: number) => value.toFixed(value < 10 ? 2 : 1);
const shown = (r: FunctionResult, percentile: number, value: number) =>
  supported(percentile, r.samples) ? ms(value) : '—';

/** The machine's 1, 5 and 15 minute load averages against its cores: a report that travels alone shows a busy machine. */
export const loadAverage = () =>
  `${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')} (1, 5, 15 min; ${cpus().length} cores)`;

/**
 * What a reader needs to compare two runs: where, on what, from which code, when, and how; the
 * load average taken before the run (`loadBefore`) and now, at its end.
 */
export function runHeader(
  options: Record<string, string | number>,
  loadBefore: string,
): Record<string, string | number> {
  const cpu = cpus();
  const git = (...args: string[]) => {
    try {
      return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return '';
    }
  };
  const commit = git('rev-parse', '--short', 'HEAD');
  const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
  return {
    machine: `${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`,
    node: process.version,
    commit: commit ? `${commit}${dirty ? ' (with uncommitted changes)' : ''}` : 'unknown',
    date: new Date().toISOString(),
    'load average before': loadBefore,
    'load average after': loadAverage(),
    ...options,
  };
}

/** Okabe and Ito's colour-blind-safe palette, less its yellow, which is too faint on white. */
export const PALETTE = ['#E69F00', '#56B4E9', '#009E73', '#0072B2', '#D55E00', '#CC79A7', '#000000'];
/** Past seven functions, colours repeat with a dash pattern, so no two curves look alike. */
const DASHES = ['', '6 3', '2 3'];
const styleOf = (i: number) => ({
  color: PALETTE[i % PALETTE.length]!,
  dash: DASHES[Math.floor(i / PALETTE.length) % DASHES.length]!,
});

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

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
/** The percentile axis: "1 in N requests is slower", on a log scale: p0 at 0, p90 at 1, p99 at 2… */
const rarity = (p: number) => Math.log10(1 / (1 - Math.min(p, 99.999) / 100));
const PERCENTILE_TICKS = [0, 50, 90, 99, 99.9, 99.99, 99.999];
/** Latencies under this are drawn at it on the log axis (autocannon measures whole milliseconds). */
const LOG_FLOOR_MS = 0.1;

interface Plot {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
}
const box = (plot: Plot) => ({
  x0: plot.left,
  x1: plot.width - plot.right,
  y0: plot.height - plot.bottom,
  y1: plot.top,
});

function percentileAxis(plot: Plot, xMax: number): { px(p: number): number; svg: string } {
  const b = box(plot);
  const px = (p: number) => b.x0 + (rarity(p) / xMax) * (b.x1 - b.x0);
  const svg =
    PERCENTILE_TICKS.filter((p) => rarity(p) <= xMax + 1e-9)
      .map(
        (p) =>
          `<line x1="${px(p).toFixed(1)}" x2="${px(p).toFixed(1)}" y1="${b.y1}" y2="${b.y0}" stroke="#ddd"/>` +
          `<text x="${px(p).toFixed(1)}" y="${b.y0 + 16}" font-size="11" text-anchor="middle">p${p}</text>`,
      )
      .join('') +
    `<text class="axis-title" x="${(b.x0 + b.x1) / 2}" y="${plot.height - 6}" font-size="12" text-anchor="middle">percentile (log scale: each step right is 10× rarer)</text>`;
  return { px, svg };
}

function latencyAxis(plot: Plot, ticks: number[], py: (v: number) => number): string {
  const b = box(plot);
  return (
    ticks
      .map(
        (v) =>
          `<line x1="${b.x0}" x2="${b.x1}" y1="${py(v).toFixed(1)}" y2="${py(v).toFixed(1)}" stroke="#ddd"/>` +
          `<text class="tick" x="${b.x0 - 6}" y="${(py(v) + 4).toFixed(1)}" font-size="11" text-anchor="end">${v}</text>`,
      )
      .join('') +
    `<text class="axis-title" transform="translate(14 ${(b.y0 + b.y1) / 2}) rotate(-90)" font-size="12" text-anchor="middle">latency (ms)</text>` +
    `<line x1="${b.x0}" x2="${b.x0}" y1="${b.y1}" y2="${b.y0}" stroke="#000"/><line x1="${b.x0}" x2="${b.x1}" y1="${b.y0}" y2="${b.y0}" stroke="#000"/>`
  );
}

const visible = (r: FunctionResult) => r.percentiles.filter(([p]) => supported(p, r.samples));
/** A line through the points, and a dot on each, so a curve of one supported percentile still shows. */
const curve = (points: string, style: { color: string; dash: string }) =>
  `<polyline fill="none" stroke="${style.color}" stroke-width="2.5"${style.dash ? ` stroke-dasharray="${style.dash}"` : ''} points="${points}"/>` +
  points
    .split(' ')
    .filter(Boolean)
    .map((point) => {
      const [x, y] = point.split(',');
      return `<circle cx="${x}" cy="${y}" r="2.5" fill="${style.color}"/>`;
    })
    .join('');

/** Every function on one log-scale latency axis: fast and slow functions both readable. */
function overview(results: FunctionResult[], xMax: number): string {
  const plot: Plot = { width: 900, height: 380, left: 64, right: 220, top: 16, bottom: 44 };
  const b = box(plot);
  const values = results.flatMap((r) => visible(r).map(([, v]) => Math.max(v, LOG_FLOOR_MS)));
  const ticks = logTicks(Math.min(...values, 1), Math.max(...values, 1));
  const [lo, hi] = [Math.log10(ticks[0]!), Math.log10(ticks.at(-1)!)];
  const py = (v: number) => b.y0 - ((Math.log10(Math.max(v, LOG_FLOOR_MS)) - lo) / (hi - lo || 1)) * (b.y0 - b.y1);
  const x = percentileAxis(plot, xMax);
  const lines = results
    .map((r, i) => {
      const style = styleOf(i);
      const points = visible(r)
        .map(([p, v]) => `${x.px(p).toFixed(1)},${py(v).toFixed(1)}`)
        .join(' ');
      const y = b.y1 + 18 * i + 10;
      return (
        curve(points, style) +
        `<line x1="${b.x1 + 14}" x2="${b.x1 + 40}" y1="${y - 4}" y2="${y - 4}" stroke="${style.color}" stroke-width="2.5"${style.dash ? ` stroke-dasharray="${style.dash}"` : ''}/>` +
        `<text class="legend" x="${b.x1 + 46}" y="${y}" font-size="12">${escapeHtml(r.function)}</text>`
      );
    })
    .join('');
  return (
    `<svg class="overview" xmlns="http://www.w3.org/2000/svg" width="${plot.width}" height="${plot.height}" font-family="system-ui,sans-serif">` +
    `${x.svg}${latencyAxis(plot, ticks, py).replace('latency (ms)', 'latency (ms, log scale)')}${lines}</svg>`
  );
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
  const note =
    points.length === 0
      ? 'no latency samples'
      : `n = ${r.samples.toLocaleString('en')} samples · up to p${highest} · ${r.throughput.toFixed(0)} req/s`;
  return (
    `<figure class="panel"><figcaption><b>${escapeHtml(r.function)}</b><br><small>${note}</small></figcaption>` +
    `<svg xmlns="http://www.w3.org/2000/svg" width="${plot.width}" height="${plot.height}" font-family="system-ui,sans-serif">` +
    `${x.svg}${latencyAxis(plot, ticks, py)}${curve(points.map(([p, v]) => `${x.px(p).toFixed(1)},${py(v).toFixed(1)}`).join(' '), styleOf(i))}</svg></figure>`
  );
}

/** The median of a list (the lower of two middles), or undefined for none. */
export const median = (values: number[]) => {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(sorted.length / 2) - 1]!;
};

/** Most dots one chart draws; past it every n-th answer is drawn, and the slowest 1% always. */
const MAX_DOTS = 5_000;

/**
 * One function over time: every answer as a dot at when it came and how long it took (red: not
 * 2xx), the median of each time bin as a line, and below, the answers per second against the
 * target rate: what a slow percentile or a missed rate was made of (a slow start, a stall, a
 * steady drift).
 */
function timelinePanel(r: FunctionResult, i: number): string {
  const plot = { width: 440, height: 300, left: 60, right: 28, top: 14 };
  const latencyBottom = 190;
  const rateTop = 214;
  const rateBottom = 256;
  const x0 = plot.left;
  const x1 = plot.width - plot.right;
  const style = styleOf(i);
  const spanMs = Math.max(r.seconds * 1000, ...r.timeline.map(([at]) => at), 1);
  const xTicks = linearTicks(spanMs / 1000, 5).filter((t) => t <= spanMs / 1000 + 1e-9);
  const px = (ms: number) => x0 + (ms / spanMs) * (x1 - x0);
  const latencyTicks = linearTicks(Math.max(...r.timeline.map(([, ms]) => ms), 1));
  const latencyTop = latencyTicks.at(-1)!;
  const py = (ms: number) => latencyBottom - (ms / latencyTop) * (latencyBottom - plot.top);

  const slowest = new Set(
    [...r.timeline.keys()]
      .sort((a, b) => r.timeline[b]![1] - r.timeline[a]![1])
      .slice(0, Math.ceil(r.timeline.length / 100)),
  );
  const stride = Math.max(1, Math.ceil(r.timeline.length / MAX_DOTS));
  const dots = r.timeline
    .filter((_, k) => k % stride === 0 || slowest.has(k))
    .map(([at, ms, status]) =>
      status >= 200 && status < 300
        ? `<circle cx="${px(at).toFixed(1)}" cy="${py(ms).toFixed(1)}" r="1.6" fill="${style.color}" fill-opacity="0.45"/>`
        : `<circle class="not-2xx" cx="${px(at).toFixed(1)}" cy="${py(ms).toFixed(1)}" r="2.2" fill="#CC0000"/>`,
    )
    .join('');

  // Bins of a round width: about 20 of them over the run.
  const binMs = Math.max(250, linearTicks(spanMs / 20, 1)[1] ?? 1000);
  const bins = Array.from({ length: Math.ceil(spanMs / binMs) }, (_, b) =>
    r.timeline.filter(([at]) => at >= b * binMs && at < (b + 1) * binMs),
  );
  const medians = bins
    .map(
      (bin, b) => [b, median(bin.filter(([, , status]) => status >= 200 && status < 300).map(([, ms]) => ms))] as const,
    )
    .filter((m): m is readonly [number, number] => m[1] !== undefined)
    .map(([b, ms]) => `${px(Math.min((b + 0.5) * binMs, spanMs)).toFixed(1)},${py(ms).toFixed(1)}`)
    .join(' ');

  const rates = bins.map((bin) => bin.length / (binMs / 1000));
  const rateTicks = linearTicks(Math.max(...rates, (r.targetRate ?? 0) * 1.1, 1), 2);
  const rateTopValue = rateTicks.at(-1)!;
  const ry = (rate: number) => rateBottom - (rate / rateTopValue) * (rateBottom - rateTop);
  const bars = rates
    .map((rate, b) => {
      const left = px(b * binMs);
      const width = Math.max(1, px(Math.min((b + 1) * binMs, spanMs)) - left - 1);
      return `<rect x="${left.toFixed(1)}" y="${ry(rate).toFixed(1)}" width="${width.toFixed(1)}" height="${(rateBottom - ry(rate)).toFixed(1)}" fill="#bbb"/>`;
    })
    .join('');
  const target =
    r.targetRate === undefined
      ? ''
      : `<line class="target-rate" x1="${x0}" x2="${x1}" y1="${ry(r.targetRate).toFixed(1)}" y2="${ry(r.targetRate).toFixed(1)}" stroke="#000" stroke-dasharray="4 3"/>`;

  const grid = latencyTicks
    .map(
      (v) =>
        `<line x1="${x0}" x2="${x1}" y1="${py(v).toFixed(1)}" y2="${py(v).toFixed(1)}" stroke="#eee"/>` +
        `<text class="tick" x="${x0 - 6}" y="${(py(v) + 4).toFixed(1)}" font-size="11" text-anchor="end">${v}</text>`,
    )
    .join('');
  const rateGrid = [rateTicks[0]!, rateTopValue]
    .map((v) => `<text x="${x0 - 6}" y="${(ry(v) + 4).toFixed(1)}" font-size="10" text-anchor="end">${v}</text>`)
    .join('');
  const time = xTicks
    .map(
      (t) =>
        `<line x1="${px(t * 1000).toFixed(1)}" x2="${px(t * 1000).toFixed(1)}" y1="${plot.top}" y2="${rateBottom}" stroke="#f2f2f2"/>` +
        `<text x="${px(t * 1000).toFixed(1)}" y="${rateBottom + 14}" font-size="11" text-anchor="middle">${t}</text>`,
    )
    .join('');
  const axes =
    `<line x1="${x0}" x2="${x0}" y1="${plot.top}" y2="${latencyBottom}" stroke="#000"/><line x1="${x0}" x2="${x1}" y1="${latencyBottom}" y2="${latencyBottom}" stroke="#000"/>` +
    `<line x1="${x0}" x2="${x1}" y1="${rateBottom}" y2="${rateBottom}" stroke="#000"/>` +
    `<text class="axis-title" transform="translate(14 ${(latencyBottom + plot.top) / 2}) rotate(-90)" font-size="12" text-anchor="middle">latency (ms)</text>` +
    `<text class="axis-title" transform="translate(14 ${(rateBottom + rateTop) / 2}) rotate(-90)" font-size="11" text-anchor="middle">req/s</text>` +
    `<text class="axis-title" x="${(x0 + x1) / 2}" y="${plot.height - 4}" font-size="12" text-anchor="middle">seconds into the run</text>`;
  const shownDots = stride === 1 ? 'each dot one answer' : `every ${stride}th answer and the slowest 1%`;
  const note =
    r.timeline.length === 0
      ? 'no answers'
      : `${shownDots} (red: not 2xx) · line: median per ${binMs / 1000} s · bars: answers per second${r.targetRate === undefined ? '' : `, dashed: the target ${r.targetRate} req/s`}`;
  return (
    `<figure class="panel timeline"><figcaption><b>${escapeHtml(r.function)}</b>${missedRate(r) ? ' <span class="missed">below the target rate</span>' : ''}<br><small>${note}</small></figcaption>` +
    `<svg xmlns="http://www.w3.org/2000/svg" width="${plot.width}" height="${plot.height}" font-family="system-ui,sans-serif">` +
    `${time}${grid}${rateGrid}${bars}${target}${dots}` +
    (medians ? `<polyline class="median" fill="none" stroke="#000" stroke-width="1.5" points="${medians}"/>` : '') +
    `${axes}</svg></figure>`
  );
}

/**
 * A self-contained page (no scripts, no network): the run's header, the summary table, every
 * function on one log-scale latency chart, and one panel per function on its own axis; each curve
 * drawn only as far as its sample count supports.
 */
export function html(results: FunctionResult[], header: Record<string, string | number>): string {
  // Whole decades of rarity, so the axis ends on a labelled percentile (p90, p99, p99.9…).
  const xMax = Math.max(
    1,
    Math.ceil(Math.max(0, ...results.flatMap((r) => visible(r).map(([p]) => rarity(p)))) - 1e-9),
  );
  const rows = results
    .map(
      (r) =>
        `<tr${missedRate(r) ? ' class="missed"' : ''}><td>${escapeHtml(r.function)}</td><td>${r.requests}</td><td>${r.seconds.toFixed(1)}</td>` +
        `<td>${r.throughput.toFixed(0)}${missedRate(r) ? ' !' : ''}</td>` +
        `<td>${shown(r, 50, r.p50)}</td><td>${shown(r, 90, r.p90)}</td><td>${shown(r, 99, r.p99)}</td><td>${r.non2xx}</td><td>${r.errors}</td></tr>`,
    )
    .join('');
  const missed = results.filter(missedRate);
  return `<!doctype html><html><head><meta charset="utf-8"><title>Load test ${escapeHtml(String(header.date ?? ''))}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;color:#111}table{border-collapse:collapse}td,th{padding:4px 10px;border-bottom:1px solid #ddd;text-align:right}
td:first-child,th:first-child{text-align:left}dl.run{display:grid;grid-template-columns:max-content auto;gap:2px 12px}dl.run dt{color:#555}dl.run dd{margin:0;font-weight:600}
.panels{display:flex;flex-wrap:wrap;gap:8px}.panel{margin:0}figcaption{margin-left:60px}.timeline figcaption{max-width:370px}
tr.missed td:nth-child(4),span.missed{color:#B00000;font-weight:700}p.missed{color:#B00000}p.source{background:#f4f4f4;padding:6px 10px;max-width:60em}</style></head><body>
<h1>Load test</h1>
<dl class="run">${Object.entries(header)
    .filter(([k]) => k !== 'latencies')
    .map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(String(v))}</dd>`)
    .join('')}</dl>
${header.latencies === undefined ? '' : `<p class="source">Latencies: ${escapeHtml(String(header.latencies))}.</p>`}
<table><tr><th>function</th><th>requests</th><th>seconds</th><th>req/s</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>non-2xx</th><th>errors</th></tr>${rows}</table>
<p class="rule">req/s is requests over the run's actual duration. A percentile pN is shown only when at least ${MIN_SAMPLES_ABOVE} samples lie above it
(n &ge; ${MIN_SAMPLES_ABOVE} / (1 &minus; N/100): p99 needs 1,000 samples, p99.9 10,000); "—" and a curve that stops early mean fewer.
Percentiles are of the 2xx answers' latencies.</p>
${missed.length === 0 ? '' : `<p class="missed">! ${escapeHtml(missedRateLine(missed))}.</p>`}
<h2>All functions</h2>${overview(results, xMax)}
<h2>Per function</h2><div class="panels">${results.map((r, i) => panel(r, i, xMax)).join('')}</div>
<h2>Over time</h2><div class="panels">${results.map((r, i) => timelinePanel(r, i)).join('')}</div>
</body></html>`;
}
