import { describe, expect, it } from '@jest/globals';
import { newTokenSecret } from '#shared/auth/token-secret';
import { createToken, revokeToken } from '#shared/store/tokens';
import { tokenFor } from '../support/api';
import { useLocalStack } from '../support/local-stack';
import { eventually } from '../support/processes';
import { keyDocument } from '../support/documents';

/**
 * What a platform team sees of a request in CloudWatch and X-Ray, read from what the deployed
 * bundles really emit through the local stack: EMF lines on each function's stdout and the
 * segment documents its tracer sends to the (local) X-Ray daemon.
 */
const local = useLocalStack();
const { api, logs } = local;

const NAMESPACE = 'TfcTagsComments';
const ORG = 'obs-org';
/** The dimension keys the metrics may use: small fixed sets, never ids. */
const LOW_CARDINALITY_DIMENSIONS = ['service', 'function_name', 'reason', 'hotSpot'];

interface Emf {
  fn: string;
  doc: Record<string, any>;
}

/** EMF documents among log lines `[FunctionLogicalId] line`: JSON objects with `_aws`. */
function emfIn(lines: string[]): Emf[] {
  return lines.flatMap((line) => {
    const match = /^\[(\w+)\] (\{.*\})$/.exec(line);
    if (!match) return [];
    const doc = JSON.parse(match[2]!) as Record<string, any>;
    return doc._aws ? [{ fn: match[1]!, doc }] : [];
  });
}

const metricNames = (emf: Emf) =>
  (emf.doc._aws.CloudWatchMetrics as Array<{ Metrics: Array<{ Name: string }> }>).flatMap((m) =>
    m.Metrics.map((metric) => metric.Name),
  );
const dimensionKeys = (emf: Emf) =>
  (emf.doc._aws.CloudWatchMetrics as Array<{ Dimensions: string[][] }>).flatMap((m) => m.Dimensions.flat());

/** The EMF lines that arrive after `from` (lines come over the functions' stdout, a moment after the response). */
async function emfSince(from: number, until: (emf: Emf[]) => boolean): Promise<Emf[]> {
  await eventually(() => until(emfIn(logs.slice(from))), 5_000);
  return emfIn(logs.slice(from));
}

const functionId = (prefix: string) => [...local.stack().lambda.functions.keys()].find((id) => id.startsWith(prefix))!;

