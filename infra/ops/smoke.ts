import { createHmac, randomInt } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { parseArgs } from 'node:util';
import createClient from 'openapi-fetch';
import type { components, paths } from '#infra/openapi/generated/openapi-types';

/**
 * `npm run smoke`: every endpoint once, as go-tfe and python-tfe call it, against a running stage,
 * one line per step; what it created is removed at the end where the API allows. Exit 0 when every
 * answer was right, 1 when one was not, 2 for a usage error. A client of the published contract,
 * written apart from the service's code (a smoke test that imported the service's serializers
 * would agree with a bug in them): openapi-fetch with the types generated from docs/openapi.json,
 * as a client author would use the document.
 */
export const USAGE = `Usage: npm run smoke -- --target URL --token TOKEN --org ORG [--notification-secret SECRET | --run RUN_ID]
  --target URL               the address clients are given (the TfeAddress output, or npm start's http://127.0.0.1:3000);
                             or --outputs FILE: the file of \`cdk deploy --outputs-file FILE\`, whose TfeAddress is used
  --token TOKEN              an owner token of ORG (npm run admin -- token create --org ORG --role owner)
  --org ORG                  the organization to work in: a dedicated one (its runs and comments stay; see below)
  --notification-secret S    ORG's run-notification secret (npm run admin -- notifications create --org ORG):
                             a signed run notification registers a new run, on which the comment steps run
  --run RUN_ID               instead, a run already registered in ORG, for the comment steps
  --timeout MS               per request (10000)
Environment instead of flags: TFE_ADDRESS, TFE_TOKEN (as go-tfe reads them), SMOKE_ORG, SMOKE_NOTIFICATION_SECRET.
Without --notification-secret or --run the comment steps are skipped (and say so). Reserved tag keys it
creates are deleted; a registered run and its one comment stay (comments are immutable by design).
Exit status: 0 every answer right, 1 a wrong answer or no answer, 2 usage.`;

const JSONAPI = 'application/vnd.api+json';
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const random = (n: number) => Array.from({ length: n }, () => ALPHANUMERIC[randomInt(ALPHANUMERIC.length)]).join('');

export interface SmokeOptions {
  target: string;
  token: string;
  organization: string;
  notificationSecret?: string | undefined;
  run?: string | undefined;
  timeoutMs?: number;
  print?: (line: string) => void;
}

interface Answer {
  status: number;
  headers: Headers;
  json: any;
  text: string;
  ms: number;
}

type Verdict = 'ok' | 'FAIL' | 'skip';

class UsageError extends Error {}

