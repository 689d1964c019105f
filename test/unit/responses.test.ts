import { describe, expect, it } from '@jest/globals';
import { COMMON_HEADERS, errorResponse, REQUEST_ID_HEADER, responseHeaders } from '#shared/http/responses';
import { InvalidAttribute, NotFound, Unavailable } from '#shared/jsonapi/errors';

/** The headers every answer carries and the shape of an error answer (shared/http/responses.ts). */
describe("the contract's headers", () => {
  it('are the API version, the app name, the rate limit and no caching, on every answer', () => {
    expect(COMMON_HEADERS).toEqual({
      'TFP-API-Version': '2.6',
      'TFP-AppName': 'tfc-tags-comments',
      'X-RateLimit-Limit': '30',
      'Cache-Control': 'no-store',
    });
  });

  it('add the JSON:API Content-Type to an answer with a body, and none without one', () => {
    expect(responseHeaders(true)).toEqual({ ...COMMON_HEADERS, 'Content-Type': 'application/vnd.api+json' });
    expect(responseHeaders(false)).toEqual(COMMON_HEADERS);
  });

  it('name the request id X-Request-Id', () => {
    expect(REQUEST_ID_HEADER).toBe('X-Request-Id');
  });
});

describe('errorResponse', () => {
  it('answers an error with its status and a JSON:API error document whose status is a string', () => {
    expect(errorResponse(new NotFound())).toEqual({
      statusCode: 404,
      headers: { ...COMMON_HEADERS, 'Content-Type': 'application/vnd.api+json' },
      body: JSON.stringify({ errors: [{ status: '404', title: 'not found' }] }),
    });
  });

  it('carries the detail and the pointer to the attribute at fault', () => {
    const response = errorResponse(new InvalidAttribute('Key is too long', '/data/attributes/key'));
    expect(JSON.parse(response.body)).toEqual({
      errors: [
        {
          status: '422',
          title: 'invalid attribute',
          detail: 'Key is too long',
          source: { pointer: '/data/attributes/key' },
        },
      ],
    });
  });

  it("adds the error's own headers to the contract's: a 503's Retry-After", () => {
    expect(errorResponse(new Unavailable(undefined, 7)).headers).toEqual({
      ...COMMON_HEADERS,
      'Content-Type': 'application/vnd.api+json',
      'Retry-After': '7',
    });
  });
});
