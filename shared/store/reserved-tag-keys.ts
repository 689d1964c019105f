import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from './client';
import { queryCountedPage, recordOf, type Item } from './collection';
import { Entity, keys } from './keys';
import { transactWrite } from './transactions';
import type { PageRequest } from '../jsonapi/pagination';
import type { Page } from '../jsonapi/document';
import type { ReservedTagKey, ReservedTagKeyChanges } from '../reserved-tag-keys/reserved-tag-key';
import { newId, now } from '../ids';

/**
 * Reserved tag keys. Each key is three items, written and removed together in one transaction:
 * the member of its organization's counted collection (what lists read), a copy keyed by id (what
 * PATCH and DELETE find it by) and a guard item per lower-cased name (what makes names unique).
 */

/** Why a write was refused, so the caller can answer with the right error. */
export type WriteRefusal = 'name-taken' | 'gone';

const toRecord = (item: Item) => recordOf<ReservedTagKey>(item);

const memberKey = (record: ReservedTagKey) => keys.reservedTagKey(record.organization, record.createdAt, record.id);
const nameKey = (record: { organization: string; key: string }) => keys.reservedTagKeyName(record.organization, record.key);
const item = (record: ReservedTagKey) => ({ entity: Entity.ReservedTagKey, ...record });

/** Page 1 with its total count is one Query: the counter item sorts first in the collection. */
export async function listReservedTagKeys(organization: string, page: PageRequest): Promise<Page<ReservedTagKey>> {
  const { counter, members } = await queryCountedPage(keys.reservedTagKeys(organization), page);
  return { items: members.map(toRecord), totalCount: (counter?.itemCount as number | undefined) ?? 0 };
}

export async function findReservedTagKey(id: string): Promise<ReservedTagKey | undefined> {
  const { Item: found } = await documentClient.send(
    new GetCommand({ TableName: tableName(), Key: keys.reservedTagKeyById(id), ConsistentRead: true }),
  );
  return found ? toRecord(found) : undefined;
}

/** One transaction: both copies, the name guard and the counter, or nothing. */
export async function insertReservedTagKey(
  organization: string, attributes: Required<ReservedTagKeyChanges>,
): Promise<ReservedTagKey | WriteRefusal> {
  const createdAt = now();
  const record: ReservedTagKey = { id: newId('rtk'), organization, ...attributes, createdAt, updatedAt: createdAt };
  const refused = await transactWrite([
    { Put: { TableName: tableName(), Item: { ...nameKey(record), entity: Entity.ReservedTagKeyName, id: record.id }, ConditionExpression: 'attribute_not_exists(PK)' } },
    { Put: { TableName: tableName(), Item: { ...memberKey(record), ...item(record) }, ConditionExpression: 'attribute_not_exists(PK)' } },
    { Put: { TableName: tableName(), Item: { ...keys.reservedTagKeyById(record.id), ...item(record) }, ConditionExpression: 'attribute_not_exists(PK)' } },
    counterChange(organization, 1),
  ]);
  return refused ? 'name-taken' : record;
}

/**
 * Sets only the attributes that change, on both copies. A rename is conditioned on the key still
 * being the one read (its guard item moves with it); other changes only need the key to exist,
 * so concurrent updates of different attributes never refuse each other. 'gone': deleted or
 * renamed meanwhile, read it again.
 */
export async function updateStoredReservedTagKey(current: ReservedTagKey, changes: ReservedTagKeyChanges): Promise<ReservedTagKey | WriteRefusal> {
  const updated: ReservedTagKey = { ...current, ...changes, updatedAt: now() };
  const renamed = nameKey(updated).SK !== nameKey(current).SK;
  const set = { updatedAt: updated.updatedAt, ...changes };
  const names = Object.keys(set);
  const update = {
    UpdateExpression: `SET ${names.map((n) => `#${n} = :${n}`).join(', ')}`,
    ConditionExpression: changes.key === undefined ? 'attribute_exists(PK)' : '#key = :seenKey',
    ExpressionAttributeNames: Object.fromEntries(names.map((n) => [`#${n}`, n])),
    ExpressionAttributeValues: {
      ...Object.fromEntries(names.map((n) => [`:${n}`, set[n as keyof typeof set]])),
      ...(changes.key === undefined ? {} : { ':seenKey': current.key }),
    },
  };
  const refused = await transactWrite([
    ...(renamed
      ? [
          { Put: { TableName: tableName(), Item: { ...nameKey(updated), entity: Entity.ReservedTagKeyName, id: updated.id }, ConditionExpression: 'attribute_not_exists(PK)' } },
          { Delete: { TableName: tableName(), Key: nameKey(current), ConditionExpression: 'id = :id', ExpressionAttributeValues: { ':id': current.id } } },
        ]
      : []),
    { Update: { TableName: tableName(), Key: memberKey(current), ...update } },
    { Update: { TableName: tableName(), Key: keys.reservedTagKeyById(current.id), ...update } },
  ]);
  if (!refused) return updated;
  return renamed && refused[0] === 'ConditionalCheckFailed' ? 'name-taken' : 'gone';
}

/** Removes all three items and decrements the counter; 'gone' when it was already deleted. */
export async function deleteStoredReservedTagKey(current: ReservedTagKey): Promise<undefined | WriteRefusal> {
  const refused = await transactWrite([
    { Delete: { TableName: tableName(), Key: memberKey(current), ConditionExpression: 'attribute_exists(PK)' } },
    { Delete: { TableName: tableName(), Key: keys.reservedTagKeyById(current.id) } },
    { Delete: { TableName: tableName(), Key: nameKey(current), ConditionExpression: 'id = :id', ExpressionAttributeValues: { ':id': current.id } } },
    counterChange(current.organization, -1),
  ]);
  return refused ? 'gone' : undefined;
}

function counterChange(organization: string, delta: 1 | -1) {
  return {
    Update: {
      TableName: tableName(),
      Key: keys.reservedTagKeyCounter(organization),
      UpdateExpression: 'SET entity = :entity ADD itemCount :delta',
      ExpressionAttributeValues: { ':entity': Entity.ReservedTagKeyCounter, ':delta': delta },
    },
  };
}