/** Runs every step; returns the number of wrong answers. */
export async function smoke(options: SmokeOptions): Promise<{ failed: number; passed: number; skipped: number }> {
  const print = options.print ?? ((line: string) => console.log(line));
  const origin = new URL(options.target).origin;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const org = encodeURIComponent(options.organization);
  const tally = { failed: 0, passed: 0, skipped: 0 };
  const started = performance.now();

  const line = (
    verdict: Verdict,
    status: number | string,
    ms: number | undefined,
    method: string,
    path: string,
    note: string,
  ) => {
    tally[verdict === 'ok' ? 'passed' : verdict === 'FAIL' ? 'failed' : 'skipped'] += 1;
    const time = ms === undefined ? '' : `${ms.toFixed(0)} ms`;
    print(
      `${verdict.padEnd(4)} ${String(status).padStart(3)} ${time.padStart(7)}  ${method.padEnd(6)} ${path}${note ? `  ${note}` : ''}`,
    );
  };

  // The generated client: the API under /api/v2 with the token and without, and the root of the host (service discovery).
  const headers = { Accept: JSONAPI, 'User-Agent': 'tfc-tags-comments-smoke' };
  const api = createClient<paths>({
    baseUrl: `${origin}/api/v2`,
    headers: { ...headers, Authorization: `Bearer ${options.token}` },
  });
  const anonymous = createClient<paths>({ baseUrl: `${origin}/api/v2`, headers });
  const host = createClient<paths>({ baseUrl: origin, headers });
  const jsonApiBody = { 'Content-Type': JSONAPI };

  /** One request through the generated client; its answer, or why there was none. */
  async function call(
    send: (signal: AbortSignal) => Promise<{ response: Response; data?: unknown; error?: unknown }>,
  ): Promise<Answer | string> {
    const t0 = performance.now();
    try {
      const { response, data, error } = await send(AbortSignal.timeout(timeoutMs));
      const json = data ?? error;
      const text = json === undefined ? '' : typeof json === 'string' ? json : JSON.stringify(json);
      return {
        status: response.status,
        headers: response.headers,
        json: typeof json === 'string' ? undefined : json,
        text,
        ms: performance.now() - t0,
      };
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      return `no answer: ${(error as Error).name === 'TimeoutError' ? `timed out after ${timeoutMs} ms` : (cause ?? (error as Error).message)}`;
    }
  }

  /** One step: the request, then `check` returns what is wrong with the answer (undefined: right). */
  async function step<T>(
    method: string,
    path: string,
    note: string,
    send: Parameters<typeof call>[0],
    check: (a: Answer) => string | undefined | Promise<string | undefined>,
    value?: (a: Answer) => T,
  ): Promise<T | undefined> {
    const answer = await call(send);
    if (typeof answer === 'string') {
      line('FAIL', '---', undefined, method, path, `${note}: ${answer}`);
      return undefined;
    }
    const problem = await check(answer);
    if (problem) {
      line('FAIL', answer.status, answer.ms, method, path, `${note}: ${problem}`);
      return undefined;
    }
    line('ok', answer.status, answer.ms, method, path, note);
    return value ? value(answer) : (undefined as T);
  }
  const skip = (method: string, path: string, note: string, why: string) =>
    line('skip', '', undefined, method, path, `${note}: ${why}`);

  print(`smoke: ${origin} as organization ${options.organization}`);

  // go-tfe's NewClient: GET /api/v2/ping, headers only.
  await step(
    'GET',
    '/api/v2/ping',
    'ping (go-tfe NewClient)',
    (signal) => anonymous.GET('/ping', { signal }),
    (a) =>
      expectStatus(a, 204) ??
      (Number(a.headers.get('x-ratelimit-limit')) > 3
        ? undefined
        : `X-RateLimit-Limit ${a.headers.get('x-ratelimit-limit')} (go-tfe needs a number above 3)`) ??
      (a.headers.get('tfp-api-version') ? undefined : 'no TFP-API-Version header'),
  );

  // Terraform's remote service discovery, at the root of the host.
  await step(
    'GET',
    '/.well-known/terraform.json',
    'service discovery',
    (signal) => host.GET('/.well-known/terraform.json', { headers: { Accept: 'application/json' }, signal }),
    (a) =>
      (a.status === 200 ? undefined : `expected 200, got ${a.status}`) ??
      (a.headers.get('content-type')?.startsWith('application/json')
        ? undefined
        : `Content-Type ${a.headers.get('content-type')}, Terraform needs application/json`) ??
      (a.json?.['tfe.v2'] === '/api/v2/'
        ? undefined
        : `tfe.v2 is ${JSON.stringify(a.json?.['tfe.v2'])}, not "/api/v2/"`),
  );

  const keysPath = `/api/v2/organizations/${org}/reserved-tag-keys`;
  const inOrganization = { path: { organization_name: options.organization } };
  const listKeys = (page: { 'page[number]'?: number; 'page[size]': number }) => (signal: AbortSignal) =>
    api.GET('/organizations/{organization_name}/reserved-tag-keys', {
      params: { ...inOrganization, query: page },
      signal,
    });
  await step(
    'GET',
    keysPath,
    'a token not accepted → 401',
    (signal) =>
      api.GET('/organizations/{organization_name}/reserved-tag-keys', {
        params: inOrganization,
        headers: { Authorization: `Bearer smoke-not-a-token-${random(8)}` },
        signal,
      }),
    (a) => expectError(a, 401),
  );

  // Reserved tag keys: create, list, update through both PATCH paths, delete through one DELETE path and look for it through the other.
  const key = `smoke-${random(10)}`;
  const created = await step(
    'POST',
    keysPath,
    `create reserved tag key ${key}`,
    (signal) =>
      api.POST('/organizations/{organization_name}/reserved-tag-keys', {
        params: inOrganization,
        headers: jsonApiBody,
        body: { data: { type: 'reserved-tag-keys', attributes: { key } } },
        signal,
      }),
    (a) => expectStatus(a, 201) ?? expectKey(a, { key, 'disable-overrides': false }),
    (a) => a.json.data as KeyResource,
  );
  let deleted = false;
  try {
    if (created) {
      await step(
        'GET',
        `${keysPath}?page%5Bsize%5D=100`,
        'list reserved tag keys: the new key, serialized as created',
        listKeys({ 'page[size]': 100 }),
        async (a) => {
          const problem = expectStatus(a, 200) ?? expectList(a);
          if (problem) return problem;
          const listed =
            (a.json.data as KeyResource[]).find((k) => k.id === created.id) ??
            (await findInPages(
              (page) => call(listKeys({ 'page[number]': page, 'page[size]': 100 })),
              created.id,
              2,
              a.json.meta.pagination['total-pages'],
            ));
          if (typeof listed === 'string') return listed;
          return sameResource(listed, created)
            ? undefined
            : `listed as ${JSON.stringify(listed)}, created as ${JSON.stringify(created)}`;
        },
      );
      const viaClients = `/api/v2/reserved-tag-keys/${created.id}`;
      const viaDocs = `/api/v2/reserved-tags/${created.id}`;
      const theKey = { path: { reserved_tag_key_id: created.id } };
      await step(
        'PATCH',
        viaClients,
        'update (go-tfe, python-tfe path): disable-overrides',
        (signal) =>
          api.PATCH('/reserved-tag-keys/{reserved_tag_key_id}', {
            params: theKey,
            headers: jsonApiBody,
            body: { data: { type: 'reserved-tag-keys', attributes: { 'disable-overrides': true } } },
            signal,
          }),
        (a) => expectStatus(a, 200) ?? expectKey(a, { key, 'disable-overrides': true }, created.id),
      );
      await step(
        'PATCH',
        viaDocs,
        'update (API docs path): rename',
        (signal) =>
          api.PATCH('/reserved-tags/{reserved_tag_key_id}', {
            params: theKey,
            headers: jsonApiBody,
            body: { data: { type: 'reserved-tag-keys', id: created.id, attributes: { key: `${key}-renamed` } } },
            signal,
          }),
        (a) => expectStatus(a, 200) ?? expectKey(a, { key: `${key}-renamed`, 'disable-overrides': true }, created.id),
      );
      deleted =
        (await step(
          'DELETE',
          viaClients,
          'delete (go-tfe, python-tfe path)',
          (signal) => api.DELETE('/reserved-tag-keys/{reserved_tag_key_id}', { params: theKey, signal }),
          (a) => expectStatus(a, 204),
          () => true,
        )) ?? false;
      if (deleted)
        await step(
          'DELETE',
          viaDocs,
          'delete again (API docs path) → 404',
          (signal) => api.DELETE('/reserved-tags/{reserved_tag_key_id}', { params: theKey, signal }),
          (a) => expectError(a, 404),
        );
      else skip('DELETE', viaDocs, 'delete again (API docs path)', 'the key was not deleted');
    } else {
      for (const [method, path] of [
        ['GET', keysPath],
        ['PATCH', '/api/v2/reserved-tag-keys/…'],
        ['PATCH', '/api/v2/reserved-tags/…'],
        ['DELETE', '/api/v2/reserved-tag-keys/…'],
      ] as const) {
        skip(method, path, 'reserved tag key steps', 'the create above failed');
      }
    }

    // Run notifications: an unsigned one is refused; a signed one registers a run for the comment steps.
    const notificationsPath = `/api/v2/run-notifications/${org}`;
    const asHashiCorp = { 'Content-Type': 'application/json', 'User-Agent': 'HashiCorp' };
    await step(
      'POST',
      notificationsPath,
      'run notification without a signature → 401',
      (signal) =>
        anonymous.POST('/run-notifications/{organization_name}', {
          // The document requires the signature header: leaving it out is this step's point.
          params: { ...inOrganization, header: {} as { 'X-TFE-Notification-Signature': string } },
          headers: asHashiCorp,
          body: runCreated(options.organization, `run-${random(16)}`),
          signal,
        }),
      (a) => expectError(a, 401),
    );
    let run = options.run;
    if (options.notificationSecret) {
      const runId = `run-${random(16)}`;
      const payload = runCreated(options.organization, runId);
      // openapi-fetch sends JSON.stringify(body): the bytes signed here.
      const signature = createHmac('sha512', options.notificationSecret).update(JSON.stringify(payload)).digest('hex');
      const registered = await step(
        'POST',
        notificationsPath,
        `signed run notification: registers ${runId}`,
        (signal) =>
          anonymous.POST('/run-notifications/{organization_name}', {
            params: { ...inOrganization, header: { 'X-TFE-Notification-Signature': signature } },
            headers: asHashiCorp,
            body: payload,
            signal,
          }),
        (a) => expectStatus(a, 204),
        () => true,
      );
      if (registered) run = runId;
    } else {
      skip(
        'POST',
        notificationsPath,
        'signed run notification',
        options.run ? `--run ${options.run} given instead` : 'no --notification-secret',
      );
    }

    // Comments: create, list (as go-tfe's Comments.List: no page parameters), show.
    const commentsPath = `/api/v2/runs/${encodeURIComponent(run ?? 'RUN')}/comments`;
    if (run) {
      const body = `Smoke test ${new Date().toISOString()} (${random(6)})`;
      const theRun = { path: { run_id: run } };
      const comment = await step(
        'POST',
        commentsPath,
        'create comment',
        (signal) =>
          api.POST('/runs/{run_id}/comments', {
            params: theRun,
            headers: jsonApiBody,
            body: { data: { type: 'comments', attributes: { body } } },
            signal,
          }),
        (a) => expectStatus(a, 201) ?? expectComment(a, body, run),
        (a) => a.json.data as KeyResource,
      );
      if (comment) {
        await step(
          'GET',
          commentsPath,
          'list comments: the new one, serialized as created',
          (signal) => api.GET('/runs/{run_id}/comments', { params: theRun, signal }),
          (a) => {
            const problem = expectStatus(a, 200) ?? expectList(a);
            if (problem) return problem;
            const found = (a.json.data as KeyResource[]).find((c) => c.id === comment.id);
            if (found) return sameResource(found, comment) ? undefined : `listed as ${JSON.stringify(found)}`;
            return a.json.meta.pagination['total-count'] > 100 ? undefined : `${comment.id} is not in the list`;
          },
        );
        await step(
          'GET',
          `/api/v2/comments/${comment.id}`,
          'show comment',
          (signal) => api.GET('/comments/{comment_id}', { params: { path: { comment_id: comment.id } }, signal }),
          (a) =>
            expectStatus(a, 200) ??
            (sameResource(a.json?.data, comment)
              ? undefined
              : `shown as ${JSON.stringify(a.json?.data)}, created as ${JSON.stringify(comment)}`),
        );
      } else {
        skip('GET', commentsPath, 'list comments', 'the create above failed');
        skip('GET', '/api/v2/comments/…', 'show comment', 'the create above failed');
      }
    } else {
      const why = options.notificationSecret
        ? 'the run notification above failed'
        : 'no --notification-secret to register a run, nor --run to name one';
      skip('POST', commentsPath, 'create comment', why);
      skip('GET', commentsPath, 'list comments', why);
      skip('GET', '/api/v2/comments/…', 'show comment', why);
    }
  } finally {
    if (created && !deleted) {
      const answer = await call((signal) =>
        api.DELETE('/reserved-tag-keys/{reserved_tag_key_id}', {
          params: { path: { reserved_tag_key_id: created.id } },
          signal,
        }),
      );
      const status = typeof answer === 'string' ? answer : answer.status;
      print(
        `cleanup: DELETE /api/v2/reserved-tag-keys/${created.id} → ${status}${status === 204 ? '' : ' (delete it by hand)'}`,
      );
    }
  }
  print(
    `smoke: ${tally.passed} ok, ${tally.failed} failed, ${tally.skipped} skipped in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return tally;
}

interface KeyResource {
  id: string;
  type: string;
  attributes: Record<string, unknown>;
  relationships?: unknown;
  links?: unknown;
}

function expectStatus(a: Answer, status: number): string | undefined {
  if (a.status !== status) {
    const detail = a.json?.errors?.[0]
      ? `: ${a.json.errors[0].title}${a.json.errors[0].detail ? ` (${a.json.errors[0].detail})` : ''}`
      : '';
    return `expected ${status}, got ${a.status}${detail}`;
  }
  if (status !== 204 && !a.headers.get('content-type')?.startsWith(JSONAPI))
    return `Content-Type ${a.headers.get('content-type')}, not ${JSONAPI}`;
  return undefined;
}

/** The contract's error: JSON:API, `status` a JSON string (go-tfe cannot decode a number). WAF's own bodies are application/json. */
function expectError(a: Answer, status: number): string | undefined {
  if (a.status !== status) return `expected ${status}, got ${a.status}`;
  const error = a.json?.errors?.[0];
  if (!error) return `no JSON:API errors in ${JSON.stringify(a.text.slice(0, 200))}`;
  return error.status === String(status)
    ? undefined
    : `errors[0].status is ${JSON.stringify(error.status)}, not "${status}"`;
}

function expectKey(
  a: Answer,
  attributes: { key: string; 'disable-overrides': boolean },
  id?: string,
): string | undefined {
  const data = a.json?.data;
  if (data?.type !== 'reserved-tag-keys') return `data.type ${JSON.stringify(data?.type)}`;
  if (!/^rtk-[A-Za-z0-9]{16}$/.test(data.id) || (id !== undefined && data.id !== id))
    return `data.id ${JSON.stringify(data.id)}`;
  for (const [name, value] of Object.entries(attributes)) {
    if (data.attributes?.[name] !== value)
      return `${name} is ${JSON.stringify(data.attributes?.[name])}, not ${JSON.stringify(value)}`;
  }
  for (const name of ['created-at', 'updated-at']) {
    if (!ISO_UTC.test(data.attributes?.[name]))
      return `${name} ${JSON.stringify(data.attributes?.[name])} is not ISO-8601 UTC with milliseconds`;
  }
  return undefined;
}

function expectComment(a: Answer, body: string, run: string): string | undefined {
  const data = a.json?.data;
  if (data?.type !== 'comments' || !/^wsc-[A-Za-z0-9]{16}$/.test(data.id))
    return `data ${JSON.stringify(data)?.slice(0, 200)}`;
  if (data.attributes?.body !== body) return `body ${JSON.stringify(data.attributes?.body)}`;
  if (data.relationships?.run?.data?.id !== run) return `relationships.run ${JSON.stringify(data.relationships?.run)}`;
  return undefined;
}

function expectList(a: Answer): string | undefined {
  const pagination = a.json?.meta?.pagination;
  if (!Array.isArray(a.json?.data)) return 'data is not an array';
  if (!pagination || !Number.isInteger(pagination['total-count']) || !Number.isInteger(pagination['total-pages']))
    return `meta.pagination ${JSON.stringify(pagination)}`;
  return undefined;
}

/** go-tfe compares a key field by field between create, update and list. */
const sameResource = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The key on a later page (lists are in creation order, so a new key is on the last). */
async function findInPages(
  listPage: (page: number) => Promise<Answer | string>,
  id: string,
  from: number,
  pages: number,
): Promise<KeyResource | string> {
  for (let page = Math.max(from, pages - 1); page <= pages; page++) {
    const answer = await listPage(page);
    if (typeof answer === 'string') return answer;
    const problem = expectStatus(answer, 200) ?? expectList(answer);
    if (problem) return `page ${page}: ${problem}`;
    const found = (answer.json.data as KeyResource[]).find((k) => k.id === id);
    if (found) return found;
  }
  return `${id} is on none of the ${pages} pages`;
}

/** HCP Terraform's generic webhook payload (version 1) for a run just created. */
function runCreated(organization: string, runId: string): components['schemas']['RunNotification'] {
  const at = new Date().toISOString();
  return {
    payload_version: 1,
    notification_configuration_id: `nc-${random(16)}`,
    run_url: `https://app.terraform.io/app/${organization}/smoke/runs/${runId}`,
    run_id: runId,
    run_message: 'Smoke test',
    run_created_at: at,
    run_created_by: 'smoke-test',
    workspace_id: `ws-${random(16)}`,
    workspace_name: 'smoke',
    organization_name: organization,
    notifications: [
      {
        message: 'Run Created',
        trigger: 'run:created',
        run_status: 'pending',
        run_updated_at: at,
        run_updated_by: 'smoke-test',
      },
    ],
  };
}

