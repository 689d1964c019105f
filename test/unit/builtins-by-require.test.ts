import { describe, expect, it } from '@jest/globals';
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
    expect(readdirSync(directory).sort()).toEqual(BUILTINS_BY_REQUIRE.map((name) => basename(builtinModuleFile(name))).sort());
  });
});
