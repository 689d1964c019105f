import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { errorBody, tokenFor, type ApiResponse } from '../support/api';
import { useLocalStack } from '../support/local-stack';
import { newId } from '#shared/ids';
import { createNotificationSecret, rotateNotificationSecret } from '#shared/store/notification-secrets';
import { written } from '../support/written';
import { findRun, listRuns, registerNewRun } from '#shared/store/runs';
import { commentDocument } from '../support/documents';

/**
 * HCP Terraform's generic webhook, as it sends it: payload version 1, signed with HMAC-SHA512 of
 * the raw body in X-TFE-Notification-Signature (computed here with node:crypto, independently of
 * the service's code), over HTTP through the synthesized stack.
 */
const { api, roundTrips } = useLocalStack();

const sign = (body: string | Buffer, secret: string) => createHmac('sha512', secret).update(body).digest('hex');

async function deliver(organization: string, body: string | Buffer, signature?: string): Promise<ApiResponse> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', 'User-Agent': 'HashiCorp' };
  if (signature !== undefined) headers['X-TFE-Notification-Signature'] = signature;
  const response = await fetch(`${api.baseUrl}/api/v2/run-notifications/${organization}`, {
    method: 'POST',
    headers,
    body,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: text ? JSON.parse(text) : undefined };
}

/** A delivery with header lines exactly as given (fetch would fold a repeated header into one line). */
const deliverWithHeaders = (organization: string, body: string, headers: string[][]) =>
  api.requestWithLines(
    'POST',
    `/run-notifications/${organization}`,
    [['Content-Type', 'application/json'], ['User-Agent', 'HashiCorp'], ...headers],
    body,
  );

const signed = (organization: string, payload: unknown, secret: string) => {
  const body = JSON.stringify(payload, null, 2);
  return deliver(organization, body, sign(body, secret));
};

/** The verification HCP Terraform sends when a configuration is created or tested: every run field null. */
const verification = () => ({
  payload_version: 1,
  notification_configuration_id: 'nc-AeUQ2zfKZzW9TiGZ',
  run_url: null,
  run_id: null,
  run_message: null,
  run_created_at: null,
  run_created_by: null,
  workspace_id: null,
  workspace_name: null,
  organization_name: null,
  notifications: [
    {
      message: 'Verification of runs-webhook',
      trigger: 'verification',
      run_status: null,
      run_updated_at: null,
      run_updated_by: null,
    },
  ],
});

const STAGES = {
  created: { message: 'Run Created', trigger: 'run:created', run_status: 'pending' },
  planning: { message: 'Run Planning', trigger: 'run:planning', run_status: 'planning' },
  applied: { message: 'Applied', trigger: 'run:completed', run_status: 'applied' },
  errored: { message: 'Run Errored', trigger: 'run:errored', run_status: 'errored' },
} as const;

function runPayload(organization: string, runId: string, stage: keyof typeof STAGES, workspace = 'networking') {
  return {
    payload_version: 1,
    notification_configuration_id: 'nc-AeUQ2zfKZzW9TiGZ',
    run_url: `https://app.terraform.io/app/${organization}/${workspace}/runs/${runId}`,
    run_id: runId,
    run_message: 'Add five new queue workers',
    run_created_at: '2026-11-22T18:34:00.000Z',
    run_created_by: 'sample-user',
    workspace_id: 'ws-XdeUVMWShTesDMME',
    workspace_name: workspace,
    organization_name: organization,
    notifications: [{ ...STAGES[stage], run_updated_at: '2026-11-22T18:37:04.000Z', run_updated_by: 'sample-user' }],
  };
}

let acme: string;
let globex: string;
beforeAll(async () => {
  [acme, globex] = (await Promise.all([createNotificationSecret('acme'), createNotificationSecret('globex')])).map(
    (s) => written(s).current.secret,
  ) as [string, string];
});

