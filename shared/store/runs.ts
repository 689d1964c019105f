import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from './client';
import { queryPrefix, type Item } from './collection';
import { Entity, keys } from './keys';
import { transactWrite } from './transactions';
import { now } from '../ids';

/**
 * Runs, as the operator registers them. A run is two items: its own record in its partition
 * (which doubles as the counter of its comments, see keys.ts) and a listing under its
 * organization for `run list`. A run's organization never changes once registered.
 */
export interface RunRecord {
  runId: string;
  organization: string;
  workspace?: string;
  createdAt: string;
}

export interface NewRun {
  runId: string;
  organization: string;
  workspace?: string;
}

/** Registering a run id that already belongs to another organization. */
export class RunRegisteredElsewhere extends Error {
  readonly run: RunRecord;

  constructor(run: RunRecord) {
    super(`run ${run.runId} is already registered in organization ${run.organization}`);
    this.run = run;
  }
}

const toRecord = (item: Item): RunRecord => ({
  runId: item.runId as string,
  organization: item.organization as string,
  ...(typeof item.workspace === 'string' ? { workspace: item.workspace } : {}),
  createdAt: item.createdAt as string,
});

export async function findRun(runId: string): Promise<RunRecord | undefined> {
  const { Item: found } = await documentClient.send(
    new GetCommand({ TableName: tableName(), Key: keys.run(runId), ConsistentRead: true }),
  );
  return found ? toRecord(found) : undefined;
}

/**
 * Registers a run. Idempotent for the same organization (the run as first registered comes back,
 * `created: false`); throws RunRegisteredElsewhere for another one.
 */
export async function registerRun(input: NewRun): Promise<{ run: RunRecord; created: boolean }> {
  const existing = await findRun(input.runId);
  if (existing) return sameOrganization(existing, input);
  const run: RunRecord = { ...input, createdAt: now() };
  const refused = await transactWrite([
    {
      Put: {
        TableName: tableName(),
        Item: { ...keys.run(run.runId), entity: Entity.Run, ...run, commentCount: 0 },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    {
      Put: {
        TableName: tableName(),
        Item: { ...keys.organizationRun(run.organization, run.runId), entity: Entity.RunOfOrganization, ...run },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
  ]);
  if (!refused) return { run, created: true };
  // Someone registered it between our read and our write: decide against what they wrote.
  return sameOrganization((await findRun(input.runId))!, input);
}

function sameOrganization(existing: RunRecord, input: NewRun) {
  if (existing.organization !== input.organization) throw new RunRegisteredElsewhere(existing);
  return { run: existing, created: false };
}

/** The organization's runs, in run id order (the operator's view; not served by the API). */
export async function listRuns(organization: string): Promise<RunRecord[]> {
  return (await queryPrefix(keys.organizationRuns(organization))).map(toRecord);
}
