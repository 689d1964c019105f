import { beforeAll, describe, expect, it } from '@jest/globals';
import { createToken } from '#shared/store/tokens';
import { ORGANIZATION_NAME_MAX_LENGTH } from '#shared/organizations';
import type { Role } from '#shared/auth/principal';
import { errorBody } from '../support/api';
import { useLocalStack } from '../support/local-stack';
import { adminStreams } from '../support/admin-cli';
import { keyDocument } from '../support/documents';

/**
 * Organization names follow one rule (letters, digits, - and _, starting with a letter or digit, at
 * most 90 characters), in the API and in the operator CLI. A name outside it is an organization no
 * token can see (404); a name that is only a built-in member of JavaScript objects is a name.
 */
const { api } = useLocalStack();
const tooLong = 'o'.repeat(2_100);

describe('the API', () => {
  let token: string;
  beforeAll(async () => {
    // Grants the CLI refuses today, as a token written before the rule (or by hand) could hold them.
    const grants = Object.fromEntries(
      [tooLong, 'bad.name', 'constructor', 'toString', 'valueOf'].map((name): [string, Role] => [name, 'owner']),
    );
    token = (await createToken({ subject: 'user-names', grants })).token;
  });

  it.each([
    ['2,100 characters', tooLong],
    ['a dot', 'bad.name'],
    ['a leading underscore', '__proto__'],
  ])(
    'answers 404 for an organization name with %s, even to a token that names it, and writes nothing',
    async (_, name) => {
      const path = `/organizations/${encodeURIComponent(name)}/reserved-tag-keys`;
      expect(await api.post(path, { token, body: keyDocument('env') })).toMatchObject({
        status: 404,
        json: errorBody(404, 'not found'),
      });
      expect(await api.get(path, { token })).toMatchObject({ status: 404, json: errorBody(404, 'not found') });
    },
  );

  it.each([
    ['2,100 characters', tooLong],
    ['a dot', 'bad.name'],
    ['a leading underscore', '__proto__'],
  ])(
    'answers a run notification for an organization name with %s as for one without a secret (401)',
    async (_, name) => {
      const response = await fetch(`${api.baseUrl}/api/v2/run-notifications/${encodeURIComponent(name)}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-TFE-Notification-Signature': 'a'.repeat(128) },
        body: JSON.stringify({
          payload_version: 1,
          run_id: 'run-AAAAAAAAAAAAAAAA',
          organization_name: name,
          notifications: [{ trigger: 'run:created' }],
        }),
      });
      expect({ status: response.status, json: await response.json() }).toEqual({
        status: 401,
        json: errorBody(401, 'unauthorized'),
      });
    },
  );

  it.each(['constructor', 'toString', 'valueOf'])('serves the organization %s like any other', async (name) => {
    const path = `/organizations/${name}/reserved-tag-keys`;
    expect((await api.post(path, { token, body: keyDocument('env') })).status).toBe(201);
    const listed = await api.get(path, { token });
    expect(listed.status).toBe(200);
    expect(listed.json.data.map((k: { attributes: { key: string } }) => k.attributes.key)).toEqual(['env']);
  });

  it('answers 404 for an organization the token has no role in, whatever built-in name it has', async () => {
    const stranger = (await createToken({ subject: 'user-stranger', grants: { 'other-org': 'owner' } })).token;
    for (const name of ['constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
      expect((await api.get(`/organizations/${name}/reserved-tag-keys`, { token: stranger })).status).toBe(404);
    }
  });
});

describe('the operator CLI', () => {
  const admin = (...args: string[]) => adminStreams(args);

  it.each([
    ['__proto__', ['token', 'create', '--org', '__proto__', '--role', 'owner']],
    ['a 2,100-character name', ['token', 'create', '--org', tooLong, '--role', 'owner']],
    ['a name with a slash', ['run', 'register', 'run-AAAAAAAAAAAAAAAA', '--org', 'a/b']],
    ['an empty name', ['run', 'list', '--org', '']],
  ])(
    'refuses --org %s in one line with the rule, exit 2, no stack trace',
    async (_, args) => {
      const { code, stdout, stderr } = await admin(...args);
      expect(code).toBe(2);
      expect(stdout).toBe('');
      expect(stderr).toContain(
        `--org must be 1-${ORGANIZATION_NAME_MAX_LENGTH} letters, digits, - or _, starting with a letter or digit`,
      );
      expect(stderr).not.toMatch(/\n\s+at /); // no stack frames
    },
    30_000,
  );

  it('takes --org constructor like any other name, and the token it prints works there', async () => {
    const { code, stdout } = await admin('token', 'create', '--org', 'constructor', '--role', 'reader', '--json');
    expect(code).toBe(0);
    const { token, grants } = JSON.parse(stdout) as { token: string; grants: Record<string, string> };
    expect(grants).toEqual({ constructor: 'reader' });
    expect((await api.get('/organizations/constructor/reserved-tag-keys', { token })).status).toBe(200);
  }, 30_000);

  it.each([
    ['token', 'constructor'],
    ['__proto__', 'list'],
    ['token', 'toString'],
  ])(
    'answers an unknown command (%s %s) by naming it, exit 2, no stack trace',
    async (group, action) => {
      const { code, stderr } = await admin(group, action);
      expect(code).toBe(2);
      expect(stderr).toContain(`admin: unknown command ${group}`);
      expect(stderr).toContain('npm run admin -- --help lists every command');
      expect(stderr).not.toMatch(/\n\s+at /);
    },
    30_000,
  );
});