/** The TfeAddress output of the one stack in a `cdk deploy --outputs-file` file. */
function addressFromOutputs(file: string): string {
  let outputs: Record<string, Record<string, string>>;
  try {
    outputs = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`--outputs ${file}: ${(error as Error).message}`);
  }
  const addresses = Object.values(outputs)
    .map((stack) => stack.TfeAddress)
    .filter((a): a is string => typeof a === 'string');
  if (addresses.length !== 1)
    throw new UsageError(`--outputs ${file}: expected one stack with a TfeAddress output, found ${addresses.length}`);
  return addresses[0]!;
}

export function optionsFrom(argv: string[], env: NodeJS.ProcessEnv): SmokeOptions | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        target: { type: 'string' },
        outputs: { type: 'string' },
        token: { type: 'string' },
        org: { type: 'string' },
        'notification-secret': { type: 'string' },
        run: { type: 'string' },
        timeout: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) return 'help';
  const target = values.target ?? (values.outputs ? addressFromOutputs(values.outputs) : env.TFE_ADDRESS);
  const token = values.token ?? env.TFE_TOKEN;
  const organization = values.org ?? env.SMOKE_ORG;
  const missing = [
    !target && '--target (or --outputs, TFE_ADDRESS)',
    !token && '--token (or TFE_TOKEN)',
    !organization && '--org (or SMOKE_ORG)',
  ].filter(Boolean);
  if (missing.length > 0) throw new UsageError(`missing ${missing.join(', ')}`);
  try {
    if (!/^https?:$/.test(new URL(target!).protocol)) throw new Error();
  } catch {
    throw new UsageError(`--target ${JSON.stringify(target)} is not an http(s) URL`);
  }
  if (values.run !== undefined && !/^run-[A-Za-z0-9]{16}$/.test(values.run))
    throw new UsageError('--run must be run- followed by 16 letters or digits');
  const timeoutMs = values.timeout === undefined ? 10_000 : Number(values.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0)
    throw new UsageError('--timeout must be a whole number of milliseconds');
  return {
    target: target!,
    token: token!,
    organization: organization!,
    timeoutMs,
    notificationSecret: values['notification-secret'] ?? env.SMOKE_NOTIFICATION_SECRET,
    run: values.run,
  };
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === import.meta.filename) {
  let options: SmokeOptions | 'help';
  try {
    options = optionsFrom(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`smoke: ${error.message}. npm run smoke -- --help says more.`);
    process.exit(2);
  }
  if (options === 'help') {
    console.log(USAGE);
    process.exit(0);
  }
  const { failed } = await smoke(options);
  process.exit(failed > 0 ? 1 : 0);
}
