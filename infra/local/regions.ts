import { createServer, type Server, type Socket, connect } from 'node:net';
import { startLocalStack, type LocalStack, type LocalStackOptions } from './local-stack';
import { InFlightWrites, type MrscOptions } from './aws/mrsc';

/**
 * Several local Regions over ONE DynamoDB Local, as an MRSC global table's replica Regions over
 * their one table: each a whole local stack of its own, their IAM proxies sharing one
 * `InFlightWrites` so that two Regions writing one item at once meet a replicated write conflict
 * (aws/mrsc.ts). Each is served through a switch that `fail()` turns off, as a Region lost
 * mid-load: connections refused or cut, Lambda instances killed where they are, their writes so
 * far kept. docs/development.md, "Two local Regions, and failing one".
 */

/** The variable that names the local Regions: `REGIONS=us-east-1,us-east-2 npm start`. */
export const REGIONS_ENV = 'REGIONS';
const REGION_SHAPE = /^[a-z]{2}(-gov)?-[a-z]+-\d$/;

/** REGIONS as a list: undefined when unset or empty (one Region, npm start as ever); throws one line naming what is wrong. */
export function localRegionNames(env: NodeJS.ProcessEnv = process.env): string[] | undefined {
  const raw = env[REGIONS_ENV]?.trim();
  if (!raw) return undefined;
  const names = raw.split(',').map((name) => name.trim());
  const bad = names.find((name) => !REGION_SHAPE.test(name));
  if (bad !== undefined)
    throw new Error(
      `${REGIONS_ENV}=${raw}: "${bad}" is not a Region's name; give two or three, comma-separated, e.g. ${REGIONS_ENV}=us-east-1,us-east-2`,
    );
  if (new Set(names).size !== names.length) throw new Error(`${REGIONS_ENV}=${raw} names a Region twice`);
  if (names.length < 2 || names.length > 3)
    throw new Error(`${REGIONS_ENV}=${raw}: an MRSC table has two or three replica Regions; name two or three`);
  return names;
}

export interface LocalRegion {
  name: string;
  /** The Region's own address (its API's root): http://127.0.0.1:PORT. */
  url: string;
  port: number;
  /** The Region's local stack (serving on an inner port the switch relays to). */
  stack: LocalStack;
  /** Failed (by `fail()`), not yet recovered. */
  readonly down: boolean;
  /** Takes the Region down: refuses and cuts connections, kills its Lambda instances. Idempotent. */
  fail(): Promise<void>;
  /** Brings it back on the same address. Idempotent. */
  recover(): Promise<void>;
}

export interface LocalRegions {
  regions: LocalRegion[];
  region(name: string): LocalRegion | undefined;
  /** The writes in flight through every Region's IAM proxy, by item. */
  inFlightWrites: InFlightWrites;
  close(): Promise<void>;
}

export interface LocalRegionsOptions {
  names: string[];
  /** Each Region's stack options (one DynamoDB Local endpoint and table for all); the port and MRSC Region are set here. */
  stack: Omit<LocalStackOptions, 'port' | 'mrsc' | 'onRequest'>;
  /** Each request a Region served, with its name (npm start prints `[us-east-1] GET … 200`). */
  onRequest?(region: string, entry: Parameters<NonNullable<LocalStackOptions['onRequest']>>[0]): void;
  /** MRSC settings besides the shared in-flight writes and the Region (the injected conflict rate, …). */
  mrsc?: Omit<MrscOptions, 'inFlightWrites' | 'region'>;
  /** Each Region's address port, in order; 0 or missing: a free port. */
  ports?: number[];
}

export async function startRegions(options: LocalRegionsOptions): Promise<LocalRegions> {
  const inFlightWrites = new InFlightWrites();
  const regions: LocalRegion[] = [];
  try {
    for (const [index, name] of options.names.entries()) {
      const stack = await startLocalStack({
        ...options.stack,
        port: 0,
        mrsc: { ...options.mrsc, inFlightWrites, region: name },
        ...(options.onRequest ? { onRequest: (entry) => options.onRequest!(name, entry) } : {}),
      });
      try {
        regions.push(await regionOf(name, stack, options.ports?.[index] ?? 0));
      } catch (error) {
        await stack.close();
        throw error;
      }
    }
  } catch (error) {
    await Promise.all(regions.map(closeRegion));
    throw error;
  }
  return {
    regions,
    region: (name) => regions.find((r) => r.name === name),
    inFlightWrites,
    close: async () => {
      await Promise.all(regions.map(closeRegion));
    },
  };
}

const closeRegion = async (region: LocalRegion) => {
  await region.fail();
  await region.stack.close();
};

async function regionOf(name: string, stack: LocalStack, wantedPort: number): Promise<LocalRegion> {
  const sockets = new Set<Socket>();
  let down = false;
  // While down, no invocation starts: a request already past the gateway's door ends as Lambda's
  // own failure would, and its answer goes nowhere (the connection is cut).
  const invoke = stack.lambda.invoke.bind(stack.lambda);
  stack.lambda.invoke = (target, event) =>
    down
      ? Promise.resolve({
          ok: false,
          error: { errorType: 'Runtime.ExitError', errorMessage: `Region ${name} is down` },
          coldStart: false,
          instanceId: '',
        })
      : invoke(target, event);

  let server: Server = relay();
  function relay(): Server {
    return createServer((client) => {
      const upstream = connect(stack.port, '127.0.0.1');
      sockets.add(client).add(upstream);
      const end = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
      client.pipe(upstream).pipe(client);
    });
  }
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.removeListener('error', reject);
        resolve((server.address() as { port: number }).port);
      });
    });
  const port = await listen(wantedPort).catch((error: Error) => {
    throw new Error(`could not serve Region ${name} on 127.0.0.1:${wantedPort}: ${error.message}`);
  });

  return {
    name,
    url: `http://127.0.0.1:${port}`,
    port,
    stack,
    get down() {
      return down;
    },
    async fail() {
      if (down) return;
      down = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      await Promise.all([closed, stack.lambda.close()]);
    },
    async recover() {
      if (!down) return;
      server = relay();
      await listen(port);
      down = false;
    },
  };
}
