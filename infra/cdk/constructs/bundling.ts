import type { BuildOptions } from 'esbuild';

/**
 * How every function is bundled: the stack's NodejsFunction and the bench's bundle-size and
 * cold-start measurements read these, so the bench measures what is deployed.
 */
export const BUNDLE = {
  target: 'node24',
  mainFields: ['module', 'main'],
  // ESM output still meets CommonJS dependencies that call require(): give them one.
  banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
  minify: true,
  /**
   * Packages replaced in the bundles (esbuild `alias`). None today: tracing is the project's own
   * (shared/observability/tracer.ts), so the X-Ray SDK and its stand-ins left the bundles; the
   * bench keeps them for its Powertools Tracer comparison (test/bench/tracers/candidates.ts).
   */
  alias: {} as Record<string, string>,
} as const;

/** The same bundle in esbuild's own terms (what NodejsFunction passes to esbuild). */
export const ESBUILD_OPTIONS: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: BUNDLE.target,
  mainFields: [...BUNDLE.mainFields],
  banner: { js: BUNDLE.banner },
  minify: BUNDLE.minify,
  alias: { ...BUNDLE.alias },
  sourcemap: 'linked',
  sourcesContent: false,
};
