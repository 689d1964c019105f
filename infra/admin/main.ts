import { LocalStoreRefused, openLocalStore } from './local-store';
import { AwsRefused, awsFailureLines, deployedRegion } from './aws';
import { closest, parseCommandArgs, UsageError, type Command } from './command';
import { notificationCommands } from './notifications';
import { regionCommands } from './regions';
import { runCommands } from './runs';
import { tableCommands } from './tables';
import { tokenCommands } from './tokens';
import { issuerCommands, trustCommands } from './trusts';

/**
 * The operator CLI. Against the local store by default (the running `npm start`, or a temporary
 * DynamoDB Local over DATA_DIR); against any table when TABLE_NAME is set, with the AWS SDK's
 * usual settings (credentials, AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB). Every mistake in the command
 * line is reported, in one line and exit code 2, before any store is opened.
 */
const groups: Record<string, Record<string, Command>> = {
  token: tokenCommands,
  trust: trustCommands,
  issuer: issuerCommands,
  run: runCommands,
  notifications: notificationCommands,
  region: regionCommands,
  table: tableCommands,
};

const usageLines = (commands: Record<string, Command>) =>
  Object.values(commands).map((c) => `  npm run admin -- ${c.usage} [--json]`);

function usage(): string {
  return [
    'Usage:',
    ...Object.values(groups).flatMap(usageLines),
    'Works on the store of the npm start serving DATA_DIR (.data), else a temporary DynamoDB Local over it;',
    "with TABLE_NAME set, on that table with the AWS SDK's settings. It says which on stderr.",
  ].join('\n');
}

const HELP_WORDS = new Set(['--help', '-h', 'help']);
const wantsHelp = (argv: string[]) =>
  argv.some((arg) => arg === '--help' || arg === '-h') || argv[0] === 'help' || argv[1] === 'help';

/** What --help prints: a command's usage, a group's (`token --help`, `token help`), or every command's. */
function helpFor(group: string | undefined, action: string | undefined, found: Command | { message: string }): string {
  if ('run' in found) return commandUsage(found);
  const commands = own(groups, group);
  if (commands && (action === undefined || HELP_WORDS.has(action)))
    return ['Usage:', ...usageLines(commands)].join('\n');
  return usage();
}
const commandUsage = (command: Command) => `Usage: npm run admin -- ${command.usage} [--json]`;
/** Own entries only: `token constructor` is an unknown command, not Object's constructor. */
const own = <T>(record: Record<string, T>, key: string | undefined): T | undefined =>
  key !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;

/** Which store the command works on, on stderr, so its output stays what --json promises. */
async function openStore(): Promise<
  { apiAddress?: string; stackRunning?: boolean; close(): Promise<void> } | undefined
> {
  const table = process.env.TABLE_NAME;
  if (!table) return openLocalStore((line) => console.error(line));
  const region = deployedRegion(process.env);
  console.error(
    `admin: table ${table} (TABLE_NAME), region ${region}, endpoint ${process.env.AWS_ENDPOINT_URL_DYNAMODB ?? "DynamoDB's own"}`,
  );
  return undefined;
}

const HELP_HINT = 'npm run admin -- --help lists every command';

/** The command the words name, or what is wrong with them (naming the nearest command) and what to print after. */
function findCommand(
  group: string | undefined,
  action: string | undefined,
): Command | { message: string; more: string } {
  const all = Object.entries(groups).flatMap(([g, commands]) => Object.keys(commands).map((a) => `${g} ${a}`));
  const commands = own(groups, group);
  if (group === undefined) return { message: 'a command is required', more: usage() };
  if (!commands) {
    const suggestion = closest(`${group} ${action ?? ''}`.trim(), all) ?? closest(group, Object.keys(groups));
    return { message: `unknown command ${group}${suggestion ? `; did you mean ${suggestion}?` : ''}`, more: HELP_HINT };
  }
  if (action === undefined) {
    return {
      message: `${group} needs a command: ${Object.keys(commands).join(', ')}`,
      more: ['Usage:', ...usageLines(commands)].join('\n'),
    };
  }
  const command = own(commands, action);
  if (command) return command;
  const suggestion = closest(action, Object.keys(commands));
  return {
    message: `unknown command ${group} ${action}; ${suggestion ? `did you mean ${group} ${suggestion}?` : `${group} has ${Object.keys(commands).join(', ')}`}`,
    more: HELP_HINT,
  };
}

async function main(argv: string[]): Promise<number> {
  const [group, action, ...rest] = argv;
  const found = findCommand(group, action);
  const json = argv.includes('--json');
  const refuse = (message: string, usageText: string) => {
    if (json) console.log(JSON.stringify({ error: message }));
    console.error(`admin: ${message}\n${usageText}`);
    return 2;
  };
  if (wantsHelp(argv)) {
    console.log(helpFor(group, action, found));
    return 0;
  }
  if (!('run' in found)) return refuse(found.message, found.more);
  const command = found;
  let args;
  try {
    args = parseCommandArgs(command, rest);
    command.check?.(args, { deployed: Boolean(process.env.TABLE_NAME) });
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return refuse(error.message, commandUsage(command));
  }
  let store;
  try {
    if (command.usesStore !== false) store = await openStore();
  } catch (error) {
    if (error instanceof AwsRefused) {
      for (const line of error.lines) console.error(`admin: ${line}`);
      return 1;
    }
    if (!(error instanceof LocalStoreRefused)) throw error;
    console.error(`admin: ${error.message}`);
    return 1;
  }
  try {
    const {
      json: output,
      text,
      exitCode,
    } = await command.run(args, { apiAddress: store?.apiAddress, stackRunning: store?.stackRunning });
    console.log(args.values.json ? JSON.stringify(output) : text.join('\n'));
    return exitCode ?? 0;
  } catch (error) {
    const aws = process.env.TABLE_NAME ? awsFailureLines(error, process.env.TABLE_NAME, process.env) : undefined;
    if (aws) {
      for (const line of aws) console.error(`admin: ${line}`);
      return 1;
    }
    if (!(error instanceof UsageError)) throw error;
    return refuse(error.message, commandUsage(command));
  } finally {
    await store?.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
