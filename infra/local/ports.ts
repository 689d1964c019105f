import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';

/**
 * Whether anything listens on 127.0.0.1:port: something that accepts a connection there, or holds
 * the port so that we could not bind it (a listener on 0.0.0.0 or [::] included).
 */
export async function portInUse(port: number): Promise<boolean> {
  return (await accepts(port)) || !(await bindable(port));
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Where freePort starts: above the ports tools and services take by default (3000, 8000, 8080…). */
const FIRST_PICKED_PORT = 20_000;

/** The lowest port the kernel gives outgoing connections: Linux's ip_local_port_range, else IANA's 49152. */
export function ephemeralPortsFrom(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 0) return low;
  } catch {
    // Not Linux.
  }
  return 49_152;
}

/**
 * A port of 127.0.0.1 free now, for a server that another process will bind (DynamoDB Local, a
 * local stack). Picked below the kernel's ephemeral ports: one of those (what listening on port 0
 * gives) can become the source port of any outgoing connection on the machine before the JVM or
 * the stack it was meant for has started, which then fails to bind it.
 */
export async function freePort(): Promise<number> {
  const below = ephemeralPortsFrom();
  for (let attempt = 0; below - FIRST_PICKED_PORT >= 1_000 && attempt < 100; attempt++) {
    const port = FIRST_PICKED_PORT + randomInt(below - FIRST_PICKED_PORT);
    if (await bindable(port)) return port;
  }
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
