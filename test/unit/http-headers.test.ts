import { describe, expect, it } from '@jest/globals';
import { distinctHeaderValues, headerValue, headerValues, mergeSpellings } from '#shared/http/headers';

/**
 * Reading headers as API Gateway passes them (shared/http/headers.ts): names in the client's
 * casing, and in multiValueHeaders one key per spelling, so one header may be under several keys.
 */
describe('headerValue', () => {
  it('finds a header whatever the casing of its name', () => {
    expect(headerValue({ 'Content-Type': 'text/plain' }, 'content-type')).toBe('text/plain');
    expect(headerValue({ 'content-type': 'text/plain' }, 'Content-Type')).toBe('text/plain');
  });

  it('is undefined when the header is absent, or there are no headers at all', () => {
    expect(headerValue({ Accept: '*/*' }, 'authorization')).toBeUndefined();
    expect(headerValue(null, 'authorization')).toBeUndefined();
    expect(headerValue(undefined, 'authorization')).toBeUndefined();
  });
});

describe('headerValues', () => {
  it('collects the values of every spelling of the name, in order', () => {
    const lines = { Authorization: ['Bearer a'], authorization: ['Bearer b', 'Bearer c'], Accept: ['*/*'] };
    expect(headerValues(lines, 'AUTHORIZATION')).toEqual(['Bearer a', 'Bearer b', 'Bearer c']);
  });

  it('is empty when the header is absent, or there are no headers at all', () => {
    expect(headerValues({ Accept: ['*/*'] }, 'authorization')).toEqual([]);
    expect(headerValues({ Authorization: undefined }, 'authorization')).toEqual([]);
    expect(headerValues(null, 'authorization')).toEqual([]);
  });
});

describe('distinctHeaderValues', () => {
  it('reads the lines of multiValueHeaders, each distinct value once', () => {
    const event = {
      headers: { authorization: 'Bearer b' },
      multiValueHeaders: { Authorization: ['Bearer a', 'Bearer a'], authorization: ['Bearer b'] },
    };
    expect(distinctHeaderValues(event, 'Authorization')).toEqual(['Bearer a', 'Bearer b']);
  });

  it('falls back on the single-value map when multiValueHeaders has no line of it', () => {
    const values = (event: Parameters<typeof distinctHeaderValues>[0]) => distinctHeaderValues(event, 'content-type');
    expect(values({ headers: { 'Content-Type': 'a', 'content-type': 'b' } })).toEqual(['a', 'b']);
    expect(values({ headers: { 'Content-Type': 'a' }, multiValueHeaders: {} })).toEqual(['a']);
    expect(values({ headers: null, multiValueHeaders: null })).toEqual([]);
  });
});

describe('mergeSpellings', () => {
  it('keys every header by its lower-cased name, with the values of all its spellings', () => {
    const merged = mergeSpellings({ 'Content-Type': ['a'], 'content-type': ['b'], Accept: ['*/*'], Empty: undefined });
    expect({ ...merged }).toEqual({ 'content-type': ['a', 'b'], accept: ['*/*'], empty: [] });
  });

  it('takes a header named like a built-in object member as just a name', () => {
    const merged = mergeSpellings(JSON.parse('{"__proto__": ["x"], "Constructor": ["y"], "constructor": ["z"]}'));
    expect(Object.getPrototypeOf(merged)).toBeNull();
    expect(Object.entries(merged)).toEqual([
      ['__proto__', ['x']],
      ['constructor', ['y', 'z']],
    ]);
  });
});
