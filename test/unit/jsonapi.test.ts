import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { assertAcceptable, assertRequestContentType } from '#shared/jsonapi/media-type';
import { paginationLinks, paginationMeta, parsePage } from '#shared/jsonapi/pagination';
import { parseRequestDocument } from '#shared/jsonapi/request-document';
import { ApiError, errorDocument, InvalidAttribute, NotFound } from '#shared/jsonapi/errors';
import { assertNoInclusion } from '#shared/jsonapi/inclusion';

const statusOf = (fn: () => unknown) => {
  try {
    fn();
    return 'ok';
  } catch (error) {
    return error instanceof ApiError ? `${error.status} ${error.detail ?? error.title}` : 'not an ApiError';
  }
};

describe('Content-Type of POST and PATCH bodies', () => {
  it.each([
    'application/vnd.api+json',
    'application/json',
    'application/json; charset=utf-8',
    'Application/Vnd.Api+JSON',
    'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"',
    'application/vnd.api+json; profile="https://example.com/p"',
    // A quoted value may hold ; and , (RFC 9110 §5.6.4): they separate nothing there.
    'application/vnd.api+json; ext="https://example.com/ext;v=1"',
    'application/vnd.api+json; profile="https://example.com/p;x, y"; ext="a\\"b;c"',
  ])('accepts %s', (type) => expect(statusOf(() => assertRequestContentType(type))).toBe('ok'));

  it.each([
    // Each says what is accepted: both types the functions read.
    [
      undefined,
      '415 Content-Type must be application/vnd.api+json (application/json is accepted too); the request has none',
    ],
    [
      'text/plain',
      '415 Content-Type must be application/vnd.api+json (application/json is accepted too), not text/plain',
    ],
    [
      'application/x-www-form-urlencoded',
      '415 Content-Type must be application/vnd.api+json (application/json is accepted too), not application/x-www-form-urlencoded',
    ],
    [
      'application/vnd.api+json; charset=utf-8',
      '415 media type parameter charset is not supported: application/vnd.api+json takes only ext and profile',
    ],
    [
      'application/vnd.api+json; ext="a;b"; foo=1',
      '415 media type parameter foo is not supported: application/vnd.api+json takes only ext and profile',
    ],
  ])('refuses %s with 415, saying what is accepted', (type, expected) =>
    expect(statusOf(() => assertRequestContentType(type))).toBe(expected),
  );
});

describe('Accept', () => {
  it.each([
    undefined,
    '',
    '*/*',
    'application/json',
    'application/vnd.api+json',
    'application/vnd.api+json, text/html;q=0.9',
    'application/vnd.api+json; q=0.8',
    'text/html, */*',
    'application/*',
  ])('accepts %j', (accept) => expect(statusOf(() => assertAcceptable(accept))).toBe('ok'));

  it('answers 406 when every JSON:API range carries a parameter', () => {
    expect(statusOf(() => assertAcceptable('application/vnd.api+json; charset=utf-8'))).toMatch(/^406 /);
    expect(
      statusOf(() => assertAcceptable('application/vnd.api+json; foo=1, application/vnd.api+json; bar=2')),
    ).toMatch(/^406 /);
  });

  it('is satisfied when one JSON:API range has no parameter', () => {
    expect(statusOf(() => assertAcceptable('application/vnd.api+json; foo=1, application/vnd.api+json'))).toBe('ok');
  });

  it('answers 406 when nothing JSON is acceptable', () => {
    expect(statusOf(() => assertAcceptable('text/html'))).toBe('406 responses are application/vnd.api+json');
  });

  it('reads a quoted parameter value whole, commas and semicolons included', () => {
    expect(statusOf(() => assertAcceptable('application/vnd.api+json; ext="https://e/x;y"'))).toBe('ok');
    expect(statusOf(() => assertAcceptable('application/vnd.api+json; profile="https://e/a,https://e/b"'))).toBe('ok');
    expect(statusOf(() => assertAcceptable('application/vnd.api+json; ext="a;charset=x", text/html'))).toBe('ok');
  });

  it('takes q=0 as "not acceptable" (RFC 9110 §12.4.2)', () => {
    expect(statusOf(() => assertAcceptable('application/vnd.api+json;q=0'))).toBe(
      '406 responses are application/vnd.api+json',
    );
    expect(statusOf(() => assertAcceptable('application/vnd.api+json; q=0.000, application/json; q=0'))).toMatch(
      /^406 /,
    );
    expect(statusOf(() => assertAcceptable('application/vnd.api+json;q=0, application/json'))).toBe('ok');
    expect(statusOf(() => assertAcceptable('application/vnd.api+json;q=0.001'))).toBe('ok');
    expect(statusOf(() => assertAcceptable('application/vnd.api+json;q=zero'))).toBe('ok'); // a malformed weight is no weight
  });
});

