import { describe, expect, it } from '@jest/globals';
import { decodeUtf8, decodeUtf8Body } from '#shared/http/request-body';
import { ApiError } from '#shared/jsonapi/errors';

/** A request body's bytes read as text only when they are UTF-8 (shared/http/request-body.ts). */
const refusal = (read: () => string) => {
  try {
    return `read ${JSON.stringify(read())}`;
  } catch (error) {
    return error instanceof ApiError ? `${error.status} ${error.title}: ${error.detail}` : `threw ${String(error)}`;
  }
};
const NOT_UTF8 = '400 bad request: request body is not valid UTF-8';

describe('decodeUtf8', () => {
  it('reads UTF-8 beyond ASCII as it was sent', () => {
    expect(decodeUtf8(Buffer.from('Grüße, 日本 ✓ 😀'))).toBe('Grüße, 日本 ✓ 😀');
  });

  it('drops a leading byte order mark', () => {
    expect(decodeUtf8(Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from('{}')]))).toBe('{}');
  });

  it.each([
    ['an invalid continuation', [0x63, 0x61, 0x66, 0xc3, 0x28]],
    ['a byte UTF-8 never uses', [0x7b, 0xff, 0x7d]],
    ['a truncated sequence', [0x7b, 0xe6, 0x97]],
    ['an encoded surrogate', [0xed, 0xa0, 0xbd]],
    ['an overlong encoding', [0xc0, 0xaf]],
  ])('refuses %s with 400, never replacing it with U+FFFD', (_, bytes) => {
    expect(refusal(() => decodeUtf8(Uint8Array.from(bytes)))).toBe(NOT_UTF8);
  });
});

describe('decodeUtf8Body', () => {
  it("reads a base64-encoded body (API Gateway's binary media types) as UTF-8", () => {
    expect(decodeUtf8Body(Buffer.from('{"body":"café"}').toString('base64'))).toBe('{"body":"café"}');
  });

  it('refuses a base64-encoded body that is not UTF-8 with 400', () => {
    const base64 = Buffer.from([0x7b, 0xc3, 0x28, 0xff, 0x7d]).toString('base64');
    expect(refusal(() => decodeUtf8Body(base64))).toBe(NOT_UTF8);
  });
});
