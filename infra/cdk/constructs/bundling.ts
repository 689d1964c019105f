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
  sourcemap: 'linked',
  sourcesContent: false,
};
