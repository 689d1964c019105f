import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { ESBUILD_OPTIONS } from '#infra/cdk/constructs/bundling';

/**
 * Node's `fetch` and its `Headers` load undici on first use: 25–40 ms of CPU that a cold
 * authorizer's first JWT would pay on top of discovery and the JWKS fetch. The keys are fetched
 * with node:http(s) instead, which the SDK has loaded already (shared/workload-identity/issuer-keys.ts).
 */
describe("a cold authorizer's first JWT", () => {
  it("fetches its issuer's discovery and keys and verifies the token without loading undici", async () => {
    const directory = mkdtempSync(join(tmpdir(), 'first-jwt-'));
    try {
      const outfile = join(directory, 'index.mjs');
      await build({
        ...ESBUILD_OPTIONS,
        entryPoints: [new URL('../support/first-jwt.ts', import.meta.url).pathname],
        outfile,
        logLevel: 'error',
      });
      const out = execFileSync(process.execPath, [outfile], { encoding: 'utf8', env: { PATH: process.env.PATH } });
      expect(JSON.parse(out)).toEqual({ subject: 'repo:acme/infra:ref:refs/heads/main', undici: [] });
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
