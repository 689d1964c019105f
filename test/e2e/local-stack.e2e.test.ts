import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { startDynamoDbLocal } from '#infra/local/aws/dynamodb-local';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, freePort, isAlive, run, runToEnd, TSX } from '../support/processes';
import { admin as runAdmin, jsonLine } from '../support/admin-cli';
import { expectWith } from '../support/expect-with';
import { keyDocument } from '../support/documents';

/**
 * `npm start` as a user runs it (the same script, in its own process, its own DynamoDB Local over
 * a DATA_DIR), and the admin CLI against it. Slow-ish: each start boots a JVM.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'tfc-start-'));
/** Each test boots JVMs and whole local stacks, twice for some: more than 30 s on a busy 2-core machine. */
const SLOW = 120_000;
const started: Array<ReturnType<typeof run>> = [];
// A start that a failed or timed-out test left running is stopped as a user stops it (its DynamoDB
// Local with it): SIGKILL would stop tsx alone and orphan the server it runs.
afterAll(async () => {
  const running = started.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
  if (running.length === 0) return;
  for (const p of running) p.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(running.map((p) => p.exited)),
    new Promise((r) => {
      timer = setTimeout(r, 15_000);
    }),
  ]);
  clearTimeout(timer);
  for (const p of running) p.child.kill('SIGKILL');
}, 30_000);

async function start(env: Record<string, string>) {
  const proc = run([TSX, 'infra/local/start.ts'], {
    DATA_DIR: dataDir,
    ISSUER_PORT: String(await freePort()),
    POWERTOOLS_LOG_LEVEL: undefined,
    TABLE_NAME: undefined,
    AWS_ENDPOINT_URL_DYNAMODB: undefined,
    ...env,
  });
  started.push(proc);
  const [, base] = await proc.waitFor(/API ready in [\d.]+ s at (\S+)/);
  const [, ddb] = await proc.waitFor(/DynamoDB Local on http:\/\/127\.0\.0\.1:(\d+)/);
  return { proc, base: base!, ddbPort: ddb! };
}

/** The admin CLI on this file's DATA_DIR (with --json, its stderr, collected too, says which store it used). */
const admin = (args: string[], env: Record<string, string>) =>
  runAdmin(args, { DATA_DIR: dataDir, TABLE_NAME: undefined, AWS_ENDPOINT_URL_DYNAMODB: undefined, ...env });