describe('metrics (CloudWatch EMF)', () => {
  it('counts a created reserved tag key, with the id in metadata, and a cold start once per instance', async () => {
    const token = await tokenFor({ [ORG]: 'owner' }, 'user-obs');
    const from = logs.length;
    const ids: string[] = [];
    for (const key of ['obs-one', 'obs-two', 'obs-three']) {
      const created = await api.post(`/organizations/${ORG}/reserved-tag-keys`, { token, body: keyDocument(key) });
      expect(created.status).toBe(201);
      ids.push(created.json.data.id);
    }
    const createFn = functionId('ReservedTagKeysCreateFunction');
    const emf = await emfSince(
      from,
      (all) => all.filter((e) => metricNames(e).includes('ReservedTagKeyCreated')).length === 3,
    );

    const created = emf.filter((e) => metricNames(e).includes('ReservedTagKeyCreated'));
    expect(created.map((e) => e.fn)).toEqual([createFn, createFn, createFn]);
    for (const [i, e] of created.entries()) {
      expect(e.doc._aws.CloudWatchMetrics).toEqual([
        {
          Namespace: NAMESPACE,
          Dimensions: [['service']],
          Metrics: [{ Name: 'ReservedTagKeyCreated', Unit: 'Count' }],
        },
      ]);
      expect(e.doc).toMatchObject({
        service: 'tfc-tags-comments',
        ReservedTagKeyCreated: 1,
        reservedTagKeyId: ids[i],
        organization: ORG,
      });
    }

    // Three sequential requests: one instance, so one ColdStart, named by the route table's function.
    const coldStarts = emfIn(logs).filter((e) => e.fn === createFn && metricNames(e).includes('ColdStart'));
    expect(local.stack().lambda.started.get(createFn)).toBe(1);
    expect(coldStarts).toHaveLength(1);
    expect(coldStarts[0]!.doc._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: NAMESPACE,
        Dimensions: [['service', 'function_name']],
        Metrics: [{ Name: 'ColdStart', Unit: 'Count' }],
      },
    ]);
    expect(coldStarts[0]!.doc).toMatchObject({ function_name: 'reserved-tag-keys/create', ColdStart: 1 });

    // Concurrent requests start more instances: each counts its own cold start, once.
    const concurrent = await Promise.all(
      ['obs-c1', 'obs-c2', 'obs-c3'].map((key) =>
        api.post(`/organizations/${ORG}/reserved-tag-keys`, { token, body: keyDocument(key) }),
      ),
    );
    expect(concurrent.map((r) => r.status)).toEqual([201, 201, 201]);
    const instances = local.stack().lambda.started.get(createFn)!;
    expect(instances).toBeGreaterThan(1);
    await eventually(
      () => emfIn(logs).filter((e) => e.fn === createFn && metricNames(e).includes('ColdStart')).length === instances,
      5_000,
    );
    expect(emfIn(logs).filter((e) => e.fn === createFn && metricNames(e).includes('ColdStart'))).toHaveLength(
      instances,
    );
  });

  it('uses one namespace and only low-cardinality dimensions, never an id as a dimension value', async () => {
    const token = await tokenFor({ [ORG]: 'owner' }, 'user-obs');
    const from = logs.length;
    const created = await api.post(`/organizations/${ORG}/reserved-tag-keys`, { token, body: keyDocument('obs-dims') });
    expect(created.status).toBe(201);
    expect((await api.get(`/organizations/${ORG}/reserved-tag-keys`, { token })).status).toBe(200);
    expect((await api.delete(`/reserved-tags/${created.json.data.id}`, { token })).status).toBe(204);
    const emf = await emfSince(from, (all) => all.some((e) => metricNames(e).includes('ReservedTagKeyDeleted')));

    for (const e of emfIn(logs)) {
      expect(e.doc._aws.CloudWatchMetrics.map((m: { Namespace: string }) => m.Namespace)).toEqual([NAMESPACE]);
      for (const key of dimensionKeys(e)) {
        expect(LOW_CARDINALITY_DIMENSIONS).toContain(key);
        expect(String(e.doc[key])).not.toMatch(/(rtk|wsc|run|at)-[A-Za-z0-9]{16}/);
      }
    }
    const deleted = emf.find((e) => metricNames(e).includes('ReservedTagKeyDeleted'))!;
    expect(deleted.doc).toMatchObject({ reservedTagKeyId: created.json.data.id }); // metadata, searchable in the line
    expect(dimensionKeys(deleted)).toEqual(['service']);
  });

  it('counts each refused token by reason, answers 401, logs the reason and never the token, and is no function error', async () => {
    const live = await createToken({ subject: 'user-obs', grants: { [ORG]: 'owner' } });
    const revoked = await createToken({ subject: 'user-obs', grants: { [ORG]: 'owner' } });
    await revokeToken(revoked.record.tokenId);
    const expired = await createToken({
      subject: 'user-obs',
      grants: { [ORG]: 'owner' },
      expiresAt: new Date(Date.now() - 60_000).toISOString(),
    });
    const refused = {
      malformed: 'tfcapi_not-a-token',
      unknown: newTokenSecret().token, // well-formed, names no stored token
      revoked: revoked.token,
      expired: expired.token,
    };
    const authorizerFn = functionId('AuthorizerFunction');

    for (const [reason, token] of Object.entries(refused)) {
      const from = logs.length;
      const response = await api.get(`/organizations/${ORG}/reserved-tag-keys`, { token });
      expect(response.status).toBe(401);
      expect(response.json).toEqual({
        errors: [
          { status: '401', title: 'unauthorized', detail: 'token not accepted: it is unknown, revoked or expired' },
        ],
      });

      const emf = await emfSince(from, (all) => all.some((e) => metricNames(e).includes('AuthorizationOutcome')));
      const outcome = emf.find((e) => metricNames(e).includes('AuthorizationOutcome'))!;
      expect(outcome.fn).toBe(authorizerFn);
      expect(outcome.doc._aws.CloudWatchMetrics).toEqual([
        {
          Namespace: NAMESPACE,
          Dimensions: [['service', 'reason']],
          Metrics: [{ Name: 'AuthorizationOutcome', Unit: 'Count' }],
        },
      ]);
      expect(outcome.doc).toMatchObject({ reason, AuthorizationOutcome: 1 });

      const rejection = logs
        .slice(from)
        .filter((line) => line.startsWith(`[${authorizerFn}] {`))
        .map((line) => JSON.parse(line.slice(line.indexOf('{'))))
        .find((entry) => entry.message === 'token rejected');
      expect(rejection).toMatchObject({ level: 'INFO', reason });
    }

    const authorizerLines = logs.filter((line) => line.startsWith(`[${authorizerFn}]`));
    // A Deny is an answer, not a failure: Lambda's runtime writes `Invoke Error` only for a thrown error.
    expect(authorizerLines.filter((line) => line.includes('Invoke Error'))).toEqual([]);
    const everything = logs.join('\n');
    for (const token of [...Object.values(refused), live.token]) expect(everything).not.toContain(token.slice(7));
    expect(everything).not.toMatch(/bearer/i);
  });
});

