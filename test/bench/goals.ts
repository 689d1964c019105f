/**
 * The bench's goals, and the one judgment `npm run bench -- --check` makes of its figures: every
 * missed goal as a line (none: every goal met, exit 0; any: exit 1).
 */
export const GOALS = { latencyRatio: 1.15, initRatio: 1.15, initCpuRatio: 1.1, bundleBytes: 426 * 1024 };

/** One function's figures; a function measured only at init has no round trips or warm ratio. */
export interface Figures {
  function: string;
  roundTrips: number;
  budget: number;
  latencyRatio: number | null;
  initRatio: number;
  initCpuRatio: number;
  bundleBytes: number;
}

/** A missed goal's figure with the digit that shows it is over (1.153 is not "1.15 > 1.15"). */
const over = (v: number) => v.toFixed(3);
/** Bytes as whole KB, as the bench prints sizes. */
export const kb = (bytes: number) => (bytes / 1024).toFixed(0);

export function missedGoals(figures: Figures[], goals = GOALS): string[] {
  return figures.flatMap((r) => [
    ...(r.roundTrips > r.budget ? [`${r.function}: ${r.roundTrips} DynamoDB calls > budget ${r.budget}`] : []),
    ...(r.latencyRatio !== null && r.latencyRatio > goals.latencyRatio ? [`${r.function}: handler p50 ${over(r.latencyRatio)}× the bare SDK (goal ≤ ${goals.latencyRatio})`] : []),
    ...(r.initRatio > goals.initRatio ? [`${r.function}: init ${over(r.initRatio)}× the minimal bundle in elapsed time (goal ≤ ${goals.initRatio})`] : []),
    ...(r.initCpuRatio > goals.initCpuRatio ? [`${r.function}: init ${over(r.initCpuRatio)}× the minimal bundle in CPU time (goal ≤ ${goals.initCpuRatio})`] : []),
    ...(r.bundleBytes > goals.bundleBytes ? [`${r.function}: bundle ${kb(r.bundleBytes)} KB (goal ≤ ${goals.bundleBytes / 1024} KB)`] : []),
  ]);
}
