import { describe, expect, it } from '@jest/globals';
import { tokenFor } from '../support/api';
import { useLocalStack } from '../support/local-stack';
import { eventually } from '../support/processes';
import { keyDocument } from '../support/documents';

/**
 * A request's trace as X-Ray would assemble it, from what the deployed bundles send over UDP to
 * the local X-Ray daemon (infra/local/aws/xray.ts) and the segments the local Lambda records: under
 * the trace API Gateway started, each function's segment, its `## <function>` subsegment
 * (annotated with route and outcome, nothing else), and one DynamoDB subsegment per call. No
 * bodies, tokens, organization names or ids anywhere in it.
 */
const local = useLocalStack();
const { api } = local;
const ORG = 'trace-org-e2e';

type Segment = Record<string, any>;
const functionId = (prefix: string) => [...local.stack().lambda.functions.keys()].find((id) => id.startsWith(prefix))!;

/** The trace holding `name`, once its function segment and its subsegment have both arrived. */
async function traceWith(name: string, from: number): Promise<Segment[]> {
  let found: Segment | undefined;
  await eventually(() => {
    found = local
      .stack()
      .traces.slice(from)
      .find((s) => s.name === name);
    return found !== undefined && local.stack().traces.some((s) => s.id === found!.parent_id);
  }, 5_000);
  await new Promise((resolve) => setTimeout(resolve, 100)); // the other function's datagrams of the same request
  return local.stack().xray.trace(found!.trace_id);
}

const childrenOf = (trace: Segment[], parent: Segment) => trace.filter((s) => s.parent_id === parent.id);

/** Function segment → `## fn` → DynamoDB calls, asserted; returns the `## fn` subsegment. */
function expectFunctionTrace(
  trace: Segment[],
  logicalId: string,
  name: string,
  annotations: Record<string, string>,
  operations: string[],
): Segment {
  const functionSegment = trace.find((s) => s.origin === 'AWS::Lambda::Function' && s.name === logicalId)!;
  expect(functionSegment).toBeDefined();
  const [invocation, ...others] = childrenOf(trace, functionSegment);
  expect(others).toEqual([]);
  expect(invocation).toMatchObject({ type: 'subsegment', name, trace_id: functionSegment.trace_id });
  expect(invocation!.annotations).toEqual(annotations);
  expect(invocation!.metadata).toBeUndefined();
  const calls = childrenOf(trace, invocation!);
  // Sorted: some calls of a request go out together, in no fixed order.
  expect(calls.map((call) => call.aws?.operation).sort()).toEqual([...operations].sort());
  for (const call of calls) {
    expect(call).toMatchObject({
      name: 'DynamoDB',
      namespace: 'aws',
      trace_id: functionSegment.trace_id,
      aws: { table_name: process.env.TABLE_NAME },
      http: { response: { status: 200 } },
    });
    expect(call.annotations).toBeUndefined();
    expect(call.end_time).toBeGreaterThanOrEqual(call.start_time);
    expect(call.start_time).toBeGreaterThanOrEqual(invocation!.start_time);
    expect(call.end_time).toBeLessThanOrEqual(invocation!.end_time);
    expect(childrenOf(trace, call)).toEqual([]);
  }
  return invocation!;
}

describe("a request's trace through the local stack", () => {
  it('shows a create under the trace API Gateway started: the authorizer and the function, each with its DynamoDB calls, and nothing of the request', async () => {
    const token = await tokenFor({ [ORG]: 'owner' }, 'user-trace-e2e');
    const keyName = 'trace-secret-key-name';
    const from = local.stack().traces.length;
    const created = await api.post(`/organizations/${ORG}/reserved-tag-keys`, { token, body: keyDocument(keyName) });
    expect(created.status).toBe(201);

    const trace = await traceWith('## reserved-tag-keys/create', from);
    // One trace for the request: the authorizer's invocation and the function's share its id.
    expect(new Set(trace.map((s) => s.trace_id)).size).toBe(1);
    expect(
      trace
        .filter((s) => s.origin === 'AWS::Lambda::Function')
        .map((s) => s.name)
        .sort(),
    ).toEqual([functionId('AuthorizerFunction'), functionId('ReservedTagKeysCreateFunction')].sort());
    expectFunctionTrace(
      trace,
      functionId('AuthorizerFunction'),
      '## authorizer',
      { route: 'authorizer', outcome: 'allowed' },
      ['GetItem'],
    );
    const create = expectFunctionTrace(
      trace,
      functionId('ReservedTagKeysCreateFunction'),
      '## reserved-tag-keys/create',
      { route: 'POST /organizations/{organization_name}/reserved-tag-keys', outcome: '201' },
      // Without an Idempotency-Key no receipt to claim: the head and the name's guard; the commit; guard, copy, member.
      ['GetItem', 'GetItem', 'UpdateItem', 'PutItem', 'PutItem', 'PutItem'],
    );
    expect(create.error).toBeUndefined();
    expect(create.fault).toBeUndefined();

    const text = JSON.stringify(trace);
    for (const secret of [keyName, token.slice(7), ORG, created.json.data.id, 'user-trace-e2e'])
      expect(text).not.toContain(secret);
    expect(text).not.toMatch(/"(Item|Items|Key|TransactItems|ExpressionAttributeValues|metadata)"/);
    expect(local.stack().xray.received.undecoded).toBe(0);
  });

  it("shows a list as one Query under its function, the authorizer's cached answer calling nothing", async () => {
    const token = await tokenFor({ [ORG]: 'reader' }, 'user-trace-list');
    const first = local.stack().traces.length;
    expect((await api.get(`/organizations/${ORG}/reserved-tag-keys`, { token })).status).toBe(200);
    // The first request's datagrams may land after its answer: let its trace arrive before the second's.
    await traceWith('## reserved-tag-keys/list', first);
    const from = local.stack().traces.length;
    const listed = await api.get(`/organizations/${ORG}/reserved-tag-keys`, { token }); // the authorizer's answer is cached now
    expect(listed.status).toBe(200);

    const trace = await traceWith('## reserved-tag-keys/list', from);
    expect(trace.filter((s) => s.origin === 'AWS::Lambda::Function').map((s) => s.name)).toEqual([
      functionId('ReservedTagKeysListFunction'),
    ]);
    expectFunctionTrace(
      trace,
      functionId('ReservedTagKeysListFunction'),
      '## reserved-tag-keys/list',
      { route: 'GET /organizations/{organization_name}/reserved-tag-keys', outcome: '200' },
      ['Query'],
    );
    const text = JSON.stringify(trace);
    for (const secret of [
      token.slice(7),
      ORG,
      'user-trace-list',
      ...listed.json.data.map((key: { id: string }) => key.id),
    ])
      expect(text).not.toContain(secret);
  });

  it('marks an answer in error as the console reads it: 404 an error, not a fault', async () => {
    const token = await tokenFor({ [ORG]: 'owner' }, 'user-trace-404');
    const from = local.stack().traces.length;
    expect((await api.delete('/reserved-tags/rtk-AAAAAAAAAAAAAAAA', { token })).status).toBe(404);
    const trace = await traceWith('## reserved-tag-keys/delete', from);
    const invocation = trace.find((s) => s.name === '## reserved-tag-keys/delete')!;
    expect(invocation).toMatchObject({ error: true, annotations: { outcome: '404' } });
    expect(invocation.fault).toBeUndefined();
    expect(JSON.stringify(trace)).not.toContain('rtk-AAAAAAAAAAAAAAAA');
  });
});
