import { getItem, queryPrefix, type Item } from './collection';
import { LOST_ROUND, whileContended } from './contention';
import { Entity, keys } from './keys';
import { writeDerived, writeOnce } from './single-write';
import { newId, now } from '../ids';

/**
 * Runs, as the operator registers them. A run is two items: its own record in its partition
 * (which doubles as the counter of its comments, see keys.ts) and a listing under its
 * organization for `run list`. A run's organization never changes once registered. A
 * registration commits with the record's conditional Put; the listing is derived from it, written
 * after it, and written again by the operator's next `run register` of the run if a registration
 * died in between.
 */
export interface RunRecord {
  runId: string;
  organization: string;
  /** The workspace's name. */
  workspace?: string;
  /** `ws-…`, when HCP Terraform announced the run. */
  workspaceId?: string;
  /** When the run was created (HCP Terraform's `run_created_at`), else when it was registered. */
  createdAt: string;
  /** Who created it (HCP Terraform's `run_created_by`), when known. */
  createdBy?: string;
}

export interface NewRun {
  runId: string;
  organization: string;
  workspace?: string;
  workspaceId?: string;
  /** Defaults to now. */
  createdAt?: string;
  createdBy?: string;
}

/** HCP Terraform's workspace names: letters, digits, - and _, at most 90. */
export const isWorkspaceName = (name: string) => /^[A-Za-z0-9_-]{1,90}$/.test(name);

/** A run as registered, and whether this call registered it. */
export interface Registration {
  run: RunRecord;
  created: boolean;
}

/** The refusal of a run id that already belongs to another organization (see collection.ts for the convention). */
export type RegisteredElsewhere = 'registered-elsewhere';

const toRecord = (item: Item): RunRecord => ({
  runId: item.runId as string,
  organization: item.organization as string,
  ...(typeof item.workspace === 'string' ? { workspace: item.workspace } : {}),
  ...(typeof item.workspaceId === 'string' ? { workspaceId: item.workspaceId } : {}),
  createdAt: item.createdAt as string,
  ...(typeof item.createdBy === 'string' ? { createdBy: item.createdBy } : {}),
});

export async function findRun(runId: string): Promise<RunRecord | undefined> {
  const found = await getItem(keys.run(runId));
  return found ? toRecord(found) : undefined;
}

/**
 * Registers a run. Idempotent for the same organization (the run as first registered comes back,
 * `created: false`, its listing written if a registration died before it); refused, changing
 * nothing, for another one.
 */
export async function registerRun(input: NewRun): Promise<Registration | RegisteredElsewhere> {
  const existing = await findRun(input.runId);
  if (!existing) return insertRun(input);
  const registration = sameOrganization(existing, input);
  if (registration !== 'registered-elsewhere') await writeListing(existing);
  return registration;
}

/**
 * The write half of registerRun, for a caller that has just read the run and found none: the
 * record's conditional Put commits it, then its listing; if someone registered it in between,
 * decided against what they wrote.
 */
export async function insertRun(input: NewRun): Promise<Registration | RegisteredElsewhere> {
  const run: RunRecord = { ...input, createdAt: input.createdAt ?? now() };
  const outcome = await whileContended('run', { runId: run.runId }, async () => {
    const attempt = await writeOnce({
      Put: {
        Item: { ...keys.run(run.runId), entity: Entity.Run, ...run, commentCount: 0 },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    });
    return attempt === LOST_ROUND ? LOST_ROUND : attempt;
  });
  if (outcome !== 'written') return sameOrganization(toRecord(outcome.refused!), input);
  await writeListing(run);
  return { run, created: true };
}

/** The run's listing under its organization: derived from its record, so written as many times as needed. */
function writeListing(run: RunRecord): Promise<boolean> {
  return writeDerived(
    'run',
    { runId: run.runId },
    {
      Put: {
        Item: { ...keys.organizationRun(run.organization, run.runId), entity: Entity.RunOfOrganization, ...run },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
  );
}

/** Registers a run under a fresh id (the local seed's, the tests'): no other organization can hold it. */
export async function registerNewRun(organization: string, workspace?: string): Promise<RunRecord> {
  const registration = await registerRun({ runId: newId('run'), organization, ...(workspace ? { workspace } : {}) });
  if (registration === 'registered-elsewhere') throw new Error('a fresh run id was already registered');
  return registration.run;
}

/** An existing run, as the registration of `input`: the same organization, or refused. */
export function sameOrganization(
  existing: RunRecord,
  input: Pick<NewRun, 'organization'>,
): Registration | RegisteredElsewhere {
  return existing.organization === input.organization ? { run: existing, created: false } : 'registered-elsewhere';
}

/** The organization's runs, in run id order (the operator's view; not served by the API). */
export async function listRuns(organization: string): Promise<RunRecord[]> {
  return (await queryPrefix(keys.organizationRuns(organization))).map(toRecord);
}
