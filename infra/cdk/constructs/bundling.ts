import type { BuildOptions } from 'esbuild';
import { join } from 'node:path';

/** What esbuild substitutes into the bundles in place of modules: built-ins, the credential chain. */
const SHIMS = join(import.meta.dirname, '..', 'bundle-shims');

/**
 * Built-ins the bundles take as CommonJS exports, not through an ES module `import`: Node builds an
 * ES module facade of a built-in by reading every export, and lazy getters then load modules no
 * request uses (node:http's load all of undici). The others (crypto, stream, zlib…) load the same
 * either way. A subpath (fs/promises) needs its own entry: an alias also rewrites the paths under
 * it. What each loads, and what it saves at a cold start: docs/performance.md.
 */
export const BUILTINS_BY_REQUIRE = [
  'http',
  'https',
  'process',
  'util',
  'fs',
  'fs/promises',
  'async_hooks',
  'timers',
  'timers/promises',
  'buffer',
] as const;

/** Each of them, with and without `node:`, to its one-line CommonJS module in bundle-shims/builtins/. */
function builtinsByRequire(): Record<string, string> {
  return Object.fromEntries(
    BUILTINS_BY_REQUIRE.flatMap((name) => {
      const file = builtinModuleFile(name);
      return [
        [name, file],
        [`node:${name}`, file],
      ];
    }),
  );
}

/**
 * Packages the bundles take from elsewhere: the SDK's default credential chain becomes the
 * environment's credentials alone, which is where Lambda puts the execution role's
 * (bundle-shims/lambda-credentials.ts).
 */
const PACKAGE_REPLACEMENTS: Record<string, string> = {
  '@aws-sdk/credential-provider-node': join(SHIMS, 'lambda-credentials.ts'),
};

/** bundle-shims/builtins/fs-promises.cjs for fs/promises. */
export const builtinModuleFile = (name: string) => join(SHIMS, 'builtins', `${name.replace('/', '-')}.cjs`);

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
   * Modules replaced in the bundles (esbuild `alias`): the built-ins taken through require(), and
   * the credential chain. The X-Ray SDK and its stand-ins left the bundles with Powertools Tracer;
   * the bench keeps them for its tracer comparison (test/bench/tracers/candidates.ts).
   */
  alias: { ...builtinsByRequire(), ...PACKAGE_REPLACEMENTS } as Record<string, string>,
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
