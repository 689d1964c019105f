import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from './client';
import { queryPrefix, recordOf } from './collection';
import { Entity, keys } from './keys';
import { newId, now } from '../ids';
import type { Trust } from '../workload-identity/trust';

export type NewTrust = Omit<Trust, 'trustId' | 'createdAt'>;

/** Stores a trust; its id is new, so nothing is overwritten. */
export async function createTrust(input: NewTrust): Promise<Trust> {
  const trust: Trust = { trustId: newId('trust'), ...input, createdAt: now() };
  await documentClient.send(
    new PutCommand({
      TableName: tableName(),
      // Claims as a Map: a claim named `constructor` must stay a member, not be taken for Object's.
      Item: {
        ...keys.trust(trust.issuer, trust.trustId),
        entity: Entity.Trust,
        ...trust,
        claims: new Map(Object.entries(trust.claims)),
      },
      ConditionExpression: 'attribute_not_exists(PK)',
    }),
  );
  return trust;
}

/**
 * The trusts of one issuer, exactly (a longer issuer sharing the prefix is not it): the
 * authorizer's one read for a JWT, before anything is fetched from that issuer.
 */
export async function findTrustsOfIssuer(issuer: string): Promise<Trust[]> {
  return (await queryPrefix(keys.trustsOfIssuer(issuer))).map(toTrust).filter((trust) => trust.issuer === issuer);
}

/** Every trust, or an organization's: the operator's list (one partition, by issuer). */
export async function listTrusts(organization?: string): Promise<Trust[]> {
  const all = (await queryPrefix(keys.trustsPrefix)).map(toTrust);
  return organization === undefined ? all : all.filter((trust) => trust.organization === organization);
}

/** Deletes a trust by id and answers what it was; 'not-found' when there is none. */
export async function deleteTrust(trustId: string): Promise<Trust | 'not-found'> {
  const trust = (await listTrusts()).find((t) => t.trustId === trustId);
  if (!trust) return 'not-found';
  await documentClient.send(
    new DeleteCommand({ TableName: tableName(), Key: keys.trust(trust.issuer, trust.trustId) }),
  );
  return trust;
}

function toTrust(item: Record<string, unknown>): Trust {
  const trust = recordOf<Trust>(item);
  // A Map written by createTrust reads back as a plain object; an empty one may be absent.
  return { ...trust, claims: { ...(trust.claims ?? {}) } };
}
