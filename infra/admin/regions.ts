import { controlRegion, ControlRefused, type ControlAnswer } from '../local/control';
import { localSettings } from '../local/settings';
import { runningStack } from '../local/stack-record';
import { UsageError, type Command, type CommandArgs } from './command';

/**
 * `region fail|recover|list`: a local Region of a multi-Region `npm start` (REGIONS) taken down and
 * brought back, through the control endpoint that npm start names in its record in DATA_DIR
 * (infra/local/control.ts). Local only: a deployed Region is failed with the game day's experiment.
 */
function controlUrl(): string {
  const { dataDir } = localSettings();
  const stack = runningStack(dataDir);
  if (!stack)
    throw new ControlRefused(
      `no npm start serves ${dataDir}: start one with REGIONS=us-east-1,us-east-2 npm start (and the same DATA_DIR)`,
    );
  if (!stack.controlUrl)
    throw new ControlRefused(
      `the npm start serving ${dataDir} (pid ${stack.pid}) runs one Region: restart it with REGIONS=us-east-1,us-east-2 to fail and recover Regions`,
    );
  return stack.controlUrl;
}

const lines = (answer: ControlAnswer) => [
  ...answer.regions.map(
    (r) => `  ${r.name} ${r.url}/api/v2 ${r.down ? 'DOWN' : 'up'}, health check ${r.healthy ? 'healthy' : 'unhealthy'}`,
  ),
  `Front ${answer.front.url}/api/v2 routes to ${answer.front.routesTo}; a failed Region is left within ${answer.front.detectionMs / 1000} s`,
];

const regionAction = (action: 'fail' | 'recover'): Command => ({
  usage: `region ${action} REGION`,
  positionals: 1,
  usesStore: false,
  check({ positionals }) {
    if (!positionals[0]) throw new UsageError('REGION is required, e.g. us-east-1');
  },
  async run({ positionals }: CommandArgs) {
    const region = positionals[0]!;
    let answer: ControlAnswer;
    try {
      answer = await controlRegion(controlUrl(), action, region);
    } catch (error) {
      if (error instanceof ControlRefused) throw new UsageError(error.message);
      throw error;
    }
    const what =
      answer.result === 'unchanged'
        ? `${region} was already ${action === 'fail' ? 'down' : 'up'}.`
        : action === 'fail'
          ? `${region} is down: its address refuses connections, its open ones were cut and its Lambda instances killed.`
          : `${region} is back on its address; the front sends it requests again once its health check passes.`;
    return { json: answer, text: [what, ...lines(answer)] };
  },
});

export const regionCommands: Record<string, Command> = {
  fail: regionAction('fail'),
  recover: regionAction('recover'),
  list: {
    usage: 'region list',
    usesStore: false,
    async run() {
      let answer: ControlAnswer;
      try {
        answer = await controlRegion(controlUrl(), 'status');
      } catch (error) {
        if (error instanceof ControlRefused) throw new UsageError(error.message);
        throw error;
      }
      return { json: answer, text: ['Regions:', ...lines(answer)] };
    },
  },
};
