import { describe, expect, it } from '@jest/globals';
import { createToken } from '#shared/store/tokens';
import { useLocalStack } from '../support/local-stack';
import { keyDocument } from '../support/documents';

/** The functions' own log lines, as their log streams receive them (the template's log level). */
const { api, logs } = useLocalStack();
/** The same token with its last character changed: well-formed, names a real id, wrong secret. */
const forged = (token: string) => `${token.slice(0, -1)}${token.endsWith('x') ? 'y' : 'x'}`;

describe('logs', () => {
  it('are JSON lines with the request id, and never contain a token', async () => {
    const { record, token } = await createToken({ subject: 'user-logged', grants: { 'log-org': 'owner' } });
    expect((await api.get('/organizations/log-org/reserved-tag-keys', { token })).status).toBe(200);
    expect((await api.get('/organizations/log-org/reserved-tag-keys', { token: forged(token) })).status).toBe(401);
    expect(
      (await api.post('/organizations/log-org/reserved-tag-keys', { token, body: keyDocument('secret-key-name') }))
        .status,
    ).toBe(201);

    const lines = logs.map((line) => line.replace(/^\[\w+\] /, ''));
    const entries = lines.map((line) => JSON.parse(line)); // every line is JSON
    expect(entries.length).toBeGreaterThan(0);
    const accepted = entries.find((e) => e.message === 'token accepted');
    expect(accepted).toMatchObject({
      level: 'INFO',
      service: 'tfc-tags-comments',
      tokenId: record.tokenId,
      subject: 'user-logged',
    });
    expect(accepted.function_request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(entries.some((e) => e.message === 'token rejected')).toBe(true);
    const all = lines.join('\n');
    expect(all).not.toContain(token.slice(7));
    expect(all).not.toContain('Bearer');
    expect(all).not.toContain('secret-key-name'); // request bodies are not logged either
  });
});
