import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { logger } from '#shared/observability/logger';
import { createToken } from '#shared/store/tokens';
import { useLocalGateway } from '../support/api';

const { api } = useLocalGateway({ authorizerCacheTtlSeconds: 0 });
let lines: string[];
/** The same token with its last character changed: well-formed, names a real id, wrong secret. */
const forged = (token: string) => `${token.slice(0, -1)}${token.endsWith('x') ? 'y' : 'x'}`;

beforeEach(() => {
  lines = [];
  logger.setLogLevel('DEBUG');
  jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
});
afterEach(() => {
  jest.restoreAllMocks();
  logger.setLogLevel('SILENT');
});

describe('logs', () => {
  it('are JSON lines with the request id, and never contain a token', async () => {
    const { record, token } = await createToken({ subject: 'user-logged', grants: { 'log-org': 'owner' } });
    expect((await api.get('/organizations/log-org/reserved-tag-keys', { token })).status).toBe(200);
    expect((await api.get('/organizations/log-org/reserved-tag-keys', { token: forged(token) })).status).toBe(401);
    expect((await api.post('/organizations/log-org/reserved-tag-keys', { token, body: { data: { type: 'reserved-tag-keys', attributes: { key: 'secret-key-name' } } } })).status).toBe(201);

    const entries = lines.join('').trim().split('\n').map((line) => JSON.parse(line));
    const accepted = entries.find((e) => e.message === 'token accepted');
    expect(accepted).toMatchObject({ level: 'INFO', service: 'tfc-tags-comments', tokenId: record.tokenId, subject: 'user-logged' });
    expect(accepted.function_request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(entries.some((e) => e.message === 'token rejected')).toBe(true);
    const all = lines.join('');
    expect(all).not.toContain(token.slice(7));
    expect(all).not.toContain('Bearer');
    expect(all).not.toContain('secret-key-name'); // request bodies are not logged either
  });
});