describe('npm start', () => {
  it(
    'seeds on first start, serves the API, keeps data across restarts, and stops everything on SIGINT',
    async () => {
      const port = String(await freePort());
      const ddbPort = String(await freePort());
      const first = await start({ PORT: port, DDB_PORT: ddbPort });
      expect(first.base).toBe(`http://127.0.0.1:${port}/api/v2`);
      const token = (await first.proc.waitFor(/TOKEN=(tfcapi_\w+)/))[1]!;
      expect(first.proc.output()).toMatch(
        /Seed of example-org: created its owner token at-\w+ and registered its run run-\w+\./,
      );
      expect(first.proc.output()).toMatch(
        new RegExp(`  export API=${first.base} TOKEN=${token} RUN=run-\\w{16} ISSUER=http://127\\.0\\.0\\.1:\\d+\n`),
      );
      // Its Try: lines print each answer on lines of its own, as the README's curl lines do: -i, or -w '\n'.
      await first.proc.waitFor(/^Ctrl-C stops/m);
      const tried = first.proc
        .output()
        .split('Try:\n')[1]!
        .split(/\n(?! )/)[0]!
        .replace(/\\\n/g, ' ')
        .split('\n');
      expect(tried.length).toBeGreaterThanOrEqual(3);
      expect(tried.filter((line) => !/ -i\b/.test(line) && !/ -w '\\n'/.test(line))).toEqual([]);

      // A second start over the same folder is refused while this one serves it.
      const twin = await runToEnd([TSX, 'infra/local/start.ts'], {
        DATA_DIR: dataDir,
        PORT: String(await freePort()),
        DDB_PORT: String(await freePort()),
        ISSUER_PORT: String(await freePort()),
      });
      expect(twin.code).toBe(1);
      expect(twin.output.trim()).toMatch(
        new RegExp(
          `^npm start: another npm start \\(pid \\d+, ${first.base}\\) already serves ${dataDir}; stop it first, or give this one its own DATA_DIR\\.$`,
        ),
      );

      const ping = await fetch(`${first.base}/ping`);
      expect(ping.status).toBe(204);
      expect(ping.headers.get('tfp-api-version')).toBe('2.6');
      expect((await fetch(`${first.base}/organizations/example-org/reserved-tag-keys`)).status).toBe(401);
      const createdKey = await fetch(`${first.base}/organizations/example-org/reserved-tag-keys`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/vnd.api+json' },
        body: JSON.stringify(keyDocument('environment')),
      });
      expect(createdKey.status).toBe(201);

      // The admin CLI finds the running stack's store through the data folder (no DDB_PORT given) and says so.
      const created = await admin(
        ['token', 'create', '--org', 'example-org', '--role', 'reader', '--subject', 'user-ci', '--json'],
        {},
      );
      expectWith(created.code, created.output).toBe(0);
      expect(created.output).toMatch(
        new RegExp(
          `admin: the running stack's store: npm start \\(pid \\d+, ${first.base}\\), DynamoDB Local on http://127.0.0.1:${ddbPort}, table tfc-tags-comments-local, data in ${dataDir}\n`,
        ),
      );
      const { id, tokenId, token: readerToken } = { id: undefined, ...jsonLine(created.output) };
      expect(id).toBeUndefined();
      expect(tokenId).toMatch(/^at-/);
      const asReader = await fetch(`${first.base}/organizations/example-org/reserved-tag-keys`, {
        headers: { Authorization: `Bearer ${readerToken}` },
      });
      expect(asReader.status).toBe(200);
      // The log: one access line per request, function lines labelled by route, no EMF metric lines.
      await first.proc.waitFor(/\[authorizer\] \{.*"message":"token accepted"/);
      expect(first.proc.output()).toMatch(
        /^POST \/api\/v2\/organizations\/example-org\/reserved-tag-keys 201 [\d.]+ms$/m,
      );
      expect(first.proc.output()).not.toContain('"_aws"');
      expect(first.proc.output()).not.toMatch(/\[\w+Function[0-9A-F]{8}\]/);
      // Revoked while the stack runs: its API Gateway may still hold an Allow for the token, and the CLI says so.
      const revoked = await admin(['token', 'revoke', tokenId], {});
      expectWith(revoked.code, revoked.output).toBe(0);
      expect(revoked.output).toContain(
        `The running npm start may still accept ${tokenId} for up to 60 s: API Gateway caches the authorizer's answer for each token.`,
      );

      const javaPid = Number(
        (await runToEnd(['pgrep', '-f', `DynamoDBLocal.jar.*-port ${ddbPort}`], {})).output.trim(),
      );
      expect(isAlive(javaPid)).toBe(true);
      first.proc.child.kill('SIGINT');
      expect(await first.proc.exited).toBe(0);
      expect(await eventually(() => !isAlive(javaPid))).toBe(true);

      // The CLI against the stopped stack warns that it works on a temporary store over the folder.
      const stopped = await admin(['token', 'list'], { DDB_PORT: ddbPort });
      expectWith(stopped.code, stopped.output).toBe(0);
      expect(stopped.output).toContain(
        `admin: warning: no stack is running (no npm start serves ${dataDir}, nothing answers on DDB_PORT ${ddbPort}).`,
      );
      expect(stopped.output).toContain(`admin: a temporary DynamoDB Local over ${dataDir}`);

      // Second start over the same DATA_DIR: no new seed token, the key and tokens are still there, and
      // the line to paste is the first start's, the token in it (kept in the data folder).
      const second = await start({ PORT: port, DDB_PORT: ddbPort, LOG_METRICS: '1' });
      expect(second.proc.output()).toMatch(
        /Seed of example-org: its owner token at-\w+ exists and its run run-\w+ exists\./,
      );
      const line = /^ {2}(export API=\S+ TOKEN=\S+ RUN=\S+ ISSUER=\S+)$/m.exec(second.proc.output())![1]!;
      expect(line).toContain(`TOKEN=${token} `);
      // Pasted in another directory (a second terminal), it sets a TOKEN the API accepts.
      const pasted = await runToEnd(['sh', '-c', `cd / && ${line} && printf '%s' "$TOKEN"`], {});
      expect(pasted.output).toBe(token);
      const listed = (await (
        await fetch(`${second.base}/organizations/example-org/reserved-tag-keys`, {
          headers: { Authorization: `Bearer ${token}` },
        })
      ).json()) as any;
      expect(listed.data.map((k: { attributes: { key: string } }) => k.attributes.key)).toEqual(['environment']);
      // Asked for (LOG_METRICS=1), the metric lines are printed too, labelled with the function's route.
      await second.proc.waitFor(
        /^\[GET \/api\/v2\/organizations\/\{organization_name\}\/reserved-tag-keys\] \{"_aws":/m,
      );
      second.proc.child.kill('SIGTERM');
      expect(await second.proc.exited).toBe(0);
    },
    SLOW,
  );
});

describe('npm start and what it did not start', () => {
  it(
    'refuses a DDB_PORT that a DynamoDB Local it did not start holds, and leaves that store untouched',
    async () => {
      const theirs = await startDynamoDbLocal();
      try {
        const port = await freePort();
        const refused = await runToEnd([TSX, 'infra/local/start.ts'], {
          DATA_DIR: mkdtempSync(join(tmpdir(), 'tfc-start-')),
          PORT: String(port),
          DDB_PORT: String(theirs.port),
          ISSUER_PORT: String(await freePort()),
        });
        expect(refused.code).toBe(1);
        expect(refused.output.trim()).toBe(
          `npm start: DDB_PORT ${theirs.port} (127.0.0.1:${theirs.port}, for DynamoDB Local) is already in use by a process this start did not start; stop it, or choose a free port: DDB_PORT=<port> npm start`,
        );
        const client = new DynamoDBClient({
          endpoint: theirs.endpoint,
          region: 'us-east-1',
          credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
        });
        expect((await client.send(new ListTablesCommand({}))).TableNames).toEqual([]);
        client.destroy();
        await expect(fetch(`http://127.0.0.1:${port}/api/v2/ping`)).rejects.toThrow();
      } finally {
        await theirs.stop();
      }
    },
    SLOW,
  );

  it(
    'refuses a PORT another process listens on, before starting anything',
    async () => {
      const server = createServer(() => {});
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      try {
        const dataDir = mkdtempSync(join(tmpdir(), 'tfc-start-'));
        const ddbPort = await freePort();
        const refused = await runToEnd([TSX, 'infra/local/start.ts'], {
          DATA_DIR: dataDir,
          PORT: String(port),
          DDB_PORT: String(ddbPort),
          ISSUER_PORT: String(await freePort()),
        });
        expect(refused.code).toBe(1);
        expect(refused.output.trim()).toBe(
          `npm start: PORT ${port} (127.0.0.1:${port}) is already in use by a process this start did not start; stop it, or choose a free port: PORT=<port> npm start`,
        );
        expect(readdirSync(dataDir)).toEqual([]);
        expect((await runToEnd(['pgrep', '-f', `DynamoDBLocal.jar.*-port ${ddbPort}`], {})).code).toBe(1);
      } finally {
        server.close();
      }
    },
    SLOW,
  );

  it(
    'seeds the first start over a folder even when the CLI wrote to it first, and says what it did',
    async () => {
      const env = { DATA_DIR: mkdtempSync(join(tmpdir(), 'tfc-start-')), DDB_PORT: String(await freePort()) };
      const before = await admin(
        ['token', 'create', '--org', 'example-org', '--role', 'reader', '--subject', 'user-early'],
        env,
      );
      expectWith(before.code, before.output).toBe(0);
      expect(before.output).toContain(
        `admin: warning: no stack is running (no npm start serves ${env.DATA_DIR}, nothing answers on DDB_PORT ${env.DDB_PORT}).`,
      );

      const { proc, base } = await start({ ...env, PORT: String(await freePort()) });
      const token = (await proc.waitFor(/TOKEN=(tfcapi_\w+)/))[1]!;
      expect(proc.output()).toMatch(
        /Seed of example-org: created its owner token at-\w+ and registered its run run-\w+\./,
      );
      const keys = await fetch(`${base}/organizations/example-org/reserved-tag-keys`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(keys.status).toBe(200);
      proc.child.kill('SIGINT');
      expect(await proc.exited).toBe(0);
    },
    SLOW,
  );
});

describe('admin CLI on the local store without npm start', () => {
  it(
    'creates, lists and revokes tokens, printing one JSON object with --json',
    async () => {
      const env = { DDB_PORT: String(await freePort()), DATA_DIR: mkdtempSync(join(tmpdir(), 'tfc-admin-')) };
      const created = await admin(
        ['token', 'create', '--org', 'acme', '--role', 'member', '--expires-in-days', '7', '--json'],
        env,
      );
      expectWith(created.code, created.output).toBe(0);
      const token = jsonLine(created.output);
      expect(token).toMatchObject({
        tokenId: expect.stringMatching(/^at-/),
        token: expect.stringMatching(/^tfcapi_/),
        grants: { acme: 'member' },
      });
      expect(Date.parse(token.expiresAt) - Date.now()).toBeGreaterThan(6.9 * 86_400_000);
      expect(token).not.toHaveProperty('tokenHash');

      const listed = await admin(['token', 'list', '--json'], env);
      const { tokens } = jsonLine(listed.output);
      expect(tokens.map((t: { tokenId: string }) => t.tokenId)).toEqual([token.tokenId]);
      expect(listed.output).not.toContain(token.token);

      const revoked = await admin(['token', 'revoke', token.tokenId, '--json'], env);
      expect(jsonLine(revoked.output)).toEqual({ tokenId: token.tokenId, revoked: true });
      const human = await admin(['token', 'list'], env);
      expect(human.output).toMatch(/TOKEN ID +SUBJECT +ROLES +CREATED \(UTC\) +EXPIRES \(UTC\) +STATE\n/);
      expect(human.output).toMatch(
        new RegExp(`${token.tokenId} +\\S+ +member@acme +[\\d-]+ [\\d:]+ +[\\d-]+ [\\d:]+ +revoked `),
      );
      // Revoking with no stack running: no API Gateway holds a cached answer for it.
      const again = await admin(['token', 'revoke', token.tokenId], env);
      expect(again.output).toContain(
        'No npm start is running, so no cached answer can accept it: the next start refuses it at once.',
      );
    },
    SLOW,
  );

  it(
    'refuses bad input with its usage and exit code 2',
    async () => {
      const env = { DDB_PORT: String(await freePort()), DATA_DIR: mkdtempSync(join(tmpdir(), 'tfc-admin-')) };
      const badRole = await admin(['token', 'create', '--org', 'acme', '--role', 'admin'], env);
      expect(badRole.code).toBe(2);
      expect(badRole.output).toContain('--role must be one of reader, member, owner');
      const unknown = await admin(['token', 'frobnicate'], env);
      expect(unknown.code).toBe(2);
      expect(unknown.output).toContain('admin: unknown command token frobnicate; token has create, list, revoke');
      const missing = await admin(['token', 'revoke', 'at-AAAAAAAAAAAAAAAA'], env);
      expect(missing.code).toBe(2);
      expect(missing.output).toContain('no token at-AAAAAAAAAAAAAAAA');
    },
    SLOW,
  );
});
