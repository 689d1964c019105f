import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from './client';
import { queryCountedPage, recordOf, type Item } from './collection';
import { Entity, keys } from './keys';
import { transactWrite } from './transactions';
import type { PageRequest } from '../jsonapi/pagination';
import type { Page } from '../jsonapi/document';
import type { Comment } from '../comments/comment';
import { newId, now } from '../ids';

/**
 * Comments on runs. Each comment is two identical immutable items written in one transaction
 * with the run's counter: a member of the run's counted collection (what lists read, oldest
 * first) and a copy keyed by id (what `GET /comments/:id` reads in one GetItem).
 */

export interface NewComment {
  runId: string;
  organization: string;
  body: string;
  createdBy: string;
}

const toRecord = (item: Item) => recordOf<Comment>(item);

/** The two items of a comment; exported so tests can bulk-load comments exactly as they are stored. */
export const commentItems = (comment: Comment): Item[] => [
  { ...keys.runComment(comment.runId, comment.createdAt, comment.id), entity: Entity.Comment, ...comment },
  { ...keys.comment(comment.id), entity: Entity.Comment, ...comment },
];

/**
 * One page of a run's comments with their total and the run's organization, in one Query (the
 * run record sorts first in the collection). undefined when the run is not registered.
 */
export async function listStoredComments(runId: string, page: PageRequest): Promise<{ organization: string; page: Page<Comment> } | undefined> {
  const { counter: run, members } = await queryCountedPage(keys.runComments(runId), page);
  if (!run) return undefined;
  return {
    organization: run.organization as string,
    page: { items: members.map(toRecord), totalCount: (run.commentCount as number | undefined) ?? 0 },
  };
}

export async function findComment(commentId: string): Promise<Comment | undefined> {
  const { Item: found } = await documentClient.send(
    new GetCommand({ TableName: tableName(), Key: keys.comment(commentId), ConsistentRead: true }),
  );
  return found ? toRecord(found) : undefined;
}

/**
 * One transaction: the counter (only while the run exists in `organization`) and both copies.
 * 'run-not-found' when the run is not registered in that organization.
 */
export async function insertComment(input: NewComment): Promise<Comment | 'run-not-found'> {
  const comment: Comment = { id: newId('wsc'), ...input, createdAt: now() };
  const [member, byId] = commentItems(comment);
  const refused = await transactWrite([
    {
      Update: {
        TableName: tableName(),
        Key: keys.run(comment.runId),
        UpdateExpression: 'ADD commentCount :one',
        ConditionExpression: 'attribute_exists(PK) AND organization = :organization',
        ExpressionAttributeValues: { ':one': 1, ':organization': comment.organization },
      },
    },
    { Put: { TableName: tableName(), Item: member, ConditionExpression: 'attribute_not_exists(PK)' } },
    { Put: { TableName: tableName(), Item: byId, ConditionExpression: 'attribute_not_exists(PK)' } },
  ]);
  if (!refused) return comment;
  if (refused[0] === 'ConditionalCheckFailed') return 'run-not-found';
  // A fresh random id that already exists: 62^16 ids make this a bug, not bad luck.
  throw new Error('comment id collision');
}
