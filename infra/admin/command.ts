import { parseArgs, type ParseArgsConfig } from 'node:util';
import { isOrganizationName, ORGANIZATION_NAME_RULE } from '#shared/organizations';

/** One operator command: `npm run admin -- <group> <action> [args] [--json]`. */
export interface Command {
  usage: string;
  options?: NonNullable<ParseArgsConfig['options']>;
  /** Returns the JSON object printed with --json, and the lines printed without it. */
  run(args: { positionals: string[]; values: Record<string, string | boolean | undefined> }, store: StoreInUse): Promise<{ json: unknown; text: string[] }>;
}

/** What the command works on. */
export interface StoreInUse {
  /** The API in front of it, for a local store (http://127.0.0.1:PORT); undefined for a named table. */
  apiAddress?: string;
}

/** A mistake in how the command was called: printed with its usage, exit code 2. */
export class UsageError extends Error {}

export function parseCommandArgs(command: Command, argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { ...command.options, json: { type: 'boolean' } },
    allowPositionals: true,
    strict: true,
  });
  // Every command's --org follows the API's one rule: a token or run in any other name would be unreachable.
  const organization = (values as Record<string, unknown>).org;
  if (organization !== undefined && !isOrganizationName(organization)) throw new UsageError(`--org must be ${ORGANIZATION_NAME_RULE}`);
  return { values: values as Record<string, string | boolean | undefined>, positionals };
}

export function requiredOption(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}
