import { LocalStoreRefused, openLocalStore } from '../local/store';
import { parseCommandArgs, UsageError, type Command } from './command';
import { notificationCommands } from './notifications';
import { runCommands } from './runs';
import { tokenCommands } from './tokens';

/**
 * The operator CLI. Against the local store by default (the running `npm start`, or a temporary
 * DynamoDB Local over DATA_DIR); against any table when TABLE_NAME is set, with the AWS SDK's
 * usual settings (credentials, AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB).
 */
const groups: Record<string, Record<string, Command>> = { token: tokenCommands, run: runCommands, notifications: notificationCommands };

function usage(): string {
  const lines = Object.values(groups).flatMap((commands) => Object.values(commands).map((c) => `  npm run admin -- ${c.usage} [--json]`));
  return ['Usage:', ...lines,
    'Works on the store of the npm start serving DATA_DIR (.data), else a temporary DynamoDB Local over it;',
    'with TABLE_NAME set, on that table with the AWS SDK\'s settings. It says which on stderr.'].join('\n');
}

const wantsHelp = (argv: string[]) => argv.some((arg) => arg === '--help' || arg === '-h') || argv[0] === 'help';

/** Which store the command works on, on stderr, so its output stays what --json promises. */
async function openStore(): Promise<{ apiAddress?: string; close(): Promise<void> } | undefined> {
  const table = process.env.TABLE_NAME;
  if (!table) return openLocalStore((line) => console.error(line));
  const region = process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'your profile\'s';
  console.error(`admin: table ${table} (TABLE_NAME), region ${region}, endpoint ${process.env.AWS_ENDPOINT_URL_DYNAMODB ?? 'DynamoDB\'s own'}`);
  return undefined;
}

async function main(argv: string[]): Promise<number> {
  const [group, action, ...rest] = argv;
  // Own entries only: `token constructor` is an unknown command, not Object's constructor.
  const command = group && action && Object.hasOwn(groups, group) && Object.hasOwn(groups[group]!, action) ? groups[group]![action] : undefined;
  if (wantsHelp(argv)) {
    console.log(command ? `Usage: npm run admin -- ${command.usage} [--json]` : usage());
    return 0;
  }
  if (!command) {
    console.error(usage());
    return 2;
  }
  let args;
  try {
    args = parseCommandArgs(command, rest);
  } catch (error) {
    console.error(`${(error as Error).message}\nUsage: npm run admin -- ${command.usage} [--json]`);
    return 2;
  }
  let store;
  try {
    store = await openStore();
  } catch (error) {
    if (!(error instanceof LocalStoreRefused)) throw error;
    console.error(`admin: ${error.message}`);
    return 1;
  }
  try {
    const { json, text } = await command.run(args, { apiAddress: store?.apiAddress });
    console.log(args.values.json ? JSON.stringify(json) : text.join('\n'));
    return 0;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (args.values.json) console.log(JSON.stringify({ error: error.message }));
    console.error(`${error.message}\nUsage: npm run admin -- ${command.usage} [--json]`);
    return 2;
  } finally {
    await store?.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
