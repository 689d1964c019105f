import { coldStartCost, type ColdStartCost } from './bundles';
import { median } from './stats';

/**
 * Cold starts as a user feels them (issue 28): per function, fresh processes that import its
 * bundle and invoke it once against DynamoDB Local, each beside one process of every floor (a
 * bundle that only creates the document client and makes one GetItem) in turn, the order rotating
 * from sample to sample: a shared machine's load moves within a run, and neighbours see the same.
 * A ratio is the median of the ratios to the floor process of the same turn.
 */
export interface ColdStartSubject {
  name: string;
  file: string;
  environment: Record<string, string>;
  /** The event of the sample's first invocation (a create needs a new name each time, a delete a key of its own). */
  event(sample: number): unknown;
  /** The answer the invocation must give (a 2xx, `Allow`…); anything else stops the bench. */
  expected: RegExp;
}
export interface ColdStartFloor {
  name: string;
  file: string;
  environment: Record<string, string>;
}

export interface Ratio {
  wall: number;
  cpu: number;
}
export interface ColdStartRow {
  function: string;
  /** Medians, ms: the import alone, the first invocation alone, and both. */
  initMs: number;
  initCpuMs: number;
  firstMs: number;
  firstCpuMs: number;
  coldMs: number;
  coldCpuMs: number;
  /** Per floor: the import alone and import plus first invocation, elapsed and CPU. */
  init: Record<string, Ratio>;
  cold: Record<string, Ratio>;
}
export interface ColdStartFloorRow {
  floor: string;
  initMs: number;
  coldMs: number;
  coldCpuMs: number;
}

export function benchColdStarts(options: {
  subjects: ColdStartSubject[];
  floors: ColdStartFloor[];
  samples: number;
  progress(): void;
}): { rows: ColdStartRow[]; floors: ColdStartFloorRow[] } {
  const { subjects, floors, samples } = options;
  const measured = new Map<string, Array<{ cost: ColdStartCost; floors: Record<string, ColdStartCost> }>>();
  const floorCosts = new Map<string, ColdStartCost[]>(floors.map((floor) => [floor.name, []]));
  const floorEvent = {};
  for (let sample = 0; sample < samples; sample++) {
    for (const subject of subjects) {
      const turn = [subject, ...floors];
      const costs = new Map<string, ColdStartCost>();
      for (let i = 0; i < turn.length; i++) {
        const started = turn[(i + sample) % turn.length]!;
        costs.set(
          started.name,
          coldStartCost(started.file, started.environment, started === subject ? subject.event(sample) : floorEvent),
        );
      }
      const cost = costs.get(subject.name)!;
      if (!subject.expected.test(cost.answer))
        throw new Error(`${subject.name}: its first invocation answered ${cost.answer} (expected ${subject.expected})`);
      for (const floor of floors) {
        if (costs.get(floor.name)!.answer !== '204')
          throw new Error(`${floor.name}: answered ${costs.get(floor.name)!.answer}`);
        floorCosts.get(floor.name)!.push(costs.get(floor.name)!);
      }
      measured.set(subject.name, [
        ...(measured.get(subject.name) ?? []),
        { cost, floors: Object.fromEntries(floors.map((f) => [f.name, costs.get(f.name)!])) },
      ]);
    }
    options.progress();
  }
  const ratio = (
    pairs: Array<{ cost: ColdStartCost; floors: Record<string, ColdStartCost> }>,
    floor: string,
    part: 'init' | 'total',
  ): Ratio => ({
    wall: median(pairs.map((p) => p.cost[part].wallMs / p.floors[floor]![part].wallMs)),
    cpu: median(pairs.map((p) => p.cost[part].cpuMs / p.floors[floor]![part].cpuMs)),
  });
  const rows = subjects.map((subject): ColdStartRow => {
    const pairs = measured.get(subject.name)!;
    const costs = pairs.map((p) => p.cost);
    return {
      function: subject.name,
      initMs: median(costs.map((c) => c.init.wallMs)),
      initCpuMs: median(costs.map((c) => c.init.cpuMs)),
      firstMs: median(costs.map((c) => c.total.wallMs - c.init.wallMs)),
      firstCpuMs: median(costs.map((c) => c.total.cpuMs - c.init.cpuMs)),
      coldMs: median(costs.map((c) => c.total.wallMs)),
      coldCpuMs: median(costs.map((c) => c.total.cpuMs)),
      init: Object.fromEntries(floors.map((floor) => [floor.name, ratio(pairs, floor.name, 'init')])),
      cold: Object.fromEntries(floors.map((floor) => [floor.name, ratio(pairs, floor.name, 'total')])),
    };
  });
  return {
    rows,
    floors: floors.map((floor) => {
      const costs = floorCosts.get(floor.name)!;
      return {
        floor: floor.name,
        initMs: median(costs.map((c) => c.init.wallMs)),
        coldMs: median(costs.map((c) => c.total.wallMs)),
        coldCpuMs: median(costs.map((c) => c.total.cpuMs)),
      };
    }),
  };
}
