import { describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:net';
import { ephemeralPortsFrom, freePort, portInUse } from '#infra/local/ports';

const listen = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => resolve(server));
  });

describe('freePort', () => {
  it('picks ports below the ones the kernel gives outgoing connections, which another process can still bind', async () => {
    // An ephemeral port can become an outgoing connection's source port before a starting JVM binds it.
    const from = ephemeralPortsFrom();
    expect(from).toBeGreaterThan(1_024);
    for (let i = 0; i < 20; i++) {
      const port = await freePort();
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(from);
      const server = await listen(port);
      expect(await portInUse(port)).toBe(true);
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
