import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '#shared/config';
import { KEY_REFETCH_COOLDOWN_MS } from '#shared/workload-identity/issuer-keys';
import { MAX_TOKEN_LIFETIME_SECONDS } from '#shared/workload-identity/verify';
import { expectWith } from '../support/expect-with';

/**
 * The repository stands alone: every document the README, the docs or the code point to is in it,
 * and nothing points to material outside it (the team's own notes are not shipped with the code).
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const repoFiles = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
  cwd: ROOT,
  encoding: 'utf8',
})
  .split('\n')
  .filter((file) => file !== '' && existsSync(join(ROOT, file)) && statSync(join(ROOT, file)).isFile());
const markdown = repoFiles.filter((file) => file.endsWith('.md'));
const text = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
const anchorsOf = (file: string) =>
  new Set(
    text(file)
      .split('\n')
      .filter((line) => /^#{1,6} /.test(line))
      .map((line) =>
        line
          .replace(/^#+ /, '')
          .trim()
          .toLowerCase()
          .replace(/[^\p{L}\p{N} _-]/gu, '')
          .replace(/ /g, '-'),
      ),
  );

/** Markdown links to something in the repository, with the file they are in. */
function localLinks(): Array<{ from: string; target: string; anchor?: string }> {
  return markdown.flatMap((from) =>
    [...text(from).matchAll(/\]\(([^)\s]+)\)/g)]
      .map((m) => m[1]!)
      .filter((href) => !/^[a-z]+:/i.test(href))
      .map((href) => {
        const [path, anchor] = href.split('#') as [string, string | undefined];
        return {
          from,
          target: path === '' ? from : relative(ROOT, join(ROOT, dirname(from), path)),
          ...(anchor ? { anchor } : {}),
        };
      }),
  );
}

describe('the repository stands alone', () => {
  it('links only to files that exist, and to headings they have', () => {
    const links = localLinks();
    expect(links.length).toBeGreaterThan(5);
    const broken = links.filter(
      ({ target, anchor }) =>
        !existsSync(join(ROOT, target)) ||
        (anchor !== undefined && target.endsWith('.md') && !anchorsOf(target).has(anchor)),
    );
    expect(broken).toEqual([]);
  });

  it('names only documents it holds, in code as in the docs', () => {
    const cited = repoFiles.flatMap((file) =>
      [...text(file).matchAll(/\b(docs\/[\w.-]+\.md)\b/g)].map((m) => ({ file, cited: m[1]! })),
    );
    expect(cited.filter(({ cited: path }) => !existsSync(join(ROOT, path)))).toEqual([]);
  });

  it('never points to material outside the repository', () => {
    // Built so that this file does not match itself.
    const outside = [/\b(DESIGN|API-CONTRACT|STYLE)\.md\b/, /team\s+handbook/i, /\.\.\/shared(?!\/)/];
    const offenders = repoFiles
      .filter((file) => !/\.(png|jpg|ico|jar|zip|gz)$/.test(file))
      .flatMap((file) => outside.filter((pattern) => pattern.test(text(file))).map((pattern) => `${file}: ${pattern}`));
    expect(offenders).toEqual([]);
  });
});

/** The pages a reader opens: the README and every page of docs/. */
const pages = markdown.filter((file) => file === 'README.md' || /^docs\/[\w-]+\.md$/.test(file));

