/** One function's load result, as printed, saved as JSON and charted. */
export interface FunctionResult {
  function: string;
  requests: number;
  /** Mean requests per second over the run. */
  throughput: number;
  p50: number;
  p90: number;
  p99: number;
  non2xx: number;
  /** Socket errors and timeouts: requests that got no HTTP answer. */
  errors: number;
  /** Latency (ms) at each percentile, for the distribution chart. */
  percentiles: Array<[percentile: number, ms: number]>;
}

export const errorRate = (r: FunctionResult) => (r.requests === 0 ? 0 : (r.non2xx + r.errors) / r.requests);

export function table(results: FunctionResult[]): string {
  const header = ['function', 'requests', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'non-2xx', 'errors'];
  const rows = results.map((r) => [r.function, String(r.requests), r.throughput.toFixed(0), ms(r.p50), ms(r.p90), ms(r.p99), String(r.non2xx), String(r.errors)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const ms = (value: number) => value.toFixed(value < 10 ? 2 : 1);

const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
const escape = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A self-contained page (no scripts, no network): the summary table and, per function, its latency
 * distribution as a percentile curve on a log scale of "1 in N requests is slower".
 */
export function html(results: FunctionResult[], meta: Record<string, string | number>): string {
  const width = 860, height = 360, left = 60, bottom = 40, top = 20, right = 210;
  const xs = (p: number) => Math.log10(1 / (1 - Math.min(p, 99.999) / 100)); // 0 at p0, 1 at p90, 2 at p99…
  const xMax = 5;
  const yMax = Math.max(1, ...results.flatMap((r) => r.percentiles.map(([, v]) => v))) * 1.05;
  const px = (p: number) => left + (xs(p) / xMax) * (width - left - right);
  const py = (v: number) => height - bottom - (v / yMax) * (height - bottom - top);
  const curves = results.map((r, i) => {
    const color = COLORS[i % COLORS.length];
    const points = r.percentiles.map(([p, v]) => `${px(p).toFixed(1)},${py(v).toFixed(1)}`).join(' ');
    return `<polyline fill="none" stroke="${color}" stroke-width="2" points="${points}"/>` +
      `<text x="${width - right + 10}" y="${top + 16 * i + 10}" fill="${color}" font-size="12">${escape(r.function)}</text>`;
  }).join('');
  const xTicks = [0, 50, 90, 99, 99.9, 99.99, 99.999].map((p) =>
    `<line x1="${px(p)}" x2="${px(p)}" y1="${top}" y2="${height - bottom}" stroke="#eee"/><text x="${px(p)}" y="${height - bottom + 16}" font-size="11" text-anchor="middle">p${p}</text>`).join('');
  const yTicks = Array.from({ length: 6 }, (_, i) => (yMax * i) / 5).map((v) =>
    `<line x1="${left}" x2="${width - right}" y1="${py(v)}" y2="${py(v)}" stroke="#eee"/><text x="${left - 6}" y="${py(v) + 4}" font-size="11" text-anchor="end">${ms(v)}</text>`).join('');
  const rows = results.map((r) => `<tr><td>${escape(r.function)}</td><td>${r.requests}</td><td>${r.throughput.toFixed(0)}</td><td>${ms(r.p50)}</td><td>${ms(r.p90)}</td><td>${ms(r.p99)}</td><td>${r.non2xx}</td><td>${r.errors}</td></tr>`).join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Load test</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:4px 10px;border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child{text-align:left}</style></head><body>
<h1>Load test</h1><p>${Object.entries(meta).map(([k, v]) => `${escape(k)}: <b>${escape(String(v))}</b>`).join(' · ')}</p>
<table><tr><th>function</th><th>requests</th><th>req/s</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>non-2xx</th><th>errors</th></tr>${rows}</table>
<h2>Latency distribution</h2><p>Latency (ms) at each percentile; further right is rarer.</p>
<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="system-ui,sans-serif">${xTicks}${yTicks}
<line x1="${left}" x2="${left}" y1="${top}" y2="${height - bottom}" stroke="#333"/><line x1="${left}" x2="${width - right}" y1="${height - bottom}" y2="${height - bottom}" stroke="#333"/>${curves}</svg>
</body></html>`;
}