describe('page parameters', () => {
  it('defaults to page 1 of 20, or of the endpoint default when no page parameter is sent', () => {
    expect(parsePage(null)).toEqual({ number: 1, size: 20 });
    expect(parsePage({}, 100)).toEqual({ number: 1, size: 100 });
    expect(parsePage({ 'page[number]': '2' }, 100)).toEqual({ number: 2, size: 20 });
  });

  it('reads both parameters', () => {
    expect(parsePage({ 'page[number]': '3', 'page[size]': '100' })).toEqual({ number: 3, size: 100 });
  });

  it.each([
    ['page[size]', '0', 'page[size] must be between 1 and 100'],
    ['page[size]', '101', 'page[size] must be between 1 and 100'],
    ['page[size]', 'ten', 'page[size] must be between 1 and 100'],
    ['page[size]', '1.5', 'page[size] must be between 1 and 100'],
    ['page[size]', '', 'page[size] must be between 1 and 100'],
    ['page[number]', '0', 'page[number] must be between 1 and 2147483647'],
    ['page[number]', '-1', 'page[number] must be between 1 and 2147483647'],
    ['page[number]', '1e3', 'page[number] must be between 1 and 2147483647'],
  ])('%s=%j is a 422', (name, value, detail) => {
    expect(statusOf(() => parsePage({ [name]: value }))).toBe(`422 ${detail}`);
  });

  it('computes meta at the edges and past the end', () => {
    expect(paginationMeta({ number: 1, size: 20 }, 47)).toEqual({
      'current-page': 1,
      'page-size': 20,
      'prev-page': null,
      'next-page': 2,
      'total-pages': 3,
      'total-count': 47,
    });
    expect(paginationMeta({ number: 3, size: 20 }, 47)).toMatchObject({ 'prev-page': 2, 'next-page': null });
    expect(paginationMeta({ number: 1, size: 20 }, 0)).toMatchObject({
      'total-pages': 1,
      'next-page': null,
      'prev-page': null,
    });
    expect(paginationMeta({ number: 9, size: 20 }, 47)).toMatchObject({
      'current-page': 9,
      'prev-page': 8,
      'next-page': null,
    });
  });

  it('builds absolute links with encoded brackets', () => {
    const links = paginationLinks('https://api.example.com/api/v2/x', paginationMeta({ number: 2, size: 10 }, 25));
    expect(links).toEqual({
      self: 'https://api.example.com/api/v2/x?page%5Bnumber%5D=2&page%5Bsize%5D=10',
      first: 'https://api.example.com/api/v2/x?page%5Bnumber%5D=1&page%5Bsize%5D=10',
      prev: 'https://api.example.com/api/v2/x?page%5Bnumber%5D=1&page%5Bsize%5D=10',
      next: 'https://api.example.com/api/v2/x?page%5Bnumber%5D=3&page%5Bsize%5D=10',
      last: 'https://api.example.com/api/v2/x?page%5Bnumber%5D=3&page%5Bsize%5D=10',
    });
  });
});

describe('request documents', () => {
  const parse = (body: string | null, pathId?: string) => statusOf(() => parseRequestDocument(body, 'things', pathId));

  it.each([
    [null, '400 request body is missing'],
    ['{not json', '400 request body is not valid JSON'],
    ['[]', '400 request body must be a JSON object'],
    ['{}', '400 request body must have an object "data" member'],
    ['{"data":[]}', '400 request body must have an object "data" member'],
    ['{"data":{"type":"things","attributes":[]}}', '400 data.attributes must be an object'],
    ['{"data":{"type":"other"}}', '409 data.type must be "things"'],
    ['{"data":{"attributes":{}}}', '409 data.type must be "things"'],
  ])('%j → %s', (body, expected) => expect(parse(body)).toBe(expected));

  it('checks data.id only against the path id, and only when present', () => {
    expect(parse('{"data":{"type":"things","id":"a"}}', 'b')).toBe('409 data.id does not match the id in the path');
    expect(parse('{"data":{"type":"things","id":"a"}}', 'a')).toBe('ok');
    expect(parse('{"data":{"type":"things"}}', 'a')).toBe('ok');
  });

  it('returns the attributes, empty when absent', () => {
    expect(parseRequestDocument('{"data":{"type":"things","attributes":{"x":1}}}', 'things').attributes).toEqual({
      x: 1,
    });
    expect(parseRequestDocument('{"data":{"type":"things"}}', 'things').attributes).toEqual({});
  });

  it('refuses bodies over 64 KiB with 413', () => {
    expect(parse(`{"data":{"type":"things","attributes":{"x":"${'a'.repeat(70_000)}"}}}`)).toMatch(/^413 /);
  });
});

describe('include', () => {
  const refusal = (query: Record<string, string>) => {
    try {
      assertNoInclusion(query, undefined);
    } catch (error) {
      return errorDocument(error as ApiError).errors[0]!;
    }
    throw new Error('include was not refused');
  };

  it("is refused 400 with HCP Terraform's words, which go-tfe turns into ErrInvalidIncludeValue, naming what was asked", () => {
    // go-tfe (checkResponseCode) maps a 400 to ErrInvalidIncludeValue when its text contains "include parameter".
    expect(refusal({ include: 'run' })).toEqual({
      status: '400',
      title: 'bad request',
      detail: 'Invalid include parameter: run cannot be included, this endpoint includes no related resources',
    });
    expect(refusal({ include: 'run, created-by' }).detail).toBe(
      'Invalid include parameter: run, created-by cannot be included, this endpoint includes no related resources',
    );
    expect(refusal({ include: ' , ' }).detail).toBe(
      'Invalid include parameter: it names no relationship path, and this endpoint includes no related resources',
    );
  });

  it('is answered as docs/api.md quotes it', () => {
    const apiDoc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8').replace(/\s*\n\s*/g, ' ');
    expect(apiDoc).toContain(`(\`${refusal({ include: 'run' }).detail}\`)`);
  });

  it('lets a request without include through', () => {
    expect(() => assertNoInclusion({ 'page[size]': '1' }, undefined)).not.toThrow();
  });
});

describe('error documents', () => {
  it('carries status as a string, and source only when there is a pointer', () => {
    expect(errorDocument(new NotFound())).toEqual({ errors: [{ status: '404', title: 'not found' }] });
    expect(errorDocument(new InvalidAttribute('Key is invalid', '/data/attributes/key'))).toEqual({
      errors: [
        {
          status: '422',
          title: 'invalid attribute',
          detail: 'Key is invalid',
          source: { pointer: '/data/attributes/key' },
        },
      ],
    });
  });
});
