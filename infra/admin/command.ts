import { parseArgs, type ParseArgsConfig } from 'node:util';
import { isOrganizationName, ORGANIZATION_NAME_RULE } from '#shared/organizations';

/** Parsed flags; a flag declared `multiple` gives every value it was given. */
export type Values = Record<string, string | boolean | string[] | undefined>;
export interface CommandArgs {
  positionals: string[];
  values: Values;
}

/** One operator command: `npm run admin -- <group> <action> [args] [--json]`. */
export interface Command {
  usage: string;
  options?: NonNullable<ParseArgsConfig['options']>;
  /** How many positional arguments it takes (default 0): any more is a mistake, not ignored. */
  positionals?: number;
  /**
   * Checks the arguments before any store is opened (throws UsageError), so a mistake costs no
   * DynamoDB Local start. `deployed`: TABLE_NAME is set, the command works on a deployed table.
   */
  check?(args: CommandArgs, where: { deployed: boolean }): void;
  /** False for a command that never touches the store: none is opened for it. */
  usesStore?: false;
  /**
   * Returns the JSON object printed with --json, and the lines printed without it; `exitCode`, when
   * the answer is a "no" a script should see (trust check: no trust accepts the token), else 0.
   */
  run(args: CommandArgs, store: StoreInUse): Promise<{ json: unknown; text: string[]; exitCode?: number }>;
}

/** What the command works on. */
export interface StoreInUse {
  /** The API in front of it, for a local store (http://127.0.0.1:PORT); undefined for a named table. */
  apiAddress?: string;
  /** For a local store: whether an npm start serves it now (its API Gateway caches authorizer answers). */
  stackRunning?: boolean;
}

/** A mistake in how the command was called: printed with its usage, exit code 2. */
export class UsageError extends Error {}

/**
 * The arguments, or a UsageError in one line of our own: an unknown flag is named with the closest
 * known one, a flag without its value says so, and a negative number is taken as a value (Node's
 * parser calls `--expires-in-days -3` ambiguous) for the command's own check to refuse.
 */
export function parseCommandArgs(command: Command, argv: string[]): CommandArgs {
  const options = { ...command.options, json: { type: 'boolean' as const } };
  const args = attachNegativeValues(options, argv);
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(parseErrorLine(error as Error & { code?: string }, options, args));
  }
  const { values, positionals } = parsed;
  const allowed = command.positionals ?? 0;
  if (positionals.length > allowed) throw new UsageError(`unexpected argument ${positionals[allowed]}`);
  // Every command's --org follows the API's one rule: a token or run in any other name would be unreachable.
  const organization = (values as Record<string, unknown>).org;
  if (organization !== undefined && !isOrganizationName(organization))
    throw new UsageError(`--org must be ${ORGANIZATION_NAME_RULE}`);
  return { values: values as Values, positionals };
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** `--name -3` → `--name=-3` for a string option: a negative number is a value, not a flag. */
function attachNegativeValues(options: Options, argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const name = /^--([\w-]+)$/.exec(argv[i]!)?.[1];
    const next = argv[i + 1];
    if (name && options[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      out.push(`--${name}=${next}`);
      i++;
    } else {
      out.push(argv[i]!);
    }
  }
  return out;
}

function parseErrorLine(error: Error & { code?: string }, options: Options, args: string[]): string {
  const known = Object.keys(options).map((name) => `--${name}`);
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const flag = /'([^']+)'/.exec(error.message)?.[1] ?? '';
    const bare = flag.split('=')[0]!;
    const suggestion = closest(bare, known);
    return `unknown flag ${bare}${suggestion ? `; did you mean ${suggestion}?` : ''} (this command takes ${known.join(', ')})`;
  }
  if (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const flag = /'(--[\w-]+)/.exec(error.message)?.[1] ?? '';
    const name = flag.slice(2);
    if (options[name]?.type === 'boolean') return `${flag} takes no value`;
    const next = args[args.indexOf(flag) + 1];
    return next === undefined ? `${flag} needs a value` : `${flag} needs a value, not the flag ${next}`;
  }
  return error.message.split('\n')[0]!;
}

/** The candidate nearest to `word` by edit distance, if it is near enough to be a typo of it. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = candidate.startsWith(word) && word.length >= 3 ? 1 : editDistance(word, candidate);
    if (!best || distance < best.distance) best = { candidate, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(word.length / 3)) ? best.candidate : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

export function requiredOption(values: Values, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}
