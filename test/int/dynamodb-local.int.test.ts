import { describe, expect, it } from '@jest/globals';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDynamoDbLocal } from '#infra/local/aws/dynamodb-local';
import { PROJECT_TMP } from '#infra/local/settings';
import { eventually, isAlive, run, runToEnd, TSX } from '../support/processes';

describe('embedded DynamoDB Local', () => {
  it('says in one line when Java is missing', async () => {
    const path = process.env.PATH;
    process.env.PATH = mkdtempSync(join(tmpdir(), 'no-java-'));
    try {
      await expect(startDynamoDbLocal()).rejects.toThrow(
        'DynamoDB Local needs Java 17 or newer, and no `java` was found on PATH.',
      );
    } finally {
      process.env.PATH = path;
    }
  });

  it('says in one line when Java is older than 17', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'old-java-'));
    writeFileSync(join(dir, 'java'), '#!/bin/sh\necho \'openjdk version "11.0.22" 2024-01-16\' >&2\n');
    chmodSync(join(dir, 'java'), 0o755);
    const path = process.env.PATH;
    process.env.PATH = `${dir}:${path}`;
    try {
      await expect(startDynamoDbLocal()).rejects.toThrow(
        'DynamoDB Local needs Java 17 or newer; `java -version` reports 11.',
      );
    } finally {
      process.env.PATH = path;
    }
  });

  it('does not outlive a parent that is killed with SIGKILL', async () => {
    const parent = run([TSX, 'test/support/fixtures/dynamodb-local-parent.ts'], {});
    const [, java, node] = await parent.waitFor(/JAVA_PID=(\d+) PARENT_PID=(\d+)/);
    const javaPid = Number(java);
    expect(isAlive(javaPid)).toBe(true);
    process.kill(Number(node), 'SIGKILL'); // the node process itself, not tsx's wrapper around it
    expect(await eventually(() => !isAlive(javaPid))).toBe(true);
  });
});

describe('a DynamoDB Local that dies without stop()', () => {
  it('takes its watchdog with it, holds nothing of its parent open, and is no longer registered', async () => {
    // Before, the watchdog waited on, holding a pipe that kept its parent (a jest worker) from exiting.
    const pipes = () => process.getActiveResourcesInfo().filter((name) => name === 'PipeWrap').length;
    const pipesBefore = pipes();
    const store = await startDynamoDbLocal();
    const watchdogs = () =>
      readdirSync('/proc')
        .filter((entry) => /^\d+$/.test(entry))
        .filter((entry) => {
          try {
            return readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(`kill -9 ${store.pid}`);
          } catch {
            return false; // gone meanwhile
          }
        });
    const registered = () => existsSync(join(PROJECT_TMP, 'dynamodb-local', `${store.pid}.json`));
    expect([watchdogs().length, registered()]).toEqual([1, true]);
    process.kill(store.pid, 'SIGKILL');
    expect(await eventually(() => watchdogs().length === 0 && pipes() === pipesBefore && !registered())).toBe(true);
    await store.stop(); // stopping it afterwards is harmless
  }, 60_000);
});

describe('a DynamoDB Local orphaned with its watchdog', () => {
  it('is swept by the next start', async () => {
    const parent = run([TSX, 'test/support/fixtures/dynamodb-local-parent.ts'], {});
    const [, java, node] = await parent.waitFor(/JAVA_PID=(\d+) PARENT_PID=(\d+)/);
    const javaPid = Number(java);
    // Kill the watchdog first, then the parent: nothing is left to stop java but the next start.
    await runToEnd(['pkill', '-f', `kill -9 ${javaPid}`], {});
    process.kill(Number(node), 'SIGKILL');
    await new Promise((r) => setTimeout(r, 1000));
    expect(isAlive(javaPid)).toBe(true);
    const next = await startDynamoDbLocal();
    try {
      expect(await eventually(() => !isAlive(javaPid))).toBe(true);
    } finally {
      await next.stop();
    }
  }, 60_000);
});
