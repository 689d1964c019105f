import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, run, runToEnd, TSX } from '../support/processes';
import { expectWith } from '../support/expect-with';

/**
 * The documentation's walkthrough as a newcomer pastes it: every ```sh block marked
 * `<!-- walkthrough -->`, in the order a reader follows the pages (the README, then the API
 * reference, then operating), in one bash, after a fresh `npm start` and the `export` line it
 * printed. Every curl's status is collected (on curl's stderr, so the commands' own output and pipes
 * into jq stay as written), into a file of its own: stderr and stdout reach the test through two
 * pipes, and curl writes its status line in several pieces that the other pipe's output could split.
 */
const ROOT = new URL('../../', import.meta.url);
const ORDER = ['README.md', 'docs/api.md', 'docs/operating.md'];
const WALKTHROUGH = /<!-- walkthrough -->\n```sh\n([\s\S]*?)```/g;
const blocksOf = (file: string) =>
  [...readFileSync(new URL(file, ROOT), 'utf8').matchAll(WALKTHROUGH)].map((m) => m[1]!);
const blocks = ORDER.flatMap(blocksOf);
const SLOW = 180_000;

let stack: ReturnType<typeof run> | undefined;
afterAll(async () => {
  if (!stack || stack.child.exitCode !== null) return;
  stack.child.kill('SIGINT');
  await stack.exited;
}, 30_000);

describe('the README and docs, pasted in order after npm start', () => {
  it('has a walkthrough on every page of the order, and none on a page outside it', () => {
    for (const file of ORDER) expectWith(blocksOf(file).length, file).toBeGreaterThanOrEqual(1);
    expect(blocks.length).toBeGreaterThanOrEqual(7);
    const pages = readdirSync(new URL('docs/', ROOT))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`);
    expect(pages.filter((file) => !ORDER.includes(file) && blocksOf(file).length > 0)).toEqual([]);
  });

  it('prints each answer on lines of its own, a bodiless answer its status, and keeps the variables npm start set', () => {
    const lines = blocks.join('\n').replace(/\\\n/g, ' ').split('\n');
    // An answer printed to the terminal (not taken into a variable) ends with a newline, or the next prompt glues onto its JSON.
    const printed = lines.filter((line) => /^\s*curl\b/.test(line));
    expect(printed.length).toBeGreaterThanOrEqual(8);
    expect(printed.filter((line) => !/ -i\b/.test(line) && !/ -w '[^']*\\n'/.test(line))).toEqual([]);
    // A DELETE answers 204 with no body: shown only by its status.
    const deletes = printed.filter((line) => /-X DELETE/.test(line));
    expect(deletes.length).toBeGreaterThanOrEqual(1);
    expect(deletes.filter((line) => !/ -i\b|%\{http_code\}/.test(line))).toEqual([]);
    // API, TOKEN and RUN are npm start's: a block that reassigned one would change what every later block calls.
    expect(lines.filter((line) => /^\s*(export\s+)?(API|TOKEN|RUN)=/.test(line))).toEqual([]);
  });

  it(
    'runs every walkthrough command without a 401, a 404 or a store other than the stack’s',
    async () => {
      const env = {
        PORT: String(await freePort()),
        DDB_PORT: String(await freePort()),
        ISSUER_PORT: String(await freePort()),
        DATA_DIR: mkdtempSync(join(tmpdir(), 'tfc-readme-')),
        TABLE_NAME: undefined,
        AWS_ENDPOINT_URL_DYNAMODB: undefined,
        POWERTOOLS_LOG_LEVEL: undefined,
      };
      const curlLog = join(env.DATA_DIR, 'curl-stderr.log');
      stack = run([TSX, 'infra/local/start.ts'], env);
      const [, exported] = await stack.waitFor(
        /^ {2}export (API=\S+ TOKEN=tfcapi_\w+ RUN=run-\w+ ISSUER=http:\/\/127\.0\.0\.1:\d+)$/m,
        120_000,
      );
      const script = [
        'set -euo pipefail',
        // curl takes its last -w only: a block's own -w (a trailing newline, the status) is kept, the status line added after it.
        'curl() {',
        `  local format='' args=()`,
        '  while [ $# -gt 0 ]; do if [ "$1" = -w ]; then format=$2; shift 2; else args+=("$1"); shift; fi; done',
        `  command curl -w "$format%{stderr}HTTP %{http_code} %{url_effective}\\n" "\${args[@]}" 2>>'${curlLog}'`,
        '}',
        `export ${exported}`,
        ...blocks,
      ].join('\n');
      const shell = await runToEnd(['bash', '-c', script], env);
      const curlErrors = readFileSync(curlLog, 'utf8');
      const result = { code: shell.code, output: `${shell.output}\n--- curl's stderr ---\n${curlErrors}` };
      expectWith(result.code, result.output).toBe(0);

      const statuses = [...curlErrors.matchAll(/HTTP (\d{3}) (http\S+)$/gm)].map((m) => ({
        status: Number(m[1]),
        url: m[2]!,
      }));
      const curls = blocks.join('\n').match(/\bcurl\b/g)!.length;
      expectWith(statuses.length, result.output).toBe(curls);
      expectWith(
        statuses.filter(({ status }) => status < 200 || status >= 300),
        result.output,
      ).toEqual([]);

      // What the commands claim is what happened, on the stack's own store.
      expect(result.output).not.toContain('admin: warning');
      expect(result.output).toMatch(
        /admin: the running stack's store: npm start \(pid \d+, http:\/\/127\.0\.0\.1:\d+\/api\/v2\)/,
      );
      expect(result.output).toMatch(/Revoked at-\w+\b/);
      expect(result.output).toContain('Registered run-CZcmD7eagjhyX0vN in example-org.');
      expect(result.output).toContain('"body":"Approved after review."');
      // A run announced by a signed notification, then commented on.
      expect(result.output).toMatch(/HTTP\/1\.1 204/);
      // The DELETE prints its status on a line of its own.
      expect(result.output).toMatch(/^204$/m);
      expect(result.output).toContain('"body":"Seen it arrive."');
      // A run's own workload identity token, trusted by the walkthrough, comments on the run as its sub.
      expect(result.output).toMatch(
        /"body":"Applied without a stored secret\.".*"created-by":\{"data":\{"id":"organization:example-org:project:Default Project:workspace:networking:run_phase:apply"/,
      );
      expect(result.output).toMatch(
        /Created trust trust-\w{16}: member of example-org, only on the run its terraform_run_id claim names/,
      );
    },
    SLOW,
  );
});
