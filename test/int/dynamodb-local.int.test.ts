import { describe, expect, it } from '@jest/globals';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDynamoDbLocal } from '#infra/local/aws/dynamodb-local';
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
