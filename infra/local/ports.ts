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
