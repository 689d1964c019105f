/**
 * The bench's goals, and the one judgment `npm run bench -- --check` makes of its figures: every
 * missed goal as a line (none: every goal met, exit 0; any: exit 1).
 * Cold start (issue 28): import plus first invocation at or below the floor (a bare DynamoDB
 * function making one GetItem) as esbuild builds it by default, in elapsed and in CPU time.
 */
export const GOALS = {
  /**
   * Warm (issue 37 item 12): the handler's CPU time per request above the bare SDK sending the same
   * requests, in ms: the median of three runs in one process. The elapsed p50 ratio is printed, not
   * judged: against DynamoDB Local it measures Java's speed as much as the handler's.
   */
  warmCpuOverMs: 0.4,
  initRatio: 1.15,
  initCpuRatio: 1.1,
  bundleBytes: 426 * 1024,
  coldStartRatio: 1.0,
  coldStartCpuRatio: 1.0,
};
export type Goals = typeof GOALS;

/**
 * A function held to a stricter (or looser) goal than the others, with why: the authorizer's init
 * with its identity provider in, say. None today.
 */
export const FUNCTION_GOALS: Record<string, Partial<Goals>> = {};

/**
 * Write units per create (issue 35 item 7), for items under 1 KB, the Expiry index's entry for the
 * receipt included: as DynamoDB Local reports them (ReturnConsumedCapacity), the index's added from
 * the items written where it reports none (test/bench/capacity.ts).
 */
export const WRITE_UNIT_GOALS: Record<string, number> = { 'comments/create': 5, 'reserved-tag-keys/create': 6 };

/** One function's figures; a function measured only at init has no round trips or warm figures. */
export interface Figures {
  function: string;
  roundTrips: number;
  budget: number;
  /** Elapsed handler p50 over the bare SDK's: printed, not judged. */
  latencyRatio: number | null;
  /** The handler's CPU per request above the bare SDK's, ms (median of three runs); null without a warm measurement. */
  warmCpuOverMs: number | null;
  /** Write units per request, the index's included; null where not measured. */
  writeUnits?: number | null;
  initRatio: number;
  initCpuRatio: number;
  bundleBytes: number;
  /** Import plus first invocation against the floor as esbuild builds it by default. */
  coldStartRatio: number;
  coldStartCpuRatio: number;
}

/**
 * A figure only some functions have (test/bench/extras.ts), with the goal it is held to if any:
 * the authorizer's JWT verification per cache miss, what a JWKS fetch adds to its cold start.
 */
export interface ExtraFigure {
  function: string;
  measurement: string;
  value: number;
  unit: string;
  goal?: number;
}

/** A missed goal's figure with the digit that shows it is over (1.153 is not "1.15 > 1.15"). */
const over = (v: number) => v.toFixed(3);
/** Bytes as whole KB, as the bench prints sizes. */
export const kb = (bytes: number) => (bytes / 1024).toFixed(0);

export function missedGoals(
  figures: Figures[],
  goals = GOALS,
  functionGoals = FUNCTION_GOALS,
  extras: ExtraFigure[] = [],
  writeUnitGoals = WRITE_UNIT_GOALS,
): string[] {
  return [
    ...figures.flatMap((r) => {
      const g = { ...goals, ...functionGoals[r.function] };
      return [
        ...(r.roundTrips > r.budget ? [`${r.function}: ${r.roundTrips} DynamoDB calls > budget ${r.budget}`] : []),
        ...(r.warmCpuOverMs !== null && r.warmCpuOverMs > g.warmCpuOverMs
          ? [
              `${r.function}: handler CPU ${over(r.warmCpuOverMs)} ms per request above the bare SDK (goal ≤ ${g.warmCpuOverMs} ms)`,
            ]
          : []),
        ...(writeUnitGoals[r.function] !== undefined &&
        r.writeUnits != null &&
        r.writeUnits > writeUnitGoals[r.function]!
          ? [`${r.function}: ${r.writeUnits} write units per request (goal ≤ ${writeUnitGoals[r.function]})`]
          : []),
        ...(writeUnitGoals[r.function] !== undefined && r.writeUnits === null
          ? [`${r.function}: write units not measured (goal ≤ ${writeUnitGoals[r.function]})`]
          : []),
        ...(r.initRatio > g.initRatio
          ? [`${r.function}: init ${over(r.initRatio)}× the floor built alike in elapsed time (goal ≤ ${g.initRatio})`]
          : []),
        ...(r.initCpuRatio > g.initCpuRatio
          ? [
              `${r.function}: init ${over(r.initCpuRatio)}× the floor built alike in CPU time (goal ≤ ${g.initCpuRatio})`,
            ]
          : []),
        ...(r.bundleBytes > g.bundleBytes
          ? [`${r.function}: bundle ${kb(r.bundleBytes)} KB (goal ≤ ${g.bundleBytes / 1024} KB)`]
          : []),
        ...(r.coldStartRatio > g.coldStartRatio
          ? [
              `${r.function}: import + first invocation ${over(r.coldStartRatio)}× the floor as esbuild builds it in elapsed time (goal ≤ ${g.coldStartRatio})`,
            ]
          : []),
        ...(r.coldStartCpuRatio > g.coldStartCpuRatio
          ? [
              `${r.function}: import + first invocation ${over(r.coldStartCpuRatio)}× the floor as esbuild builds it in CPU time (goal ≤ ${g.coldStartCpuRatio})`,
            ]
          : []),
      ];
    }),
    ...extras
      .filter((e) => e.goal !== undefined && e.value > e.goal)
      .map((e) => `${e.function}: ${e.measurement} ${over(e.value)} ${e.unit} (goal ≤ ${e.goal})`),
  ];
}
