import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname } from 'node:path';
import { BUILTINS_BY_REQUIRE, builtinModuleFile } from '#infra/cdk/constructs/bundling';

/**
 * The built-ins the bundles take as CommonJS exports (infra/cdk/constructs/bundling.ts): each
 * aliased one-line module hands over exactly the built-in, so the code that imports it gets what
 * it would have had.
 */
const require = createRequire(import.meta.url);

describe('the built-ins taken through require()', () => {
  it.each(BUILTINS_BY_REQUIRE)('node:%s: its module exports the built-in itself', (name) => {
    expect(require(builtinModuleFile(name))).toBe(process.getBuiltinModule(`node:${name}`));
  });

  it('has a module for each, and none for another', () => {
    const directory = dirname(builtinModuleFile('http'));
    expect(readdirSync(directory).sort()).toEqual(
      BUILTINS_BY_REQUIRE.map((name) => basename(builtinModuleFile(name))).sort(),
    );
  });
});

/** Internal modules a fresh process loads for one built-in, taken as an ES module or as CommonJS exports. */
function modulesLoadedFor(name: string, as: 'import' | 'exports'): number {
  const take = as === 'import' ? `await import('node:${name}')` : `process.getBuiltinModule('node:${name}')`;
  const script = `await import('node:path'); const before = new Set(process.moduleLoadList); ${take}; console.log(process.moduleLoadList.filter((m) => !before.has(m)).length);`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim());
}

describe('why: an ES module import of a built-in reads every export', () => {
  it.each(['http', 'process', 'util', 'fs'])(
    'node:%s loads more internal modules as an ES module than its CommonJS exports need',
    (name) => {
      expect(modulesLoadedFor(name, 'import')).toBeGreaterThan(modulesLoadedFor(name, 'exports') + 20);
    },
  );
});