describe('a signed notification', () => {
  it('answers the verification with 204 and registers nothing', async () => {
    const response = await signed('acme', verification(), acme);
    expect(response.status).toBe(204);
    expect(await listRuns('acme')).toEqual([]);
  });

  it('registers the run on run:created, with what HCP Terraform says of it, and a comment can be made at once', async () => {
    const runId = newId('run');
    expect((await signed('acme', runPayload('acme', runId, 'created'), acme)).status).toBe(204);
    expect(await findRun(runId)).toEqual({
      runId,
      organization: 'acme',
      workspace: 'networking',
      workspaceId: 'ws-XdeUVMWShTesDMME',
      createdAt: '2026-11-22T18:34:00.000Z',
      createdBy: 'sample-user',
    });
    const token = await tokenFor({ acme: 'member' });
    const comment = await api.post(`/runs/${runId}/comments`, { token, body: commentDocument('Looks good') });
    expect(comment.status).toBe(201);
  });

  it('keeps the run as first registered through planning, applied and errored', async () => {
    const runId = newId('run');
    for (const stage of ['created', 'planning', 'applied', 'errored'] as const) {
      expect((await signed('acme', runPayload('acme', runId, stage), acme)).status).toBe(204);
    }
    expect((await listRuns('acme')).filter((r) => r.runId === runId)).toHaveLength(1);
  });

  it('registers a run whose run:created was missed from any later run trigger', async () => {
    for (const stage of ['planning', 'applied', 'errored'] as const) {
      const runId = newId('run');
      expect((await signed('acme', runPayload('acme', runId, stage), acme)).status).toBe(204);
      expect((await findRun(runId))?.organization).toBe('acme');
    }
  });

  it('accepts a non-run trigger (a health assessment) with 204 and registers nothing', async () => {
    const payload = {
      ...verification(),
      organization_name: 'acme',
      notifications: [{ message: 'Drift detected', trigger: 'assessment:drifted' }],
    };
    const before = await listRuns('acme');
    expect((await signed('acme', payload, acme)).status).toBe(204);
    expect(await listRuns('acme')).toEqual(before);
  });
});

