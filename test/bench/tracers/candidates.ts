import { join, resolve } from 'node:path';
import type { Plugin } from 'esbuild';

/**
 * The tracers the bench compares (issue 23, docs/design.md "Tracing"), each behind the API of
 * shared/observability/tracer.ts: the bench bundles every function once per candidate, with the
 * deployed esbuild options, swapping only that module.
 */
export interface TracerCandidate {
  name: string;
  /** The module that stands in for shared/observability/tracer.ts; undefined: the deployed one. */
  module: string | undefined;
  /** Packages replaced by stand-ins in this candidate's bundles (esbuild alias). */
  alias: Record<string, string>;
  /** Nothing sent: the floor the others are measured against. */
  floor?: true;
}

const here = import.meta.dirname;
const stub = (file: string) => join(here, 'xray-sdk-stubs', file);

/** Powertools Tracer as the functions had it: the X-Ray SDK's entry and emitter-listener replaced. */
export const POWERTOOLS_ALIAS = {
  'aws-xray-sdk-core': stub('aws-xray-sdk-core.cjs'),
  'emitter-listener': stub('emitter-listener.cjs'),
};

export const TRACER_CANDIDATES: TracerCandidate[] = [
  { name: 'none (floor)', module: join(here, 'none.ts'), alias: {}, floor: true },
  { name: 'project emitter (deployed)', module: undefined, alias: {} },
  { name: 'OpenTelemetry SDK', module: join(here, 'opentelemetry.ts'), alias: {} },
  { name: 'Powertools Tracer', module: join(here, 'powertools.ts'), alias: POWERTOOLS_ALIAS },
];

const TRACER = resolve(here, '../../../shared/observability/tracer.ts');

/** Resolves the tracer module, however it is imported (relative or #shared/…), to the candidate's. */
export function tracerSwap(candidate: TracerCandidate): Plugin {
  return {
    name: 'tracer-candidate',
    setup(build) {
      if (!candidate.module) return;
      build.onResolve({ filter: /observability\/tracer$/ }, (args) => {
        const target = args.path.startsWith('#shared/') ? TRACER : resolve(args.resolveDir, `${args.path}.ts`);
        return target === TRACER ? { path: candidate.module! } : undefined;
      });
    },
  };
}