/** A page's lines outside fenced code blocks, with their line numbers. */
function proseLines(file: string): Array<{ line: string; number: number }> {
  let fenced = false;
  return text(file)
    .split('\n')
    .flatMap((line, index) => {
      if (/^\s*```/.test(line)) {
        fenced = !fenced;
        return [];
      }
      return fenced ? [] : [{ line, number: index + 1 }];
    });
}

describe('the documentation reads on any screen', () => {
  it('covers the README and the docs pages', () => {
    expect(pages).toEqual(
      expect.arrayContaining([
        'README.md',
        'docs/api.md',
        'docs/deploying.md',
        'docs/operating.md',
        'docs/runbooks.md',
        'docs/performance.md',
        'docs/design.md',
        'docs/development.md',
      ]),
    );
  });

  it('keeps every line outside code blocks within 100 characters, URLs aside', () => {
    const long = pages.flatMap((file) =>
      proseLines(file)
        .map(({ line, number }) => ({
          at: `${file}:${number}`,
          length: [...line.replace(/\]\([^)\s]+\)/g, ']()').replace(/<?https?:\/\/\S+/g, '')].length,
        }))
        .filter(({ length }) => length > 100),
    );
    expect(long).toEqual([]);
  });

  it("gives the README's test command exactly as CI runs it", () => {
    const block = /<!-- tests -->\n```sh\n([\s\S]*?)```/.exec(text('README.md'))![1]!;
    const readme = block
      .split('\n')
      .flatMap((line) => line.replace(/#.*$/, '').split('&&'))
      .map((c) => c.trim())
      .filter(Boolean);
    const ci = text('.ci/run')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => /^npm /.test(line));
    expect(readme).toEqual(ci);
  });

  it('keeps the README a front door', () => {
    expect(text('README.md').split('\n').length).toBeLessThanOrEqual(300);
  });

  it('gives every page with more than four sections a table of contents that lists them', () => {
    const missing = pages.flatMap((file) => {
      const sections = proseLines(file)
        .filter(({ line }) => /^## /.test(line))
        .map(({ line }) => line.slice(3).trim())
        .filter((title) => title !== 'Contents');
      if (sections.length <= 4) return [];
      const links = new Set([...text(file).matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!));
      const anchor = (title: string) =>
        title
          .toLowerCase()
          .replace(/[^\p{L}\p{N} _-]/gu, '')
          .replace(/ /g, '-');
      return sections.filter((title) => !links.has(anchor(title))).map((title) => `${file}: ${title}`);
    });
    expect(missing).toEqual([]);
  });
});

describe("the README's deploy block", () => {
  const block = /## Deploying, and what it costs[\s\S]*?```sh\n([\s\S]*?)```/.exec(text('README.md'))![1]!;
  const commands = block.split('\n').filter((line) => line !== '' && !line.startsWith('#'));

  it("gives the smoke test its token and notification secret, from the operator CLI on the stage's table", () => {
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
    for (const name of ['TFE_TOKEN', 'SMOKE_NOTIFICATION_SECRET', '--outputs', '--org'])
      expect(smokeUsage).toContain(name);
    // Whitespace aside: the formatter may break a long property onto its own line.
    const admin = `${text('infra/admin/tokens.ts')}\n${text('infra/admin/notifications.ts')}`.replace(/\s+/g, ' ');
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
    const bullet = /- \*\*The tests replay those versions' exact requests\*\*[^\n]*(?:\n {2}[^\n]*)*/.exec(
      text('README.md'),
    )![0];
    const replaying = [...bullet.matchAll(/`(test\/e2e\/[\w.-]+\.e2e\.test\.ts)`/g)].map((m) => m[1]!);
    expect(replaying).toHaveLength(4);
    for (const file of replaying)
      expect([file, versionsIn(text(file).replace(/\s*\n\s*\*?\s*/g, ' '))]).toEqual([file, readme]);
  });
});

describe('what a first workload identity trial needs, where a platform engineer reads it (docs/api.md)', () => {
  /** A section's text, from its heading to the next heading, its line breaks made spaces. */
  const sectionOf = (file: string, heading: string) => {
    const body = text(file)
      .split(/\n(?=#{2,3} )/)
      .find((part) => part.replace(/^#+ /, '').startsWith(heading));
    if (!body) throw new Error(`${file} has no heading "${heading}"`);
    return body.replace(/\s*\n\s*/g, ' ');
  };
  const hcp = () => sectionOf('docs/api.md', 'From an HCP Terraform or Terraform Enterprise run');
  const github = () => sectionOf('docs/api.md', 'From a GitHub Actions job');

  it('says an HCP Terraform run must be known to the service, and how, in the walkthrough itself', () => {
    expect(hcp()).toMatch(
      /The run must be known to this service first\..*`404`.*\]\(#run-notifications\).*`npm run admin -- run register /,
    );
  });

  it('says where terraform_organization_id and terraform_workspace_id are read', () => {
    expect(hcp()).toMatch(
      /`terraform_organization_id` is the organization's ID \(`org-…`\): on its Settings → General page, or `external-id`/,
    );
    expect(hcp()).toMatch(/`terraform_workspace_id` is the workspace's ID \(`ws-…`\): on its Settings → General page/);
  });

  it("never offers a run task as a place that has the run's token, and names the ones that do", () => {
    for (const file of markdown) expectWith(text(file), file).not.toMatch(/run task's script/);
    expect(hcp()).toMatch(/a `local-exec` provisioner, or, on self-hosted agents, an agent hook/);
    expect(hcp()).toMatch(/A run task cannot: .* never see the run's environment or its `TFC_WORKLOAD_IDENTITY_TOKEN`/);
  });

  it('has GitHub trusts pin the repository and owner ids, and shows the sub with an environment and the immutable sub', () => {
    expect(github()).toMatch(/Pin the ids, not the names\..*`repository_id` and `repository_owner_id`/);
    expect(github()).toContain('`repo:OWNER@OWNER_ID/REPO@REPO_ID:environment:production`');
    expect(github()).toMatch(/The `sub` names the environment, not the ref\*\*, when the job has an `environment:`/);
    expect(github()).toMatch(/trust create .* --claim repository_owner_id=\d+ .*--claim repository_id=\d+/);
    expect(text('docs/operating.md').replace(/\s*\n\s*/g, ' ')).toMatch(
      /GitHub Actions: pin `repository_id` \(or `repository_owner_id`/,
    );
  });

  it('says which HCP Terraform tokens no trust can accept: module tests, and phases longer than the lifetime limit', () => {
    expect(hcp()).toMatch(/`terraform_run_id` like `trun-…` \(not a run id\) and no workspace claims/);
    const [, hours] = /Runs longer than (\d+) hours\.\*\*/.exec(hcp())!;
    expect(Number(hours)).toBe(MAX_TOKEN_LIFETIME_SECONDS / 3600);
    expect(hcp()).toMatch(
      /Terraform Enterprise whose plan or apply timeout is set above \d+ hours issues tokens that are refused/,
    );
  });

  it("tells callers that a token signed with a key just published may be refused for a while, with the code's numbers", () => {
    const rotation = text('docs/api.md')
      .split(/\n\s*\n/)
      .find((paragraph) => paragraph.startsWith('**Right after the issuer rotates its keys.**'))!
      .replace(/\s*\n\s*/g, ' ');
    expect(Number(/at most once every \*\*(\d+) s\*\*/.exec(rotation)![1])).toBe(KEY_REFETCH_COOLDOWN_MS / 1000);
    expect(rotation).toMatch(
      /A token signed with a key the issuer published in the last \d+ s can .* refused \(`401`\)/,
    );
    expect(rotation).toContain(`the authorizer cache TTL (${AUTHORIZER_CACHE_TTL_SECONDS} s by default)`);
  });
});
