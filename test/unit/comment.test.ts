import { describe, expect, it } from '@jest/globals';
import { MAX_COMMENT_BODY_BYTES, serializeComment, validateCommentBody } from '#shared/comments/comment';
import type { ApiError } from '#shared/jsonapi/errors';

const rejection = (value: unknown) => {
  try {
    validateCommentBody(value);
  } catch (error) {
    const { status, title, detail, pointer } = error as ApiError;
    return { status, title, detail, pointer };
  }
  throw new Error('accepted');
};
const invalid = (detail: string) => ({
  status: 422,
  title: 'invalid attribute',
  detail,
  pointer: '/data/attributes/body',
});

describe('validateCommentBody', () => {
  it('returns the body exactly as sent, untrimmed', () => {
    for (const body of [
      '  Approved.  ',
      'Zoë sagt: ✅ 承認 🚀',
      'line 1\r\nline 2\tend',
      'x'.repeat(MAX_COMMENT_BODY_BYTES),
    ]) {
      expect(validateCommentBody(body)).toBe(body);
    }
  });

  it("says a missing, null or blank body can't be blank", () => {
    for (const value of [undefined, null, '', '   ', ' \n\t\r ', '\u3000']) {
      expect(rejection(value)).toEqual(invalid("Body can't be blank"));
    }
  });

  it('rejects a body that is not a string', () => {
    for (const value of [42, true, ['text'], { text: 'x' }])
      expect(rejection(value)).toEqual(invalid('Body must be a string'));
  });

  it('counts the limit in UTF-8 bytes, not characters', () => {
    expect(rejection('x'.repeat(MAX_COMMENT_BODY_BYTES + 1))).toEqual(
      invalid('Body is too long (maximum is 16384 bytes)'),
    );
    expect(validateCommentBody('é'.repeat(MAX_COMMENT_BODY_BYTES / 2))).toHaveLength(MAX_COMMENT_BODY_BYTES / 2);
    expect(rejection(`${'é'.repeat(MAX_COMMENT_BODY_BYTES / 2)}x`)).toEqual(
      invalid('Body is too long (maximum is 16384 bytes)'),
    );
    expect(rejection('🚀'.repeat(MAX_COMMENT_BODY_BYTES / 4 + 1))).toEqual(
      invalid('Body is too long (maximum is 16384 bytes)'),
    );
  });

  it('rejects control characters other than tab, LF and CR, and lone surrogates', () => {
    for (const value of [
      'a\u0000b',
      'bell\u0007',
      'esc \u001b[31m',
      'del\u007f',
      'next line\u0085',
      'half \ud83d emoji',
    ]) {
      expect(rejection(value)).toEqual(invalid('Body contains invalid characters'));
    }
  });
});

describe('serializeComment', () => {
  it('is the contract resource', () => {
    expect(
      serializeComment({
        id: 'wsc-JdFX3u8o114F4CWf',
        runId: 'run-CZcmD7eagjhyX0vN',
        organization: 'my-org',
        body: 'Approved after review.',
        createdBy: 'user-alice',
        createdAt: '2026-11-22T09:31:02.004Z',
      }),
    ).toEqual({
      id: 'wsc-JdFX3u8o114F4CWf',
      type: 'comments',
      attributes: { body: 'Approved after review.', 'created-at': '2026-11-22T09:31:02.004Z' },
      relationships: {
        run: { data: { id: 'run-CZcmD7eagjhyX0vN', type: 'runs' } },
        'created-by': { data: { id: 'user-alice', type: 'users' } },
      },
      links: { self: '/api/v2/comments/wsc-JdFX3u8o114F4CWf' },
    });
  });
});
