import { request as httpRequest } from 'node:http';
import { parseArgs } from 'node:util';
import { apiUrlOf, startLocalTarget, type Target } from './target';
import { supported } from './report';

/**
 * `npm run hot-spots`: many writers on one run and on one organization, as HCP Terraform's run
 * tasks, policy checks and CI bots meet there. For each writer count, N clients write for the
 * given time (comment creates on one run; reserved tag key create-then-delete pairs in one
 * organization), each sending its next request when the last was answered. Prints throughput,
 * p50/p90/p99 (each only with enough samples to show it) and the answers that were not 2xx, then
 * checks the run lists every comment answered 201, and beyond them at most those answered 503 with
 * an unknown outcome (exits 1 otherwise, or on any 5xx other than a 503 with Retry-After).
 * Then bursts: N comment creates sent at once on a new run, one per client, three times; the first
 * meets cold instances and authorizer caches, the others what a service in use has: instances
 * started, and each client's token authorized in the last minute (--burst).
 */
const USAGE = `Usage: npm run hot-spots -- [options]

  --writers LIST   writer counts, comma-separated (default 1,4,16,60)
  --seconds S      how long each writer count writes (default 10)
  --burst N        then N comment creates at once on a new run, three bursts (default 60; 0: none)
  --target URL     a deployed API: its TfeAddress (with or without /api/v2); default: a local stack of its own (npm start)
  --token T        a token of the organization's owner (repeatable: spread over writers)
  --org O          the organization (with --target)
  --run R          a new registered run of that organization (no comments yet),
                   one per writer count and one per burst (repeatable)
  -h, --help       this text`;

const { values } = parseArgs({
  options: {
    writers: { type: 'string', default: '1,4,16,60' },
    seconds: { type: 'string', default: '10' },
    burst: { type: 'string', default: '60' },
    target: { type: 'string' },
    token: { type: 'string', multiple: true },
    org: { type: 'string' },
    run: { type: 'string', multiple: true },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const writerCounts = values.writers.split(',').map(Number);
const seconds = Number(values.seconds);
const burst = Number(values.burst);
const BURSTS = 3;
if (
  writerCounts.some((n) => !Number.isInteger(n) || n < 1) ||
  !(seconds > 0) ||
  !(Number.isInteger(burst) && burst >= 0)
) {
  console.error(
    `hot-spots: --writers takes positive integers, --seconds a positive number, --burst a whole number\n\n${USAGE}`,
  );
  process.exit(2);
}
const runsNeeded = writerCounts.length + (burst > 0 ? BURSTS : 0);
if (values.target && (!values.token?.length || !values.org || (values.run?.length ?? 0) < runsNeeded)) {
  console.error(`hot-spots: --target needs --token, --org and ${runsNeeded} --run (one per writer count and burst)`);
  process.exit(2);
}

interface Answer {
  status: number;
  ms: number;
  retryAfter: string | null;
  detail?: string;
}

/**
 * One request. Against the local stack each writer is its own client address (127.0.0.N), as
 * separate clients are: the web ACL's per-address limit (100 req/s) would otherwise count every
 * writer of this one machine together, and throttle the measurement instead of the hot spot.
 */
async function send(
  target: Target,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  client = 0,
): Promise<Answer & { json: any }> {
  const started = performance.now();
  const url = new URL(`${target.apiUrl}${path}`);
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/vnd.api+json' };
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const { status, retryAfter, errorType, text } =
    url.protocol === 'http:' && url.hostname === '127.0.0.1'
      ? await new Promise<{ status: number; retryAfter: string | null; errorType: string | null; text: string }>(
          (resolve, reject) => {
            const request = httpRequest(
              url,
              { method, headers, localAddress: `127.0.0.${2 + (client % 250)}` },
              (response) => {
                let received = '';
                response
                  .setEncoding('utf8')
                  .on('data', (chunk: string) => {
                    received += chunk;
                  })
                  .on('end', () =>
                    resolve({
                      status: response.statusCode!,
                      retryAfter: (response.headers['retry-after'] as string | undefined) ?? null,
                      errorType: (response.headers['x-amzn-errortype'] as string | undefined) ?? null,
                      text: received,
                    }),
                  );
              },
            ).on('error', reject);
            request.end(payload);
          },
        )
      : await fetch(url, { method, headers, ...(payload === undefined ? {} : { body: payload }) }).then(
          async (response) => ({
            status: response.status,
            retryAfter: response.headers.get('retry-after'),
            errorType: response.headers.get('x-amzn-errortype'),
            text: await response.text(),
          }),
        );
  const json = text ? JSON.parse(text) : undefined;
  const detail = json?.errors?.[0]?.detail ?? (errorType ? `(the gateway's ${errorType})` : undefined);
  return { status, ms: performance.now() - started, retryAfter, json, detail };
}

/** `writers` clients each sending `request(writer, n)` in a loop until the time is up. */
async function writeFor(
  writers: number,
  request: (writer: number, n: number) => Promise<Answer[]>,
): Promise<{ answers: Answer[]; elapsed: number }> {
  const answers: Answer[] = [];
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: writers }, async (_, writer) => {
      for (let n = 0; performance.now() < until; n++) answers.push(...(await request(writer, n)));
    }),
  );
  return { answers, elapsed: (performance.now() - started) / 1000 };
}

