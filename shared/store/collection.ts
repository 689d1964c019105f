import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from './client';
import { pageOffset, type PageRequest } from '../jsonapi/pagination';

export type Item = Record<string, unknown>;

/** An item without its table keys and entity tag: the record it stores. */
export function recordOf<T>(item: Item): T {
  const { PK: _pk, SK: _sk, entity: _entity, ...record } = item;
  return record as T;
}

export interface KeyPrefix {
  PK: string;
  SKPrefix: string;
}

/**
 * Strongly consistent Query of the items under a key prefix, following DynamoDB's 1 MB pages
 * until `limit` items (or all of them) are read.
 */
export async function queryPrefix(prefix: KeyPrefix, limit = Infinity): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await documentClient.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': prefix.PK, ':prefix': prefix.SKPrefix },
        ConsistentRead: true,
        Limit: Number.isFinite(limit) ? limit - items.length : undefined,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(result.Items ?? []));
    startKey = result.LastEvaluatedKey;
  } while (startKey && items.length < limit);
  return items;
}

export interface CountedPage {
  /** The collection's counter item (a run's record, an organization's key counter), if it exists. */
  counter: Item | undefined;
  members: Item[];
}

/**
 * One page of a counted collection (see keys.ts): the counter and the first `offset + size`
 * members come back together, so page 1 costs one Query. DynamoDB has no offset, so deeper pages
 * read the members before them; that stays one Query while it is under 1 MB.
 */
export async function queryCountedPage(collection: KeyPrefix, page: PageRequest): Promise<CountedPage> {
  const offset = pageOffset(page);
  const items = await queryPrefix(collection, 1 + offset + page.size);
  const counter = items[0]?.SK === collection.SKPrefix ? items.shift() : undefined;
  return { counter, members: items.slice(offset, offset + page.size) };
}
