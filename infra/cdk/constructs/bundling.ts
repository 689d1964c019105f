import { join } from 'node:path';
import type { BuildOptions } from 'esbuild';

const stub = (file: string) => join(import.meta.dirname, 'bundle-stubs', file);

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
   * Packages replaced by a stub in the bundles: required at load by a dependency but used only by
   * code these functions never run (each stub says why and throws if it is ever used).
   */
  alias: {
    'aws-xray-sdk-core': stub('aws-xray-sdk-core.cjs'),
    'emitter-listener': stub('emitter-listener.cjs'),
  },
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