describe('the signature', () => {
  const unauthorized = errorBody(401, 'unauthorized');

  it.each([
    ['missing', (_body: string) => undefined],
    ['signed with another secret', (body: string) => sign(body, 'not-the-secret')],
    ['signed with another organization’s secret', (body: string) => sign(body, globex)],
    ['empty', () => ''],
    ['not hex', () => 'z'.repeat(128)],
    ['a prefix of the right one', (body: string) => sign(body, acme).slice(0, 64)],
  ])('%s: 401 unauthorized, nothing registered', async (_case, signatureFor) => {
    const runId = newId('run');
    const body = JSON.stringify(runPayload('acme', runId, 'created'));
    const response = await deliver('acme', body, signatureFor(body));
    expect(response.status).toBe(401);
    expect(response.json).toEqual(unauthorized);
    expect(response.headers.get('content-type')).toBe('application/vnd.api+json');
    expect(await findRun(runId)).toBeUndefined();
  });

  it.each([
    [
      'wrong, then right',
      (right: string) => [
        ['X-TFE-Notification-Signature', sign('other', acme)],
        ['X-TFE-Notification-Signature', right],
      ],
    ],
    [
      'right, then wrong',
      (right: string) => [
        ['X-TFE-Notification-Signature', right],
        ['X-TFE-Notification-Signature', sign('other', acme)],
      ],
    ],
    [
      'wrong, then right, in two spellings',
      (right: string) => [
        ['X-TFE-Notification-Signature', sign('other', acme)],
        ['x-tfe-notification-signature', right],
      ],
    ],
    [
      'right, then wrong, in two spellings',
      (right: string) => [
        ['x-tfe-notification-signature', right],
        ['X-TFE-Notification-Signature', sign('other', acme)],
      ],
    ],
    [
      'right twice',
      (right: string) => [
        ['X-TFE-Notification-Signature', right],
        ['X-TFE-Notification-Signature', right],
      ],
    ],
  ])(
    'sent twice (%s): ambiguous credentials, 401 whatever the order, nothing registered',
    async (_case, signatures) => {
      const runId = newId('run');
      const body = JSON.stringify(runPayload('acme', runId, 'created'));
      const response = await deliverWithHeaders('acme', body, signatures(sign(body, acme)));
      expect([response.status, response.json]).toEqual([401, unauthorized]);
      expect(await findRun(runId)).toBeUndefined();
      // The same request with the right signature alone is accepted.
      expect(
        (await deliverWithHeaders('acme', body, [['X-TFE-Notification-Signature', sign(body, acme)]])).status,
      ).toBe(204);
    },
  );

  it('of a body altered by one byte after signing: 401, nothing registered', async () => {
    const runId = newId('run');
    const body = Buffer.from(JSON.stringify(runPayload('acme', runId, 'created')));
    const signature = sign(body, acme);
    const altered = Buffer.from(body);
    altered[altered.indexOf('networking') + 0] = 'N'.charCodeAt(0);
    expect((await deliver('acme', altered, signature)).status).toBe(401);
    expect(await findRun(runId)).toBeUndefined();
  });

  it('of an organization without a secret: 401, as for a wrong one', async () => {
    const body = JSON.stringify(verification());
    expect((await deliver('initech', body, sign(body, acme))).status).toBe(401);
  });

  it('after a rotation: the old secret during the grace period, never after it', async () => {
    const old = written(await createNotificationSecret('rotating')).current.secret;
    const rotated = written(await rotateNotificationSecret('rotating', 24));
    expect(rotated.previous!.secret).toBe(old);
    expect((await signed('rotating', verification(), old)).status).toBe(204);
    expect((await signed('rotating', verification(), rotated.current.secret)).status).toBe(204);

    // Rotated again with no grace: the grace period of the secret it replaces is over at once.
    const again = written(await rotateNotificationSecret('rotating', 0));
    expect((await signed('rotating', verification(), rotated.current.secret)).status).toBe(401);
    expect((await signed('rotating', verification(), old)).status).toBe(401);
    expect((await signed('rotating', verification(), again.current.secret)).status).toBe(204);
  });
});

describe('two organizations', () => {
  it('registers each organization’s runs in it', async () => {
    const [a, g] = [newId('run'), newId('run')];
    expect((await signed('acme', runPayload('acme', a, 'created'), acme)).status).toBe(204);
    expect((await signed('globex', runPayload('globex', g, 'created'), globex)).status).toBe(204);
    expect((await findRun(a))?.organization).toBe('acme');
    expect((await findRun(g))?.organization).toBe('globex');
  });

  it('refuses a run id registered in another organization (422) and changes nothing', async () => {
    const runId = newId('run');
    expect((await signed('acme', runPayload('acme', runId, 'created'), acme)).status).toBe(204);
    const before = await findRun(runId);
    const response = await signed('globex', runPayload('globex', runId, 'planning', 'other'), globex);
    expect(response.status).toBe(422);
    expect(response.json).toEqual(
      errorBody(422, 'invalid attribute', 'run_id is registered in another organization', '/run_id'),
    );
    expect(await findRun(runId)).toEqual(before);
    expect((await listRuns('globex')).map((r) => r.runId)).not.toContain(runId);
  });

  it('refuses a payload for another organization than the URL’s (422), signed by the URL’s secret', async () => {
    const runId = newId('run');
    const response = await signed('globex', runPayload('acme', runId, 'created'), globex);
    expect(response.status).toBe(422);
    expect(response.json).toEqual(
      errorBody(
        422,
        'invalid attribute',
        'organization_name does not match the organization in the URL',
        '/organization_name',
      ),
    );
    expect(await findRun(runId)).toBeUndefined();
  });
});

