import { InvalidAttribute } from '../jsonapi/errors';
import { relationship, selfLink } from '../jsonapi/document';
import type { ReservedTagKeyResource } from '../openapi/schemas';
import { KEY_MAX_LENGTH, KEY_PATTERN, RESERVED_TAG_KEY_TYPE } from './key-rule';

export { KEY_MAX_LENGTH, KEY_PATTERN, RESERVED_TAG_KEY_TYPE };

export interface ReservedTagKey {
  id: string;
  organization: string;
  key: string;
  disableOverrides: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface ReservedTagKeyChanges {
  key?: string;
  disableOverrides?: boolean;
}

const KEY_POINTER = '/data/attributes/key';
const DISABLE_OVERRIDES_POINTER = '/data/attributes/disable-overrides';

function validateKey(value: unknown): string {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
    throw new InvalidAttribute("Key can't be blank", KEY_POINTER);
  }
  if (typeof value !== 'string' || !KEY_PATTERN.test(value)) throw new InvalidAttribute('Key is invalid', KEY_POINTER);
  return value;
}

function validateDisableOverrides(value: unknown): boolean {
  if (typeof value !== 'boolean')
    throw new InvalidAttribute('Disable overrides must be a boolean', DISABLE_OVERRIDES_POINTER);
  return value;
}

/** Create: `key` required; `disable-overrides` optional, false when absent (go-tfe leaves it out). */
export function parseCreateAttributes(attributes: Record<string, unknown>): Required<ReservedTagKeyChanges> {
  return {
    key: validateKey(attributes.key),
    disableOverrides:
      'disable-overrides' in attributes ? validateDisableOverrides(attributes['disable-overrides']) : false,
  };
}

/** Update: partial; absent attributes stay as they are, read-only and unknown ones are ignored. */
export function parseUpdateAttributes(attributes: Record<string, unknown>): ReservedTagKeyChanges {
  const changes: ReservedTagKeyChanges = {};
  if ('key' in attributes) changes.key = validateKey(attributes.key);
  if ('disable-overrides' in attributes)
    changes.disableOverrides = validateDisableOverrides(attributes['disable-overrides']);
  return changes;
}

/** The one serialization of a key, used by create, update and list alike; its type is the OpenAPI document's schema. */
export function serializeReservedTagKey(record: ReservedTagKey): ReservedTagKeyResource {
  return {
    id: record.id,
    type: RESERVED_TAG_KEY_TYPE,
    attributes: {
      key: record.key,
      'disable-overrides': record.disableOverrides,
      'is-registry-tag': false,
      'created-at': record.createdAt,
      'updated-at': record.updatedAt,
    },
    relationships: { organization: relationship('organizations', record.organization) },
    links: { self: selfLink(`/reserved-tags/${record.id}`) },
  };
}
