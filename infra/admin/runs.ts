import { isId } from '#shared/ids';
import { findRun, isWorkspaceName, listRuns, registerRun, type RunRecord } from '#shared/store/runs';
import { requiredOption, UsageError, type Command } from './command';
import { columns, shortTime } from './tokens';

/** A run's row: CREATED is when the run was created, as its first notification said, or when it was registered. */
const row = (run: RunRecord) => [run.runId, run.organization, run.workspace ?? '-', shortTime(run.createdAt)];

export const runCommands: Record<string, Command> = {
  register: {
    usage: 'run register RUN_ID --org ORG [--workspace WS]',
    options: { org: { type: 'string' }, workspace: { type: 'string' } },
    positionals: 1,
    check({ positionals, values }) {
      if (!isId('run', positionals[0])) throw new UsageError('RUN_ID must be run- followed by 16 letters or digits');
      requiredOption(values, 'org');
      const workspace = values.workspace;
      if (workspace !== undefined && (typeof workspace !== 'string' || !isWorkspaceName(workspace))) {
        throw new UsageError('--workspace must be 1-90 letters, digits, - or _');
      }
    },
    async run({ positionals, values }) {
      const runId = positionals[0]!;
      const organization = requiredOption(values, 'org');
      const workspace = values.workspace as string | undefined;
      const registration = await registerRun({ runId, organization, ...(workspace ? { workspace } : {}) });
      if (registration === 'registered-elsewhere') {
        throw new UsageError(
          `run ${runId} is already registered in organization ${(await findRun(runId))?.organization}`,
        );
      }
      const { run, created } = registration;
      return {
        json: { run, created },
        text: [
          created
            ? `Registered ${run.runId} in ${run.organization}.`
            : `${run.runId} was already registered in ${run.organization}.`,
        ],
      };
    },
  },
  list: {
    usage: 'run list --org ORG',
    options: { org: { type: 'string' } },
    check({ values }) {
      requiredOption(values, 'org');
    },
    async run({ values }) {
      const runs = await listRuns(requiredOption(values, 'org'));
      return {
        json: { runs },
        text:
          runs.length === 0
            ? ['No runs.']
            : columns(['RUN ID', 'ORGANIZATION', 'WORKSPACE', 'CREATED (UTC)'], runs.map(row)),
      };
    },
  },
};
