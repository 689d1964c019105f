import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { detectionMs, healthCheckSettings, startFrontRouter, type FrontRouter } from '#infra/local/front-router';
import { localRegionNames } from '#infra/local/regions';

/** The settings of `REGIONS=… npm start`, and the front's health checks against two small servers standing in for Regions. */
describe('REGIONS and the health check settings', () => {
  it('REGIONS: two or three Region names, else one line naming what is wrong', () => {
    expect(localRegionNames({})).toBeUndefined();
    expect(localRegionNames({ REGIONS: ' ' })).toBeUndefined();
    expect(localRegionNames({ REGIONS: 'us-east-1, us-east-2' })).toEqual(['us-east-1', 'us-east-2']);
    expect(() => localRegionNames({ REGIONS: 'us-east-1,us_east_2' })).toThrow('"us_east_2" is not a Region\'s name');
    expect(() => localRegionNames({ REGIONS: 'us-east-1,us-east-1' })).toThrow('names a Region twice');
    expect(() => localRegionNames({ REGIONS: 'us-east-1' })).toThrow('name two or three');
  });

  it('the health check: 2 s × 3 by default, 7 s to leave a failed Region; the variables override, a bad one is refused', () => {
    expect(healthCheckSettings({})).toEqual({
      intervalMs: 2_000,
      failureThreshold: 3,
      timeoutMs: 1_000,
      path: '/api/v2/health',
    });
    expect(detectionMs(healthCheckSettings({}))).toBe(7_000);
    expect(
      healthCheckSettings({ HEALTH_CHECK_INTERVAL_SECONDS: '0.5', HEALTH_CHECK_FAILURE_THRESHOLD: '2' }),
    ).toMatchObject({ intervalMs: 500, failureThreshold: 2, timeoutMs: 500 });
    expect(() => healthCheckSettings({ HEALTH_CHECK_INTERVAL_SECONDS: 'fast' })).toThrow(
      'HEALTH_CHECK_INTERVAL_SECONDS=fast is not an interval',
    );
    expect(() => healthCheckSettings({ HEALTH_CHECK_FAILURE_THRESHOLD: '0' })).toThrow(
      'HEALTH_CHECK_FAILURE_THRESHOLD=0 is not a threshold',
    );
  });
});

describe('the front', () => {
  const closing: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await Promise.all(closing.splice(0).map((close) => close()));
  });

  /** A stand-in Region: answers 204 to the check and its name to anything else; `down()` closes it, `up()` reopens it on its port. */
  async function fakeRegion(name: string) {
    let server: Server;
    const open = (port: number) =>
      new Promise<number>((resolve) => {
        server = createServer((req, res) => {
          res.writeHead(req.url === '/api/v2/ping' ? 204 : 200);
          res.end(req.url === '/api/v2/ping' ? undefined : name);
        });
        server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
      });
    const port = await open(0);
    const down = () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    closing.push(async () => {
      if (server.listening) await down();
    });
    return { name, url: `http://127.0.0.1:${port}`, down, up: () => open(port) };
  }

  const via = async (front: FrontRouter) => (await fetch(`${front.url}/anything`)).text();

  it('routes to the primary; leaves it within the stated time once it fails; returns once it passes its checks again', async () => {
    const [a, b] = [await fakeRegion('a'), await fakeRegion('b')];
    const settings = { intervalMs: 100, failureThreshold: 3, timeoutMs: 100, path: '/api/v2/ping' };
    const changes: string[] = [];
    const front = await startFrontRouter({
      regions: [a, b],
      settings,
      onChange: (c) => changes.push(`${c.region} ${c.healthy}`),
    });
    closing.push(() => front.close());
    expect(await via(front)).toBe('a');

    await a.down();
    const failedAt = Date.now();
    // Until the checks decide, requests still go to the failed Region: no answer.
    await expect(via(front)).rejects.toThrow();
    while (front.current() !== 'b') await new Promise((r) => setTimeout(r, 10));
    // Plus a loaded machine's timer delays (CI runs this beside 60 Lambda processes: 757 ms once).
    expect(Date.now() - failedAt).toBeLessThanOrEqual(detectionMs(settings) + 1_000);
    expect(await via(front)).toBe('b');
    expect(front.health()).toEqual([
      { name: 'a', url: a.url, healthy: false },
      { name: 'b', url: b.url, healthy: true },
    ]);

    await a.up();
    while (front.current() !== 'a') await new Promise((r) => setTimeout(r, 10));
    expect(await via(front)).toBe('a');
    expect(changes).toEqual(['a false', 'a true']);
  }, 20_000);

  it('fails open to the primary when no Region is healthy, as Route 53 answers with every record', async () => {
    const [a, b] = [await fakeRegion('a'), await fakeRegion('b')];
    const front = await startFrontRouter({
      regions: [a, b],
      settings: { intervalMs: 50, failureThreshold: 1, timeoutMs: 50, path: '/api/v2/ping' },
    });
    closing.push(() => front.close());
    await a.down();
    await b.down();
    while (front.health().some((h) => h.healthy)) await new Promise((r) => setTimeout(r, 10));
    expect(front.current()).toBe('a');
  }, 20_000);
});
