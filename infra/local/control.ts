import { createServer } from 'node:http';
import { detectionMs, type FrontRouter } from './front-router';
import type { LocalRegions } from './regions';

/**
 * The control endpoint of a multi-Region `npm start` (REGIONS): on 127.0.0.1 only, its address in
 * the stack record (infra/local/stack-record.ts), where `npm run admin -- region fail|recover`
 * finds it. The e2e test drives the same endpoint with the same client (`controlRegion`).
 *
 *   GET  /regions                 every Region: its address, whether it is down, the front's health of it
 *   POST /regions/NAME/fail       takes it down (infra/local/regions.ts: fail)
 *   POST /regions/NAME/recover    brings it back
 */

export interface RegionStatus {
  name: string;
  url: string;
  down: boolean;
  /** The front's health check's view of it. */
  healthy: boolean;
}

export interface ControlAnswer {
  regions: RegionStatus[];
  /** The Region the front routes to now. */
  front: { url: string; routesTo: string; detectionMs: number };
  /** For fail and recover: what changed (`failed`, `recovered`) or that it already was so (`unchanged`). */
  result?: 'failed' | 'recovered' | 'unchanged';
}

export interface ControlServer {
  url: string;
  close(): Promise<void>;
}

export async function startControl(regions: LocalRegions, front: FrontRouter): Promise<ControlServer> {
  const status = (): ControlAnswer => {
    const health = new Map(front.health().map((h) => [h.name, h.healthy]));
    return {
      regions: regions.regions.map((r) => ({
        name: r.name,
        url: r.url,
        down: r.down,
        healthy: health.get(r.name) ?? false,
      })),
      front: { url: front.url, routesTo: front.current(), detectionMs: detectionMs(front.settings) },
    };
  };
  const server = createServer((req, res) => {
    const answer = (code: number, body: unknown) => {
      res.writeHead(code, { 'Content-Type': 'application/json' });
      res.end(`${JSON.stringify(body)}\n`);
    };
    void (async () => {
      const path = (req.url ?? '/').split('?')[0]!;
      if (req.method === 'GET' && path === '/regions') return answer(200, status());
      const match = /^\/regions\/([^/]+)\/(fail|recover)$/.exec(path);
      if (!match || req.method !== 'POST')
        return answer(404, { error: `no ${req.method} ${path}: GET /regions, POST /regions/NAME/fail or /recover` });
      const region = regions.region(decodeURIComponent(match[1]!));
      if (!region)
        return answer(404, {
          error: `no Region ${match[1]} here: the Regions are ${regions.regions.map((r) => r.name).join(', ')}`,
        });
      const wasDown = region.down;
      if (match[2] === 'fail') await region.fail();
      else await region.recover();
      const result = wasDown === region.down ? 'unchanged' : region.down ? 'failed' : 'recovered';
      return answer(200, { ...status(), result });
    })().catch((error: Error) => answer(500, { error: error.message }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The control endpoint refused, or could not be reached: the message says what to do. */
export class ControlRefused extends Error {}

/** What the admin CLI and the tests call: `fail` or `recover` one Region, or `status` (no Region). */
export async function controlRegion(
  controlUrl: string,
  action: 'fail' | 'recover' | 'status',
  region?: string,
): Promise<ControlAnswer> {
  const url =
    action === 'status'
      ? `${controlUrl}/regions`
      : `${controlUrl}/regions/${encodeURIComponent(region ?? '')}/${action}`;
  let response: Response;
  try {
    response = await fetch(url, { method: action === 'status' ? 'GET' : 'POST' });
  } catch (error) {
    throw new ControlRefused(
      `the control endpoint of npm start (${controlUrl}) did not answer (${(error as Error).cause ?? (error as Error).message}): is it still running?`,
    );
  }
  const body = (await response.json()) as ControlAnswer & { error?: string };
  if (!response.ok) throw new ControlRefused(body.error ?? `the control endpoint answered ${response.status}`);
  return body;
}