describe("traces (X-Ray segments from the functions' tracers)", () => {
  const segments = () => local.stack().traces;
  const subsegmentsOf = (parent: Record<string, any>) =>
    segments().filter((s) => s.parent_id === parent.id && s.trace_id === parent.trace_id);

  it("shows a request's DynamoDB calls as DynamoDB subsegments with their operation, under the function annotated with route and outcome", async () => {
    const token = await tokenFor({ [ORG]: 'owner' }, 'user-trace');
    const secretKeyName = 'obs-traced-key-name';
    const created = await api.post(`/organizations/${ORG}/reserved-tag-keys`, {
      token,
      body: keyDocument(secretKeyName),
    });
    expect(created.status).toBe(201);
    const from = segments().length;
    expect((await api.get(`/organizations/${ORG}/reserved-tag-keys`, { token })).status).toBe(200);

    const listRoute = 'GET /organizations/{organization_name}/reserved-tag-keys';
    const fresh = () => segments().slice(from);
    await eventually(
      () =>
        fresh().some((s) => s.name === '## reserved-tag-keys/list') &&
        fresh().some((s) => s.name === 'DynamoDB' && s.aws?.operation === 'Query'),
      5_000,
    );
    const list = fresh().find((s) => s.name === '## reserved-tag-keys/list')!;
    expect(list.annotations).toEqual({ route: listRoute, outcome: '200' }); // route and outcome only
    expect(subsegmentsOf(list)).toEqual([
      expect.objectContaining({
        name: 'DynamoDB',
        namespace: 'aws',
        aws: expect.objectContaining({ operation: 'Query', table_name: process.env.TABLE_NAME }),
      }),
    ]);

    // The authorizer's own lookup: a GetItem under `## authorizer`, annotated with its decision.
    const authorizerSegments = segments().filter(
      (s) => s.name === '## authorizer' && s.annotations?.outcome === 'allowed',
    );
    expect(authorizerSegments.length).toBeGreaterThan(0);
    expect(authorizerSegments.flatMap(subsegmentsOf)).toContainEqual(
      expect.objectContaining({
        name: 'DynamoDB',
        namespace: 'aws',
        aws: expect.objectContaining({ operation: 'GetItem' }),
      }),
    );

    // No request or response bodies anywhere: no key name, no token, no stored hash or item.
    const text = JSON.stringify(segments());
    expect(text).not.toContain(secretKeyName);
    expect(text).not.toContain(token.slice(7));
    expect(text).not.toMatch(/"(Item|Items|Key|TransactItems|ExpressionAttributeValues)"/);
    expect(text).not.toContain('tokenHash');
  });

  it('marks a refused request with its reason, and makes no DynamoDB call for a malformed token', async () => {
    const from = segments().length;
    expect(
      (await api.get(`/organizations/${ORG}/reserved-tag-keys`, { token: 'tfcapi_malformed-for-trace' })).status,
    ).toBe(401);
    await eventually(
      () =>
        segments()
          .slice(from)
          .some((s) => s.name === '## authorizer'),
      5_000,
    );
    const refusal = segments()
      .slice(from)
      .find((s) => s.name === '## authorizer')!;
    expect(refusal.annotations).toMatchObject({ route: 'authorizer', outcome: 'malformed' });
    expect(refusal.fault).toBeUndefined(); // a refusal is no fault of the function
    expect(subsegmentsOf(refusal)).toEqual([]);
  });
});

describe('a cached authorizer answer', () => {
  it('serves no request once its token has expired: the chain answers 401 while the Allow is still cached', async () => {
    const expiresAt = new Date(Date.now() + 2_500);
    const { token } = await createToken({
      subject: 'user-expiring',
      grants: { [ORG]: 'reader' },
      expiresAt: expiresAt.toISOString(),
    });
    const authorizerFn = functionId('AuthorizerFunction');
    const invocations = () =>
      logs.filter((line) => line.startsWith(`[${authorizerFn}]`) && line.includes('"token accepted"')).length;

    const before = invocations();
    expect((await api.get(`/organizations/${ORG}/reserved-tag-keys`, { token })).status).toBe(200);
    await eventually(() => invocations() === before + 1, 5_000);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt.getTime() - Date.now() + 200)));

    const from = logs.length;
    const late = await api.get(`/organizations/${ORG}/reserved-tag-keys`, { token });
    expect(late.status).toBe(401);
    expect(late.json).toEqual({
      errors: [
        { status: '401', title: 'unauthorized', detail: 'token not accepted: it is unknown, revoked or expired' },
      ],
    });
    // The authorizer was not asked again (its Allow is cached for the stage's TTL): the function refused.
    const emf = await emfSince(from, (all) => all.some((e) => metricNames(e).includes('AuthorizationOutcome')));
    expect(invocations()).toBe(before + 1);
    const outcome = emf.find((e) => metricNames(e).includes('AuthorizationOutcome'))!;
    expect(outcome.fn).toBe(functionId('ReservedTagKeysListFunction'));
    expect(outcome.doc).toMatchObject({ reason: 'expired', AuthorizationOutcome: 1 });
  }, 20_000);
});
