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

/** The pages a reader opens: the README and every page of docs/. */
const pages = markdown.filter((file) => file === 'README.md' || /^docs\/[\w-]+\.md$/.test(file));

/** A page's lines outside fenced code blocks, with their line numbers. */
function proseLines(file: string): Array<{ line: string; number: number }> {
  let fenced = false;
  return text(file).split('\n').flatMap((line, index) => {
    if (/^\s*```/.test(line)) { fenced = !fenced; return []; }
    return fenced ? [] : [{ line, number: index + 1 }];
  });
}

describe('the documentation reads on any screen', () => {
  it('covers the README and the docs pages', () => {
    expect(pages).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/deploying.md', 'docs/operating.md',
      'docs/runbooks.md', 'docs/performance.md', 'docs/design.md', 'docs/development.md']));
  });

  it('keeps every line outside code blocks within 100 characters, URLs aside', () => {
    const long = pages.flatMap((file) => proseLines(file)
      .map(({ line, number }) => ({ at: `${file}:${number}`, length: [...line.replace(/\]\([^)\s]+\)/g, ']()').replace(/<?https?:\/\/\S+/g, '')].length }))
      .filter(({ length }) => length > 100));
    expect(long).toEqual([]);
  });

  it('gives the README\'s test command exactly as CI runs it', () => {
    const block = /<!-- tests -->\n```sh\n([\s\S]*?)```/.exec(text('README.md'))![1]!;
    const readme = block.split('\n').flatMap((line) => line.replace(/#.*$/, '').split('&&')).map((c) => c.trim()).filter(Boolean);
    const ci = text('.ci/run').split('\n').map((line) => line.trim()).filter((line) => /^npm /.test(line));
    expect(readme).toEqual(ci);
  });

  it('keeps the README a front door', () => {
    expect(text('README.md').split('\n').length).toBeLessThanOrEqual(300);
  });

  it('gives every page with more than four sections a table of contents that lists them', () => {
    const missing = pages.flatMap((file) => {
      const sections = proseLines(file).filter(({ line }) => /^## /.test(line)).map(({ line }) => line.slice(3).trim())
        .filter((title) => title !== 'Contents');
      if (sections.length <= 4) return [];
      const links = new Set([...text(file).matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!));
      const anchor = (title: string) => title.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
      return sections.filter((title) => !links.has(anchor(title))).map((title) => `${file}: ${title}`);
    });
    expect(missing).toEqual([]);
  });
});

describe('the README\'s deploy block', () => {
  const block = /## Deploying, and what it costs[\s\S]*?```sh\n([\s\S]*?)```/.exec(text('README.md'))![1]!;
  const commands = block.split('\n').filter((line) => line !== '' && !line.startsWith('#'));

  it('gives the smoke test its token and notification secret, from the operator CLI on the stage\'s table', () => {
    const smoke = commands.findIndex((line) => line.startsWith('npm run smoke'));
    const before = commands.slice(0, smoke).join('\n');
    // Without the secret (or a run), 4 of its 14 steps are skipped and it still exits 0.
    expect(before).toMatch(/export .*\bTFE_TOKEN=.*\bSMOKE_NOTIFICATION_SECRET=/);
    expect(before).toMatch(/^export TABLE_NAME=/m);
    expect(before).toMatch(/^npm run admin -- token create --org (\S+) --role owner/m);
    const org = /token create --org (\S+)/.exec(before)![1]!;
    expect(before).toContain(`npm run admin -- notifications create --org ${org} `);
    expect(commands[smoke]).toContain(`--org ${org}`);
  });

  it('names only the variables and commands the tools take', () => {
    const smokeUsage = text('infra/ops/smoke.ts');
    for (const name of ['TFE_TOKEN', 'SMOKE_NOTIFICATION_SECRET', '--outputs', '--org']) expect(smokeUsage).toContain(name);
    const admin = `${text('infra/admin/tokens.ts')}\n${text('infra/admin/notifications.ts')}`;
    expect(admin).toContain("usage: 'token create --org ORG --role owner|member|reader [--subject NAME");
    expect(admin).toContain("usage: 'notifications create --org ORG [--url ADDRESS]'");
  });
});

describe('the client versions the documentation names', () => {
  const versionsIn = (content: string) => ({
    goTfe: [...new Set([...content.matchAll(/go-tfe (v\d+\.\d+\.\d+)/g)].map((m) => m[1]))],
    pythonTfe: [...new Set([...content.matchAll(/python-tfe (\d+\.\d+\.\d+)/g)].map((m) => m[1]))],
  });

  it('are one go-tfe and one python-tfe version, the same in the README, docs/api.md and the tests that replay their requests', () => {
    const readme = versionsIn(text('README.md').replace(/\s*\n\s*/g, ' '));
    expect(readme.goTfe).toHaveLength(1);
    expect(readme.pythonTfe).toHaveLength(1);
    const api = text('docs/api.md');
    expect(api).toMatch(new RegExp(`\\| go-tfe \\| ${readme.goTfe[0]!.replaceAll('.', '\\.')} `));
    expect(api).toMatch(new RegExp(`\\| python-tfe \\| ${readme.pythonTfe[0]!.replaceAll('.', '\\.')} `));
    const bullet = /- \*\*The tests replay those versions' exact requests\*\*[^\n]*(?:\n {2}[^\n]*)*/.exec(text('README.md'))![0];
    const replaying = [...bullet.matchAll(/`(test\/e2e\/[\w.-]+\.e2e\.test\.ts)`/g)].map((m) => m[1]!);
    expect(replaying).toHaveLength(4);
    for (const file of replaying) expect([file, versionsIn(text(file).replace(/\s*\n\s*\*?\s*/g, ' '))]).toEqual([file, readme]);
  });
});
