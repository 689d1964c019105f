import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { AUTHORIZER_FUNCTION } from '#shared/routes';
import { createToken } from '#shared/store/tokens';
import { createTrust } from '#shared/store/trusts';
import { LOOPBACK_ISSUERS_ENV } from '#shared/workload-identity/issuer-keys';
import { mintToken, newIssuerKey } from '#infra/local/oidc-issuer';
import type { ExtraContext, ExtraMeasurement } from './extras';
import type { ExtraFigure } from './goals';
import { median } from './stats';

/**
 * What workload identity costs the authorizer (issue 27), on its deployed bundle against
 * DynamoDB Local and an OpenID issuer of the bench's own on 127.0.0.1:
 * - per authorizer-cache miss, warm: a JWT (one Query of its issuer's trusts, then the signature
 *   and claims, keys held) against an operator token (one GetItem and a SHA-256), medians of
 *   WARM_SAMPLES invocations of each, interleaved, in one instance;
 * - cold: import plus first invocation with a JWT (discovery and JWKS fetched in it) against the
 *   same with an operator token, interleaved fresh processes: what the fetches add to a cold
 *   authorizer. The issuer is on loopback, so this is their CPU and local I/O; a real issuer adds
 *   two HTTPS round trips (discovery, then JWKS) on a new connection, once per instance.
 */
const WARM_SAMPLES = 200;
const ORGANIZATION = 'bench-identity';
const AUDIENCE = 'tfc-tags-comments';
const CLAIMS = { terraform_workspace_id: 'ws-bench' };

const eventOf = (credential: string, n: number) => ({
  type: 'REQUEST',
  methodArn: 'arn:aws:execute-api:us-east-1:000000000000:bench/local/GET/api/v2/ping',
  headers: { Authorization: `Bearer ${credential}` },
  requestContext: { requestId: `bench-identity-${n}` },
});

/** One instance: import, one warm-up of each credential, then `samples` of each, interleaved; per-invocation elapsed and CPU ms. */
function warmCosts(file: string, environment: Record<string, string>, events: { token: unknown[]; jwt: unknown[] }) {
  const script = `const events = JSON.parse(process.getBuiltinModule('node:fs').readFileSync(0, 'utf8'));
const context = { functionName: 'bench', awsRequestId: 'bench', getRemainingTimeInMillis: () => 10_000 };
const { handler } = await import(${JSON.stringify(pathToFileURL(file).href)});
const effect = (r) => r?.policyDocument?.Statement?.[0]?.Effect;
const costs = { token: [], jwt: [] }; const effects = [];
for (let i = 0; i < events.token.length; i++) {
  for (const kind of ['token', 'jwt']) {
    const cpu = process.cpuUsage(); const t = performance.now();
    const result = await handler(events[kind][i], context);
    const used = process.cpuUsage(cpu);
    if (i > 0) costs[kind].push([performance.now() - t, (used.user + used.system) / 1000]);
    effects.push(effect(result));
  }
}
console.log(JSON.stringify({ costs, effects }));
process.exit(0);`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH, ...environment },
    input: JSON.stringify(events),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as {
    costs: Record<'token' | 'jwt', Array<[number, number]>>;
    effects: string[];
  };
}

/** The issuer in its own process (oidc-issuer-process.ts): its URL, and the paths it served so far. */
async function startIssuerProcess(keys: unknown[]) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', new URL('./oidc-issuer-process.ts', import.meta.url).pathname],
    {
      env: { ...process.env, ISSUER_KEYS: JSON.stringify(keys) },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const served: string[] = [];
  const lines = createInterface({ input: child.stdout! });
  const [first] = (await once(lines, 'line')) as [string];
  lines.on('line', (line: string) => {
    if (line.startsWith('served ')) served.push(line.slice(7));
  });
  const url = /^issuer (\S+)$/.exec(first)?.[1];
  if (!url) throw new Error(`the bench's issuer did not start: ${first}`);
  return {
    url,
    served,
    close: async () => {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

async function measure(context: ExtraContext): Promise<ExtraFigure[]> {
  const key = await newIssuerKey('RS256');
  const issuer = await startIssuerProcess([key]);
  try {
    await createTrust({
      organization: ORGANIZATION,
      issuer: issuer.url,
      audience: AUDIENCE,
      role: 'member',
      claims: CLAIMS,
    });
    const { token } = await createToken({ subject: 'user-bench', grants: { [ORGANIZATION]: 'reader' } });
    const environment = { ...context.environment, [LOOPBACK_ISSUERS_ENV]: 'allowed' };
    const jwt = () => mintToken(issuer.url, key, { audience: AUDIENCE, subject: 'bench-workload', claims: CLAIMS });

    const jwts = await Promise.all(Array.from({ length: WARM_SAMPLES + 1 }, jwt));
    const warm = warmCosts(context.file, environment, {
      token: jwts.map((_, i) => eventOf(token, i)),
      jwt: jwts.map((t, i) => eventOf(t, i)),
    });
    if (warm.effects.some((e) => e !== 'Allow'))
      throw new Error(`the authorizer did not allow every bench credential: ${[...new Set(warm.effects)].join(', ')}`);

    const cold = { token: [] as number[][], jwt: [] as number[][] };
    for (let i = 0; i < context.samples; i++) {
      for (const kind of ['token', 'jwt'] as const) {
        const cost = context.coldStart(context.file, environment, eventOf(kind === 'jwt' ? await jwt() : token, i));
        if (cost.answer !== 'Allow')
          throw new Error(`a cold authorizer answered ${cost.answer} to the bench's ${kind}`);
        cold[kind].push([cost.total.wallMs, cost.total.cpuMs]);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 200)); // the issuer's lines of what it served, read
    const at = (rows: number[][], i: 0 | 1) => median(rows.map((r) => r[i]!));
    const figure = (measurement: string, value: number, unit: string): ExtraFigure => ({
      function: AUTHORIZER_FUNCTION,
      measurement,
      value,
      unit,
    });
    return [
      figure('cache miss, operator token (warm p50)', at(warm.costs.token, 0), 'ms'),
      figure('cache miss, workload identity JWT (warm p50)', at(warm.costs.jwt, 0), 'ms'),
      figure("cache miss, JWT CPU against a token's (warm p50)", at(warm.costs.jwt, 1) / at(warm.costs.token, 1), '×'),
      figure('cold, import + first call with a token (p50)', at(cold.token, 0), 'ms'),
      figure('cold, import + first call with a JWT: discovery and JWKS fetched (p50)', at(cold.jwt, 0), 'ms'),
      figure('what the key fetch adds to a cold authorizer (p50 elapsed)', at(cold.jwt, 0) - at(cold.token, 0), 'ms'),
      figure('what the key fetch adds to a cold authorizer (p50 CPU)', at(cold.jwt, 1) - at(cold.token, 1), 'ms'),
      figure(
        'JWKS fetches in all (one per cold instance, one for the warm one)',
        issuer.served.filter((path) => path === '/.well-known/jwks').length,
        'fetches',
      ),
    ];
  } finally {
    await issuer.close();
  }
}

export const workloadIdentityMeasurement: ExtraMeasurement = { function: AUTHORIZER_FUNCTION, measure };
