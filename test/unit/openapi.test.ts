import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { routes } from '#shared/routes';
import { ApiError } from '#shared/jsonapi/errors';
import { parseCreateAttributes } from '#shared/reserved-tag-keys/reserved-tag-key';
import { MAX_COMMENT_BODY_BYTES, validateCommentBody } from '#shared/comments/comment';
import { isOrganizationName } from '#shared/organizations';
import { PROJECT_ROOT } from '#infra/local/assembly';
import { DOCUMENT_FILE, generatedFiles, TYPES_FILE } from '#infra/openapi/main';
import { document, problemsWith, schemaAt } from '../support/openapi';

/** The committed OpenAPI document: generated from the code, linted, and holding the code's own rules. */
const operations = Object.entries<Record<string, any>>(document.paths).flatMap(([path, item]) =>
  Object.entries<any>(item)
    .filter(([method]) => ['get', 'post', 'patch', 'delete'].includes(method))
    .map(([method, operation]) => ({ path, method, operation })),
);
const operation = (id: string) => operations.find((o) => o.operation.operationId === id)!.operation;

describe('docs/openapi.json', () => {
  it('is what npm run openapi writes, and so are the client types generated from it', async () => {
    for (const [file, text] of Object.entries(await generatedFiles())) {
      expect({ file, text: readFileSync(join(PROJECT_ROOT, file), 'utf8') }).toEqual({ file, text });
    }
  });

  it("passes Redocly's recommended-strict lint as it is (OpenAPI 3.1 structure, refs, operation ids, responses, license)", async () => {
    // The whole strict set, no rule turned off: info.license (with an identifier) included.
    const config = await createConfig({ extends: ['recommended-strict'] });
    const problems = await lintFromString({
      source: readFileSync(join(PROJECT_ROOT, DOCUMENT_FILE), 'utf8'),
      absoluteRef: DOCUMENT_FILE,
      config,
    });
    expect(problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
    expect(document.openapi).toMatch(/^3\.1\./);
  });

  it("names its license and a contact, as Spectral's info-license and info-contact want", () => {
    expect(document.info.license).toEqual({
      name: expect.any(String),
      identifier: expect.stringMatching(/^LicenseRef-[A-Za-z0-9.-]+$/),
    });
    expect(document.info.contact).toEqual({ name: expect.stringMatching(/\S/) });
  });

  it('has every route of the table, each with its operationId, its errors (4xx and 503) and a default, service discovery and the health route', () => {
    for (const route of routes) {
      const found = document.paths[route.path]?.[route.method.toLowerCase()];
      expect({ route: `${route.method} ${route.path}`, operationId: found?.operationId }).toEqual({
        route: `${route.method} ${route.path}`,
        operationId: route.operationId,
      });
      const statuses = Object.keys(found.responses);
      expect(statuses).toEqual(expect.arrayContaining(['400', '429', 'default']));
      if (route.path !== '/ping') expect(statuses).toContain('503');
      // A notification for an organization without a secret is a 401, as an unsigned one: it has no 404.
      if (route.path.includes('{') && route.role !== null) expect(statuses).toContain('404');
      if (route.role !== null || route.function === 'run-notifications/receive') expect(statuses).toContain('401');
    }
    expect(operations).toHaveLength(routes.length + 2);
    expect(new Set(operations.map((o) => o.operation.operationId)).size).toBe(operations.length);
    expect(operation('discoverServices').responses['200'].content['application/json']).toBeDefined();
    // The deep health route, where a stage has it: no token, plain JSON either way.
    expect(operation('health').security).toEqual([]);
    for (const status of ['200', '503'])
      expect(operation('health').responses[status].content['application/json']).toBeDefined();
  });

  it("names the comment operations as HashiCorp's document does", () => {
    expect(
      operations
        .filter((o) => o.operation.tags[0] === 'comments')
        .map((o) => `${o.method.toUpperCase()} ${o.path} ${o.operation.operationId}`),
    ).toEqual([
      'GET /runs/{run_id}/comments listRunComments',
      'POST /runs/{run_id}/comments createRunComment',
      'GET /comments/{comment_id} showComment',
    ]);
    expect(operation('listRunComments').parameters.map((p: any) => p.name ?? p.$ref)).toEqual([
      'run_id',
      '#/components/parameters/pageNumber',
      '#/components/parameters/pageSize',
    ]);
    expect(document.components.parameters.pageNumber.name).toBe('page[number]');
    expect(document.components.parameters.pageSize.name).toBe('page[size]');
  });

  it('declares the bearer scheme (operator tokens and workload identity JWTs), none for ping, discovery and notifications, and the signature header for those', () => {
    expect(document.security).toEqual([{ bearer: [] }]);
    expect(document.components.securitySchemes.bearer).toEqual(
      expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    );
    expect(document.components.securitySchemes.bearer.description).toMatch(/tfcapi_.*JWT/s);
    for (const id of ['ping', 'discoverServices', 'receiveRunNotification']) expect(operation(id).security).toEqual([]);
    expect(operation('receiveRunNotification').parameters).toContainEqual({
      $ref: '#/components/parameters/notificationSignature',
    });
    expect(document.components.parameters.notificationSignature).toEqual(
      expect.objectContaining({ name: 'X-TFE-Notification-Signature', in: 'header', required: true }),
    );
  });

  it("declares the headers the contract promises: X-Request-Id on every answer (but WAF's), Retry-After on 429 and 503, Idempotency-Key and Idempotent-Replayed on creates", () => {
    for (const [name, response] of Object.entries<any>(document.components.responses)) {
      const header = ['Error413', 'Error429'].includes(name) ? 'X-Request-Id-Unless-Firewall' : 'X-Request-Id';
      expect({ name, header: response.headers['X-Request-Id'] }).toEqual({
        name,
        header: { $ref: `#/components/headers/${header}` },
      });
    }
    expect(document.components.headers['X-Request-Id'].required).toBe(true);
    expect(Object.keys(document.components.responses.Error429.headers)).toEqual(
      expect.arrayContaining(['Retry-After', 'X-RateLimit-Reset', 'X-RateLimit-Limit']),
    );
    expect(Object.keys(document.components.responses.Error503.headers)).toContain('Retry-After');
    for (const id of ['createReservedTagKey', 'createRunComment']) {
      expect(operation(id).parameters).toContainEqual({ $ref: '#/components/parameters/idempotencyKey' });
      expect(operation(id).responses['201'].headers['Idempotent-Replayed']).toEqual({
        $ref: '#/components/headers/Idempotent-Replayed',
      });
    }
  });

  it('names every attribute and relationship of a reserved tag key and a comment, and nothing else', () => {
    const { ReservedTagKey, Comment } = document.components.schemas;
    expect(Object.keys(ReservedTagKey.properties.attributes.properties)).toEqual([
      'key',
      'disable-overrides',
      'is-registry-tag',
      'created-at',
      'updated-at',
    ]);
    expect(Object.keys(ReservedTagKey.properties.relationships.properties)).toEqual(['organization']);
    expect(Object.keys(Comment.properties.attributes.properties)).toEqual(['body', 'created-at']);
    expect(Object.keys(Comment.properties.relationships.properties)).toEqual(['run', 'created-by']);
    for (const schema of [ReservedTagKey, ReservedTagKey.properties.attributes, Comment, Comment.properties.attributes])
      expect(schema.additionalProperties).toBe(false);
  });
});

describe("docs/api.md's section on the document", () => {
  const section = readFileSync(join(PROJECT_ROOT, 'docs/api.md'), 'utf8')
    .split('## The OpenAPI document, and generated clients')[1]!
    .split('\n## ')[0]!;

  it('counts the operations of the route table', () => {
    expect(section).toContain(`all ${routes.length} operations of the route table`);
  });

  it("its openapi-typescript command writes the types npm run openapi commits, and its example's call is an operation of the document", () => {
    const command = /^npx openapi-typescript (\S+) -o (\S+) &&/m.exec(section);
    expect(command?.[1]).toBe(DOCUMENT_FILE);
    const out = join(mkdtempSync(join(tmpdir(), 'openapi-')), command![2]!);
    execFileSync(join(PROJECT_ROOT, 'node_modules/.bin/openapi-typescript'), [command![1]!, '-o', out], {
      cwd: PROJECT_ROOT,
      stdio: 'pipe',
    });
    const committed = readFileSync(join(PROJECT_ROOT, TYPES_FILE), 'utf8');
    expect(readFileSync(out, 'utf8')).toBe(committed.slice(committed.indexOf('\n') + 1));
    for (const [, method, path] of section.matchAll(/api\.(GET|POST|PATCH|DELETE)\('([^']+)'/g)) {
      expect(document.paths[path!]?.[method!.toLowerCase()]).toBeDefined();
    }
  });
});

/** The document's rule and the service's validator agree on every sample: the one is the other. */
describe("the document's rules are the validators'", () => {
  const accepts = (validate: () => unknown) => {
    try {
      validate();
      return true;
    } catch (error) {
      if (error instanceof ApiError && error.status === 422) return false;
      throw error;
    }
  };
  const keySchema = schemaAt(
    'components',
    'schemas',
    'ReservedTagKeyCreate',
    'properties',
    'data',
    'properties',
    'attributes',
    'properties',
    'key',
  );
  const bodySchema = schemaAt(
    'components',
    'schemas',
    'CommentCreate',
    'properties',
    'data',
    'properties',
    'attributes',
    'properties',
    'body',
  );
  const organizationSchema = schemaAt(
    'paths',
    '/organizations/{organization_name}/reserved-tag-keys',
    'get',
    'parameters',
    '0',
    'schema',
  );

  it.each([
    'environment',
    'cost-center',
    'a',
    'k'.repeat(128),
    'k'.repeat(129),
    'a b',
    ' a',
    'a ',
    'a/b',
    'x=y+z@w:v_u.t',
    'é',
    '',
    'tab\t',
  ])('key %j', (key) => {
    expect(keySchema(key)).toBe(accepts(() => parseCreateAttributes({ key })));
  });

  const atLimit = 'é'.repeat(MAX_COMMENT_BODY_BYTES / 2);
  it.each([
    ['a body', 'Approved after review.'],
    ['blank', ' \n\t'],
    ['empty', ''],
    ['tab, LF, CR', 'a\tb\nc\r'],
    ['a NUL', 'a\u0000b'],
    ['DEL', 'a\u007f'],
    ['a C1 control', 'a\u0085'],
    ['a lone surrogate', 'a\ud800'],
    ['an emoji', 'ok 👍'],
    ['16,384 bytes of é', atLimit],
    ['16,386 bytes of é', `${atLimit}é`],
    ['16,385 ASCII bytes', 'a'.repeat(MAX_COMMENT_BODY_BYTES + 1)],
  ])('comment body: %s', (_, body) => {
    expect(bodySchema(body)).toBe(accepts(() => validateCommentBody(body)));
  });

  it.each(['example-org', 'a', '_a', '-a', 'a_b-c', 'o'.repeat(90), 'o'.repeat(91), '__proto__', 'a.b', 'a b', ''])(
    'organization name %j',
    (name) => {
      expect(organizationSchema(name)).toBe(isOrganizationName(name));
    },
  );
});

/** What the e2e tests' answer check (test/support/validate-answers.ts) refuses: the document, read strictly. */
describe('an answer that does not conform', () => {
  const headers = (more: Record<string, string> = {}) =>
    new Headers({
      'X-Request-Id': 'r-1',
      'TFP-API-Version': '2.6',
      'TFP-AppName': 'tfc-tags-comments',
      'X-RateLimit-Limit': '30',
      'Cache-Control': 'no-store',
      'Content-Type': 'application/vnd.api+json',
      ...more,
    });
  const comment = {
    id: 'wsc-JdFX3u8o114F4CWf',
    type: 'comments',
    attributes: { body: 'Approved.', 'created-at': '2026-11-22T09:31:02.004Z' },
    relationships: {
      run: { data: { id: 'run-CZcmD7eagjhyX0vN', type: 'runs' } },
      'created-by': { data: { id: 'user-alice', type: 'users' } },
    },
    links: { self: '/api/v2/comments/wsc-JdFX3u8o114F4CWf' },
  };
  const show = (status: number, body: unknown, more?: Record<string, string>) =>
    problemsWith({
      method: 'GET',
      url: 'http://127.0.0.1:3000/api/v2/comments/wsc-JdFX3u8o114F4CWf',
      status,
      headers: headers(more),
      text: JSON.stringify(body),
    });

  it('conforms as the service answers', () => {
    expect(show(200, { data: comment })).toEqual([]);
    expect(show(404, { errors: [{ status: '404', title: 'not found' }] })).toEqual([]);
  });

  it.each([
    [
      'an attribute the document does not name',
      { data: { ...comment, attributes: { ...comment.attributes, author: 'x' } } },
      200,
      /must NOT have additional properties/,
    ],
    [
      'a timestamp with +00:00',
      { data: { ...comment, attributes: { ...comment.attributes, 'created-at': '2026-11-22T09:31:02.004+00:00' } } },
      200,
      /created-at/,
    ],
    ['an id of the wrong shape', { data: { ...comment, id: 'wsc-1' } }, 200, /body\/data\/id must match pattern/],
    ['a numeric error status', { errors: [{ status: 404, title: 'not found' }] }, 404, /status must be string/],
    [
      "another status's error",
      { errors: [{ status: '403', title: 'forbidden' }] },
      404,
      /status must be equal to constant/,
    ],
    [
      'a status the operation does not declare',
      { errors: [{ status: '409', title: 'conflict' }] },
      409,
      /does not declare/,
    ],
  ])('is refused: %s', (_, body, status, problem) => {
    expect(show(status, body).join('\n')).toMatch(problem);
  });

  it('is refused without X-Request-Id, or with a Content-Type the document does not declare', () => {
    const withoutId = headers();
    withoutId.delete('X-Request-Id');
    expect(
      problemsWith({
        method: 'GET',
        url: 'http://127.0.0.1:3000/api/v2/comments/wsc-JdFX3u8o114F4CWf',
        status: 200,
        headers: withoutId,
        text: JSON.stringify({ data: comment }),
      }),
    ).toEqual(['showComment 200: no X-Request-Id header']);
    expect(show(200, { data: comment }, { 'Content-Type': 'text/html' })).toEqual([
      'showComment 200: Content-Type "text/html", not one of application/vnd.api+json',
    ]);
  });
});

describe('the functions stay lean', () => {
  /** zod is for the document only: a value import into shared/ or functions/ would put it in every Lambda bundle. */
  it('no module a function bundles imports zod or shared/openapi/schemas.ts except as types', () => {
    const files = (dir: string): string[] =>
      readdirSync(join(PROJECT_ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
      );
    const offenders = [...files('functions'), ...files('shared')]
      .filter((file) => !file.startsWith(join('shared', 'openapi')))
      .filter((file) =>
        /^import (?!type )[^;]*from '(zod|[^']*openapi\/schemas)'/m.test(
          readFileSync(join(PROJECT_ROOT, file), 'utf8'),
        ),
      );
    expect(offenders).toEqual([]);
  });
});
