import { describe, expect, it } from '@jest/globals';
import {
  parseCreateAttributes,
  parseUpdateAttributes,
  serializeReservedTagKey,
} from '#shared/reserved-tag-keys/reserved-tag-key';
import { keys } from '#shared/store/keys';
import { InvalidAttribute } from '#shared/jsonapi/errors';

const detailOf = (fn: () => unknown) => {
  try {
    fn();
    return 'ok';
  } catch (error) {
    return error instanceof InvalidAttribute ? `${error.detail} @ ${error.pointer}` : String(error);
  }
};

describe('reserved tag key attributes', () => {
  it.each(['environment', 'cost-center', 'a', 'k'.repeat(128), 'team:owner', 'x.y=z+1@host_a', 'two words', 'UPPER'])(
    'accepts key %j',
    (key) => expect(detailOf(() => parseCreateAttributes({ key }))).toBe('ok'),
  );

  it.each([
    'k'.repeat(129),
    ' leading',
    'trailing ',
    'tab\there',
    'naïve',
    'slash/key',
    'emoji😀',
    'comma,key',
    7,
    true,
    ['a'],
  ])('refuses key %j as invalid', (key) =>
    expect(detailOf(() => parseCreateAttributes({ key }))).toBe('Key is invalid @ /data/attributes/key'),
  );

  it.each([undefined, null, '', '   '])('refuses key %j as blank', (key) =>
    expect(detailOf(() => parseCreateAttributes({ key }))).toBe("Key can't be blank @ /data/attributes/key"),
  );

  it('defaults disable-overrides to false and insists on a boolean when present', () => {
    expect(parseCreateAttributes({ key: 'env' })).toEqual({ key: 'env', disableOverrides: false });
    expect(parseCreateAttributes({ key: 'env', 'disable-overrides': true })).toEqual({
      key: 'env',
      disableOverrides: true,
    });
    for (const value of ['true', 1, null, {}]) {
      expect(detailOf(() => parseCreateAttributes({ key: 'env', 'disable-overrides': value }))).toBe(
        'Disable overrides must be a boolean @ /data/attributes/disable-overrides',
      );
    }
  });

  it('takes partial updates and ignores read-only and unknown attributes', () => {
    expect(parseUpdateAttributes({})).toEqual({});
    expect(
      parseUpdateAttributes({ 'disable-overrides': true, 'created-at': 'x', 'is-registry-tag': true, foo: 1 }),
    ).toEqual({ disableOverrides: true });
    expect(detailOf(() => parseUpdateAttributes({ key: '' }))).toBe("Key can't be blank @ /data/attributes/key");
  });

  it('serializes exactly the contract shape', () => {
    const record = {
      id: 'rtk-jjnTseo8NN1jACbk',
      organization: 'my-org',
      key: 'environment',
      disableOverrides: false,
      createdAt: '2026-11-22T09:30:00.123Z',
      updatedAt: '2026-11-22T09:30:00.123Z',
    };
    expect(serializeReservedTagKey(record)).toEqual({
      id: 'rtk-jjnTseo8NN1jACbk',
      type: 'reserved-tag-keys',
      attributes: {
        key: 'environment',
        'disable-overrides': false,
        'is-registry-tag': false,
        'created-at': '2026-11-22T09:30:00.123Z',
        'updated-at': '2026-11-22T09:30:00.123Z',
      },
      relationships: { organization: { data: { id: 'my-org', type: 'organizations' } } },
      links: { self: '/api/v2/reserved-tags/rtk-jjnTseo8NN1jACbk' },
    });
  });
});

describe('table keys', () => {
  it('puts a collection counter first and its members in creation order', () => {
    const counter = keys.reservedTagKeyCounter('org').SK;
    const first = keys.reservedTagKey('org', '2026-01-01T00:00:00.000Z', 'rtk-b').SK;
    const second = keys.reservedTagKey('org', '2026-01-01T00:00:00.001Z', 'rtk-a').SK;
    const tie = keys.reservedTagKey('org', '2026-01-01T00:00:00.001Z', 'rtk-c').SK;
    expect([tie, second, counter, first].sort()).toEqual([counter, first, second, tie]);
    expect(first.startsWith(keys.reservedTagKeys('org').SKPrefix)).toBe(true);
  });

  it('keeps name guards and run index items out of the key collection', () => {
    const prefix = keys.reservedTagKeys('org').SKPrefix;
    expect(keys.reservedTagKeyName('org', 'Env').SK.startsWith(prefix)).toBe(false);
    expect(keys.organizationRun('org', 'run-x').SK.startsWith(prefix)).toBe(false);
  });

  it('makes names case-insensitive in their guard', () => {
    expect(keys.reservedTagKeyName('org', 'Environment')).toEqual(keys.reservedTagKeyName('org', 'environment'));
    expect(keys.reservedTagKeyName('a', 'env')).not.toEqual(keys.reservedTagKeyName('b', 'env'));
  });
});
