import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * No module of the code imports itself back through others, type-only imports included: a module
 * that needs another's types while that one needs its code makes two modules one (shared types
 * get a module of their own, as shared/observability/trace-types.ts).
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ALIASES: Array<[string, string]> = [
  ['#shared/', 'shared/'],
  ['#functions/', 'functions/'],
  ['#infra/', 'infra/'],
];

const sources = (directory: string): string[] =>
  readdirSync(join(ROOT, directory)).flatMap((entry) => {
    const path = join(directory, entry);
    return statSync(join(ROOT, path)).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });

/** A specifier as a project file (relative, or one of package.json's `#` aliases); undefined for a package. */
function projectFile(from: string, specifier: string): string | undefined {
  const alias = ALIASES.find(([prefix]) => specifier.startsWith(prefix));
  const base = alias
    ? join(alias[1], specifier.slice(alias[0].length))
    : specifier.startsWith('.')
      ? join(dirname(from), specifier)
      : undefined;
  if (base === undefined) return undefined;
  return [base, `${base}.ts`, join(base, 'index.ts')].find(
    (file) => existsSync(join(ROOT, file)) && statSync(join(ROOT, file)).isFile(),
  );
}

/** Every cycle a depth-first walk meets, each as the chain of files that closes it. */
function importCycles(files: string[]): string[] {
  const imports = new Map(
    files.map((file) => [
      file,
      ts
        .preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true)
        .importedFiles.map((imported) => projectFile(file, imported.fileName))
        .filter((target): target is string => target !== undefined),
    ]),
  );
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    path.push(file);
    for (const target of imports.get(file) ?? []) {
      if (state.get(target) === 'open') cycles.push([...path.slice(path.indexOf(target)), target].join(' → '));
      else if (!state.has(target)) visit(target);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return cycles;
}

describe('the import graph', () => {
  it('has no cycle in functions/, shared/ or infra/', () => {
    const files = ['functions', 'shared', 'infra'].flatMap(sources);
    expect(files.length).toBeGreaterThan(50);
    expect(importCycles(files)).toEqual([]);
  });
});
