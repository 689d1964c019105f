import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { API_BASE_PATH } from '#shared/config';
import { HEALTH_ROUTE } from '#shared/health';

/**
 * The local stand-in for the health-checked Route 53 failover records before the Regions' APIs:
 * each request goes to the first healthy Region in the order given, health decided as a Route 53
 * health check decides it (`intervalMs`, `failureThreshold`, `timeoutMs`), and to the primary when
 * none is healthy, as Route 53 fails open. It never retries: a Region lost mid-request cuts the
 * connection, as for a caller connected to it. With no record TTL, a failed Region is left within
 * `detectionMs` (docs/development.md, "Two local Regions, and failing one").
 */

export const HEALTH_CHECK_INTERVAL_ENV = 'HEALTH_CHECK_INTERVAL_SECONDS';
export const HEALTH_CHECK_FAILURES_ENV = 'HEALTH_CHECK_FAILURE_THRESHOLD';

export interface HealthCheckSettings {
  intervalMs: number;
  failureThreshold: number;
  /** One check's time to answer. */
  timeoutMs: number;
  /** What each check requests, under the Region's address. */
  path: string;
}

/** The local defaults: 2 s × 3 (Route 53's fast checks are 10 s × 3; see docs/deploying.md). */
export const DEFAULT_HEALTH_CHECK: HealthCheckSettings = {
  intervalMs: 2_000,
  failureThreshold: 3,
  timeoutMs: 1_000,
  // The deep health route, as each Region's Route 53 health check calls it: the local stage has it.
  path: `${API_BASE_PATH}${HEALTH_ROUTE.path}`,
};

/** The longest a failed Region keeps receiving requests: the checks it takes to fail it, and the last one's timeout. */
export const detectionMs = (settings: HealthCheckSettings) =>
  settings.intervalMs * settings.failureThreshold + settings.timeoutMs;

/** HEALTH_CHECK_INTERVAL_SECONDS and HEALTH_CHECK_FAILURE_THRESHOLD over the defaults; throws one line naming a bad one. */
export function healthCheckSettings(env: NodeJS.ProcessEnv = process.env): HealthCheckSettings {
  const settings = { ...DEFAULT_HEALTH_CHECK };
  const interval = env[HEALTH_CHECK_INTERVAL_ENV]?.trim();
  if (interval) {
    const seconds = Number(interval);
    if (!Number.isFinite(seconds) || seconds < 0.1 || seconds > 60)
      throw new Error(
        `${HEALTH_CHECK_INTERVAL_ENV}=${interval} is not an interval: give seconds from 0.1 to 60, e.g. 2`,
      );
    settings.intervalMs = Math.round(seconds * 1000);
    settings.timeoutMs = Math.min(settings.timeoutMs, settings.intervalMs);
  }
  const failures = env[HEALTH_CHECK_FAILURES_ENV]?.trim();
  if (failures) {
    const n = Number(failures);
    if (!Number.isInteger(n) || n < 1 || n > 10)
      throw new Error(
        `${HEALTH_CHECK_FAILURES_ENV}=${failures} is not a threshold: give a whole number from 1 to 10 (Route 53's range), e.g. 3`,
      );
    settings.failureThreshold = n;
  }
  return settings;
}

/** One line: the settings and the detection time they give. */
export const healthCheckLine = (s: HealthCheckSettings) =>
  `Health checks: GET ${s.path} on each Region every ${s.intervalMs / 1000} s (${HEALTH_CHECK_INTERVAL_ENV}), unhealthy after ${s.failureThreshold} consecutive failures (${HEALTH_CHECK_FAILURES_ENV}), ${s.timeoutMs / 1000} s to answer: a failed Region is left within ${detectionMs(s) / 1000} s`;

export interface RegionTarget {
  name: string;
  /** http://127.0.0.1:PORT */
  url: string;
}

export interface HealthChange {
  region: string;
  healthy: boolean;
  /** Date.now() when the check decided. */
  at: number;
}

export interface FrontRouter {
  url: string;
  port: number;
  settings: HealthCheckSettings;
  /** Each Region's health now. */
  health(): Array<{ name: string; url: string; healthy: boolean }>;
  /** The Region a request would go to now. */
  current(): string;
  /** Every change of a Region's health so far (oldest first). */
  changes: HealthChange[];
  close(): Promise<void>;
}

export async function startFrontRouter(options: {
  regions: RegionTarget[];
  port?: number;
  settings?: HealthCheckSettings;
  onChange?(change: HealthChange): void;
}): Promise<FrontRouter> {
  const settings = options.settings ?? DEFAULT_HEALTH_CHECK;
  const state = options.regions.map((region) => ({
    ...region,
    healthy: true,
    failures: 0,
    successes: 0,
    checking: false,
  }));
  const changes: HealthChange[] = [];
  const current = () => state.find((r) => r.healthy) ?? state[0]!;

  const server = createServer((req, res) => relay(req, res, current().url));
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: Error) =>
      reject(new Error(`could not serve the front on 127.0.0.1:${options.port ?? 0}: ${error.message}`)),
    );
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as { port: number };

  const check = async (region: (typeof state)[number]) => {
    if (region.checking) return;
    region.checking = true;
    const ok = await probe(`${region.url}${settings.path}`, settings.timeoutMs);
    region.checking = false;
    if (ok) {
      region.successes++;
      region.failures = 0;
    } else {
      region.failures++;
      region.successes = 0;
    }
    const flip = region.healthy
      ? region.failures >= settings.failureThreshold
      : region.successes >= settings.failureThreshold;
    if (flip) {
      region.healthy = !region.healthy;
      const change = { region: region.name, healthy: region.healthy, at: Date.now() };
      changes.push(change);
      options.onChange?.(change);
    }
  };
  const timer = setInterval(() => {
    for (const region of state) void check(region);
  }, settings.intervalMs);
  timer.unref();

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    settings,
    health: () => state.map(({ name, url, healthy }) => ({ name, url, healthy })),
    current: () => current().name,
    changes,
    async close() {
      clearInterval(timer);
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}

/** One health check: a 2xx or 3xx within the timeout. */
function probe(url: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = httpRequest(url, { method: 'GET', agent: false, timeout: timeoutMs }, (answer) => {
      answer.resume();
      answer.once('end', () => resolve((answer.statusCode ?? 0) >= 200 && (answer.statusCode ?? 0) < 400));
      answer.once('error', () => resolve(false));
    });
    request.once('timeout', () => {
      request.destroy();
      resolve(false);
    });
    request.once('error', () => resolve(false));
    request.end();
  });
}

/** The request, as it came, to the Region; its answer back. No answer from the Region: the caller's connection is cut. */
function relay(req: IncomingMessage, res: ServerResponse, target: string): void {
  const url = new URL(target);
  const upstream = httpRequest(
    {
      host: url.hostname,
      port: url.port,
      method: req.method,
      path: req.url,
      headers: req.headers,
      agent: false,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
      answer.pipe(res);
      // Cut before its end (the Region lost mid-answer): so is the caller's.
      answer.once('close', () => {
        if (!answer.complete) res.destroy();
      });
    },
  );
  upstream.once('error', () => res.destroy());
  req.once('aborted', () => upstream.destroy());
  req.pipe(upstream);
}