describe('a malformed payload, correctly signed', () => {
  const runId = newId('run');
  it.each([
    ['not JSON', '{"payload_version": 1,', 400, errorBody(400, 'bad request', 'request body is not valid JSON')],
    [
      'another payload version',
      JSON.stringify({ ...runPayload('acme', runId, 'created'), payload_version: 2 }),
      422,
      errorBody(422, 'invalid attribute', 'payload_version must be 1', '/payload_version'),
    ],
    [
      'no notifications',
      JSON.stringify({ ...runPayload('acme', runId, 'created'), notifications: [] }),
      422,
      errorBody(
        422,
        'invalid attribute',
        'notifications must be a non-empty array of objects with a trigger',
        '/notifications',
      ),
    ],
    [
      'a run id of the wrong shape',
      JSON.stringify({ ...runPayload('acme', runId, 'created'), run_id: 'run-1' }),
      422,
      errorBody(422, 'invalid attribute', 'run_id must be run- followed by 16 letters or digits', '/run_id'),
    ],
    [
      'a creation time that is no time',
      JSON.stringify({ ...runPayload('acme', runId, 'created'), run_created_at: 'yesterday' }),
      422,
      errorBody(422, 'invalid attribute', 'run_created_at must be an ISO 8601 timestamp', '/run_created_at'),
    ],
  ])('%s: the contract’s error, nothing registered', async (_case, body, status, error) => {
    const response = await deliver('acme', body, sign(body, acme));
    expect(response.status).toBe(status);
    expect(response.json).toEqual(error);
    expect(await findRun(runId)).toBeUndefined();
  });

  it.each([
    ['a lone lead byte', Buffer.from([0xc3])],
    ['bytes that are never UTF-8', Buffer.from([0xff, 0xfe])],
    ['an encoded surrogate', Buffer.from([0xed, 0xa0, 0x80])],
  ])(
    'a field with %s: 400 as on every endpoint, nothing registered (not read with U+FFFD in its place)',
    async (_case, bad) => {
      const runId = newId('run');
      const [before, after] = JSON.stringify(runPayload('acme', runId, 'created')).split('"run_created_by":"');
      const body = Buffer.concat([
        Buffer.from(`${before}"run_created_by":"sample-`),
        bad,
        Buffer.from(after!.slice(after!.indexOf('"'))),
      ]);
      const response = await deliver('acme', body, sign(body, acme));
      expect(response.status).toBe(400);
      expect(response.json).toEqual(errorBody(400, 'bad request', 'request body is not valid UTF-8'));
      expect(await findRun(runId)).toBeUndefined();
    },
  );

  it('a body that begins with a byte order mark is read as its JSON, as on every endpoint', async () => {
    const runId = newId('run');
    const body = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(JSON.stringify(runPayload('acme', runId, 'created'))),
    ]);
    expect((await deliver('acme', body, sign(body, acme))).status).toBe(204);
    expect(await findRun(runId)).toMatchObject({ runId, organization: 'acme' });
  });

  it('not JSON and unsigned: 401, the payload is not judged for a stranger', async () => {
    expect((await deliver('acme', '{', undefined)).status).toBe(401);
  });
});

describe('DynamoDB round trips per notification', () => {
  it('a new run: the secret and the run read together, then its record (the commit) and its listing; a known run: the reads alone; a verification: the secret', async () => {
    const runId = newId('run');
    const first = await roundTrips(() => signed('acme', runPayload('acme', runId, 'created'), acme));
    expect(first.result.status).toBe(204);
    expect(first.commands).toEqual(['GetItemCommand', 'GetItemCommand', 'PutItemCommand', 'PutItemCommand']);
    const again = await roundTrips(() => signed('acme', runPayload('acme', runId, 'applied'), acme));
    expect(again).toEqual({
      result: expect.objectContaining({ status: 204 }),
      commands: ['GetItemCommand', 'GetItemCommand'],
    });
    expect((await roundTrips(() => signed('acme', verification(), acme))).commands).toEqual(['GetItemCommand']);
  });

  it('a run registered by the operator beforehand: no write', async () => {
    const run = await registerNewRun('acme');
    const { commands } = await roundTrips(() => signed('acme', runPayload('acme', run.runId, 'created'), acme));
    expect(commands).toEqual(['GetItemCommand', 'GetItemCommand']);
  });
});
