import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The repository stands alone: every document the README, the docs or the code point to is in it,
 * and nothing points to material outside it (the team's own notes are not shipped with the code).
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const repoFiles = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n').filter((file) => file !== '' && existsSync(join(ROOT, file)) && statSync(join(ROOT, file)).isFile());
const markdown = repoFiles.filter((file) => file.endsWith('.md'));
const text = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
const anchorsOf = (file: string) => new Set(text(file).split('\n').filter((line) => /^#{1,6} /.test(line))
  .map((line) => line.replace(/^#+ /, '').trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-')));

/** Markdown links to something in the repository, with the file they are in. */
function localLinks(): Array<{ from: string; target: string; anchor?: string }> {
  return markdown.flatMap((from) => [...text(from).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((href) => !/^[a-z]+:/i.test(href))
    .map((href) => {
      const [path, anchor] = href.split('#') as [string, string | undefined];
      return { from, target: path === '' ? from : relative(ROOT, join(ROOT, dirname(from), path)), ...(anchor ? { anchor } : {}) };
    }));
}

describe('the repository stands alone', () => {
  it('links only to files that exist, and to headings they have', () => {
    const links = localLinks();
    expect(links.length).toBeGreaterThan(5);
    const broken = links.filter(({ target, anchor }) =>
      !existsSync(join(ROOT, target)) || (anchor !== undefined && target.endsWith('.md') && !anchorsOf(target).has(anchor)));
    expect(broken).toEqual([]);
  });

  it('names only documents it holds, in code as in the docs', () => {
    const cited = repoFiles.flatMap((file) => [...text(file).matchAll(/\b(docs\/[\w.-]+\.md)\b/g)].map((m) => ({ file, cited: m[1]! })));
    expect(cited.filter(({ cited: path }) => !existsSync(join(ROOT, path)))).toEqual([]);
  });

  it('never points to material outside the repository', () => {
    // Built so that this file does not match itself.
    const outside = [/\b(DESIGN|API-CONTRACT|STYLE)\.md\b/, /team\s+handbook/i, /\.\.\/shared(?!\/)/];
    const offenders = repoFiles.filter((file) => !/\.(png|jpg|ico|jar|zip|gz)$/.test(file))
      .flatMap((file) => outside.filter((pattern) => pattern.test(text(file))).map((pattern) => `${file}: ${pattern}`));
    expect(offenders).toEqual([]);
  });
});