/** The ids of every comment a run lists, page by page; the total count must agree with them. */
async function listComments(target: Target, lister: string, runId: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let page = 1; ; page++) {
    const listed = await send(target, lister, 'GET', `/runs/${runId}/comments?page[size]=100&page[number]=${page}`);
    if (listed.status !== 200)
      throw new Error(`listing run ${runId} answered ${listed.status}: ${JSON.stringify(listed.json)}`);
    for (const comment of listed.json.data) ids.add(comment.id);
    const { 'total-count': total, 'next-page': next } = listed.json.meta.pagination;
    if (next === null) {
      if (total !== ids.size) throw new Error(`run ${runId} counts ${total} comments and lists ${ids.size}`);
      return ids;
    }
  }
}

const rows: string[][] = [];
/** Why answers were not 2xx: each distinct status and detail, counted over the whole run. */
const reasons = new Map<string, number>();
let wrong = 0;
function report(spot: string, writers: number, { answers, elapsed }: { answers: Answer[]; elapsed: number }): void {
  const sorted = answers.map((a) => a.ms).sort((a, b) => a - b);
  const at = (p: number) =>
    supported(p, sorted.length)
      ? `${Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!)}`
      : '—';
  const statuses = Object.entries(
    answers.reduce<Record<number, number>>((c, a) => ({ ...c, [a.status]: (c[a.status] ?? 0) + 1 }), {}),
  )
    .map(([status, count]) => `${status}×${count}`)
    .join(' ');
  const not2xx = answers.filter((a) => a.status >= 300).length;
  for (const a of answers.filter((answer) => answer.status >= 300)) {
    const reason = `${a.status} ${a.detail ?? '(no detail)'}`;
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  const unearned = answers.filter((a) => a.status >= 500 && !(a.status === 503 && a.retryAfter));
  wrong += unearned.length;
  rows.push([
    spot,
    String(writers),
    String(answers.length),
    (answers.length / elapsed).toFixed(1),
    at(50),
    at(90),
    at(99),
    `${((100 * not2xx) / Math.max(1, answers.length)).toFixed(1)}%`,
    statuses,
  ]);
}

/**
 * The run lists every comment answered 201, and beyond them at most as many as were answered 503
 * with an unknown outcome (a client learns which by retrying); counted as wrong otherwise.
 */
async function checkListed(target: Target, lister: string, runId: string, created: string[], answers: Answer[]) {
  const listedIds = await listComments(target, lister, runId);
  const unlisted = created.filter((id) => !listedIds.has(id));
  const maybe = answers.filter((a) => a.status === 503 && /outcome is unknown/.test(a.detail ?? '')).length;
  if (unlisted.length > 0 || listedIds.size > created.length + maybe) {
    console.error(
      `run ${runId}: ${created.length} comments answered 201 (${unlisted.length} of them not listed) and ${maybe} with an unknown outcome; ${listedIds.size} listed`,
    );
    wrong++;
  }
}

/**
 * One read per client, a few at a time (not a burst of its own), until each was answered 200: its
 * token's authorization is then in the gateway's cache for a minute.
 */
async function authorizeEach(
  target: Target,
  runId: string,
  clients: number,
  tokenOf: (client: number) => string,
  firstClient: number,
): Promise<void> {
  const AT_ONCE = 6;
  for (let from = 0; from < clients; from += AT_ONCE) {
    await Promise.all(
      Array.from({ length: Math.min(AT_ONCE, clients - from) }, async (_, i) => {
        const client = from + i;
        for (let tries = 1; tries <= 5; tries++) {
          const path = `/runs/${runId}/comments?page[size]=1`;
          if ((await send(target, tokenOf(client), 'GET', path, undefined, firstClient + client)).status === 200)
            return;
        }
      }),
    );
  }
}

async function main(): Promise<void> {
  const target: Target = values.target
    ? {
        apiUrl: apiUrlOf(values.target),
        tokens: values.token!,
        organization: values.org!,
        runId: values.run![0]!,
        commentRunIds: values.run!,
        stop: async () => {},
      }
    : // A token per writer of every phase (run, organization) and one to list with: the WAF limits each
      // token to 30 req/s over a minute, which one writer alone would pass.
      // And one per client of the bursts, the same clients in each.
      await startLocalTarget(2 * writerCounts.reduce((sum, n) => sum + n, 0) + burst + 1);
  let firstOfStep = 1;
  const token = (writer: number) => target.tokens[(firstOfStep + writer) % target.tokens.length]!;
  const lister = target.tokens[0]!;
  const unique = Date.now().toString(36);
  console.log(
    `${seconds} s per writer count, writers ${writerCounts.join(', ')}, against ${values.target ?? "a local stack (npm start) on this machine: the emulator's latencies, not AWS's"}`,
  );
  try {
    for (const [step, writers] of writerCounts.entries()) {
      const runId = target.commentRunIds[step]!;
      const created: string[] = [];
      const onRun = await writeFor(writers, async (writer, n) => {
        const answer = await send(
          target,
          token(writer),
          'POST',
          `/runs/${runId}/comments`,
          { data: { type: 'comments', attributes: { body: `hot spot ${unique}: writer ${writer} #${n}` } } },
          firstOfStep + writer,
        );
        if (answer.status === 201) created.push(answer.json.data.id);
        return [answer];
      });
      report('one run', writers, onRun);
      firstOfStep += writers;
      await checkListed(target, lister, runId, created, onRun.answers);
      const inOrg = await writeFor(writers, async (writer, n) => {
        const create = await send(
          target,
          token(writer),
          'POST',
          `/organizations/${target.organization}/reserved-tag-keys`,
          { data: { type: 'reserved-tag-keys', attributes: { key: `hot-${unique}-${writers}-${writer}-${n}` } } },
          firstOfStep + writer,
        );
        if (create.status !== 201) return [create];
        return [
          create,
          await send(
            target,
            token(writer),
            'DELETE',
            `/reserved-tags/${create.json.data.id}`,
            undefined,
            firstOfStep + writer,
          ),
        ];
      });
      report('one organization', writers, inOrg);
      console.log(`  ${writers} writers: done`);
      firstOfStep += writers;
    }
    for (let n = 1; burst > 0 && n <= BURSTS; n++) {
      const runId = target.commentRunIds[writerCounts.length + n - 1]!;
      // After the first burst, each client has been answered within the last minute, as the
      // clients of a service in use have: the gateway holds its token's authorization.
      if (n > 1) await authorizeEach(target, runId, burst, (client) => token(client), firstOfStep);
      const created: string[] = [];
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: burst }, async (_, client) => {
          const answer = await send(
            target,
            token(client),
            'POST',
            `/runs/${runId}/comments`,
            { data: { type: 'comments', attributes: { body: `burst ${unique}: client ${client}` } } },
            firstOfStep + client,
          );
          if (answer.status === 201) created.push(answer.json.data.id);
          return answer;
        }),
      );
      report(`${burst} at once, burst ${n}`, burst, { answers, elapsed: (performance.now() - started) / 1000 });
      await checkListed(target, lister, runId, created, answers);
    }
  } finally {
    await target.stop();
  }
  const header = ['hot spot', 'writers', 'requests', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'not 2xx', 'answers'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const row of [header, ...rows]) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join('  '));
  console.log('(— : too few samples for that percentile)');
  for (const [reason, count] of reasons) console.log(`${String(count).padStart(6)} × ${reason}`);
  if (wrong > 0) {
    console.error(
      `hot-spots: ${wrong} wrong answers (a 5xx other than 503 with Retry-After, or comments answered 201 but not listed)`,
    );
    process.exit(1);
  }
}

await main();
