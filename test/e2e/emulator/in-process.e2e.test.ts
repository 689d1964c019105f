import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ensureAssembly } from '#infra/local/assembly';
import { startInProcessStack, type InProcessStack } from '#infra/local/local-stack';
import { Stack } from '#infra/local/aws/cloudformation';
import { Template } from 'aws-cdk-lib/assertions';
import { deployedMethods, resourcesOf } from '../../infra/templates';

/**
 * `npm run dev`: the handlers in this process behind the same front, WAF and API Gateway as the
 * synthesized stack (infra/local/aws/lambda-in-process.ts), on the local stage's template.
 */
let local: InProcessStack;
let template: Template;
beforeAll(async () => {
  const assembly = await ensureAssembly();
  template = Template.fromJSON(new Stack(assembly.directory, assembly.stackName).template);
  local = await startInProcessStack({ tableName: process.env.TABLE_NAME!, assembly });
}, 120_000);
afterAll(async () => {
  await local?.close();
});

/** Served by a mock at the host root beside /api/v2 (test/infra/edge.test.ts). */
const DISCOVERY = '/.well-known/terraform.json';
const routeTableMethods = () => deployedMethods(template).filter((m) => m.path !== DISCOVERY);
/** A concrete URL path for a route path: `{run_id}` → `run-x`. */
const concrete = (path: string) => path.replace(/\{(\w+)\}/g, 'x-1');
const call = (method: string, path: string, init: RequestInit = {}) =>
  fetch(`${local.url}${concrete(path)}`, { method, ...init });
const gatewayResponse = (type: string) =>
  Object.values(resourcesOf(template, 'AWS::ApiGateway::GatewayResponse')).find(
    (r) => r.Properties.ResponseType === type,
  )!.Properties;

describe('the in-process stack (npm run dev) serves the template’s routes', () => {
  it('serves every deployed method: public ones answer, the others ask for a token', async () => {
    for (const deployed of routeTableMethods().filter((m) => m.method !== 'ANY')) {
      const response = await call(deployed.method, deployed.path);
      const isPublic = deployed.properties.AuthorizationType === 'NONE';
      expect([deployed.method, deployed.path, response.status]).toEqual([
        deployed.method,
        deployed.path,
        isPublic ? expect.any(Number) : 401,
      ]);
      expect(response.status).not.toBe(404);
      expect(response.status).not.toBe(405);
    }
  });

  it('answers 405 wherever the template answers 405, with the same body', async () => {
    const methods = routeTableMethods();
    for (const any of methods.filter((m) => m.method === 'ANY')) {
      const served = new Set(methods.filter((m) => m.path === any.path).map((m) => m.method));
      for (const method of ['GET', 'POST', 'PATCH', 'DELETE', 'PUT'].filter((m) => !served.has(m))) {
        const response = await call(method, any.path);
        expect([method, any.path, response.status]).toEqual([method, any.path, 405]);
        expect(await response.json()).toEqual(
          JSON.parse(any.properties.Integration.IntegrationResponses[0].ResponseTemplates['application/json']),
        );
        // A body of a type the mock has no template for passes through: still the 405, not a 415.
        const csv = await call(
          method,
          any.path,
          method === 'GET'
            ? { headers: { 'Content-Type': 'text/csv' } }
            : { headers: { 'Content-Type': 'text/csv' }, body: 'a,b' },
        );
        expect([method, any.path, 'text/csv', csv.status]).toEqual([method, any.path, 'text/csv', 405]);
      }
    }
  });

  it('answers an unknown path 404, as the MISSING_AUTHENTICATION_TOKEN gateway response does', async () => {
    const response = await call('GET', '/api/v2/no-such-thing');
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual(
      JSON.parse(gatewayResponse('MISSING_AUTHENTICATION_TOKEN').ResponseTemplates['application/json']),
    );
  });

  it('says which of three things is wrong about a token, as the UNAUTHORIZED and ACCESS_DENIED responses do', async () => {
    const keys = `${local.url}/api/v2/organizations/example-org/reserved-tag-keys`;
    const detailOf = async (authorization?: string) => {
      const answer = await fetch(keys, {
        headers: authorization === undefined ? {} : { Authorization: authorization },
      });
      return { status: answer.status, detail: ((await answer.json()) as any).errors[0].detail };
    };
    // No header: the UNAUTHORIZED response, whose detail is literal.
    expect(await detailOf()).toEqual({
      status: 401,
      detail: 'no Authorization header: send Authorization: Bearer <token>',
    });
    // A Deny: the ACCESS_DENIED response takes its detail from the Deny's context (no store read for these two).
    expect(await detailOf('Basic dXNlcjpwYXNz')).toEqual({
      status: 401,
      detail: 'not a Bearer token: send Authorization: Bearer <token>',
    });
    expect(await detailOf('Bearer garbage')).toEqual({
      status: 401,
      detail: 'token not accepted: it is unknown, revoked or expired',
    });
  });
});
