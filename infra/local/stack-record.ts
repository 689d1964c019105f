import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What a running `npm start` writes into its data folder, so that the operator CLI (and a second
 * `npm start`) can tell which stack serves that folder, on which ports, and whether it still runs.
 */
export interface StackRecord {
  pid: number;
  port: number;
  ddbPort: number;
  tableName: string;
  apiUrl: string;
  /** The local OpenID issuer it serves (infra/local/oidc-issuer.ts). */
  issuerUrl?: string;
  /** With REGIONS: the control endpoint (infra/local/control.ts) that `npm run admin -- region` calls. */
  controlUrl?: string;
  /** With REGIONS: each Region's own API address (apiUrl is then the front's). */
  regions?: Array<{ name: string; apiUrl: string }>;
}

const recordFile = (dataDir: string) => join(dataDir, 'npm-start.json');

export function writeStackRecord(dataDir: string, record: StackRecord): void {
  writeFileSync(recordFile(dataDir), `${JSON.stringify(record)}\n`);
}

/** Removes the record, but only this process's own (a later start may have replaced it). */
export function removeStackRecord(dataDir: string): void {
  if (readStackRecord(dataDir)?.pid === process.pid) rmSync(recordFile(dataDir), { force: true });
}

/** The record of the `npm start` serving this folder right now; none when it is gone. */
export function runningStack(dataDir: string): StackRecord | undefined {
  const record = readStackRecord(dataDir);
  return record && record.pid !== process.pid && isAlive(record.pid) ? record : undefined;
}

function readStackRecord(dataDir: string): StackRecord | undefined {
  try {
    return JSON.parse(readFileSync(recordFile(dataDir), 'utf8')) as StackRecord;
  } catch {
    return undefined;
  }
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
