import { API_BASE_PATH } from '#shared/config';
import {
  createNotificationSecret,
  DEFAULT_GRACE_HOURS,
  findNotificationSecrets,
  rotateNotificationSecret,
  type NotificationSecrets,
  type SecretRefusal,
} from '#shared/store/notification-secrets';
import { requiredOption, UsageError, type Command, type CommandArgs, type StoreInUse } from './command';

/** The triggers to tick: `run:created` registers a run; the others register it too if it was missed. */
export const RUN_TRIGGERS = [
  'run:created',
  'run:planning',
  'run:needs_attention',
  'run:applying',
  'run:completed',
  'run:errored',
];

const OPTIONS = { org: { type: 'string' }, url: { type: 'string' } } as const;

const NEEDS_URL = "--url is required with TABLE_NAME: the stage's TfeAddress output";
const hasUrl = (values: CommandArgs['values']) => typeof values.url === 'string' && values.url !== '';

/** Every notifications command: --org, and --url for a deployed table. */
function checkOrgAndUrl({ values }: CommandArgs, { deployed }: { deployed: boolean }): void {
  requiredOption(values, 'org');
  if (deployed && !hasUrl(values)) throw new UsageError(NEEDS_URL);
}

function gracePeriod(values: CommandArgs['values']): number {
  const grace = values['grace-hours'] ?? String(DEFAULT_GRACE_HOURS);
  if (typeof grace !== 'string' || !/^\d+$/.test(grace) || Number(grace) > 720) {
    throw new UsageError(`--grace-hours must be a whole number from 0 to 720 (not ${String(grace)})`);
  }
  return Number(grace);
}

/** The API's address: --url (a deployed stage's TfeAddress output), else the local stack's. */
function apiAddress(values: CommandArgs['values'], store: StoreInUse): string {
  if (hasUrl(values)) return (values.url as string).replace(/\/+$/, '');
  if (store.apiAddress === undefined) throw new UsageError(NEEDS_URL);
  return store.apiAddress;
}

/** What to enter in HCP Terraform (workspace or project Settings → Notifications → Create a notification). */
function settings(organization: string, address: string, secrets: NotificationSecrets) {
  return {
    organization,
    destinationType: 'Webhook (API: destination-type "generic")',
    url: `${address}${API_BASE_PATH}/run-notifications/${encodeURIComponent(organization)}`,
    triggers: RUN_TRIGGERS,
    createdAt: secrets.current.createdAt,
    ...(secrets.previous ? { previousSecretValidUntil: secrets.previous.validUntil } : {}),
  };
}

function settingsLines(s: ReturnType<typeof settings>, secret?: string): string[] {
  return [
    `In HCP Terraform or Terraform Enterprise, for each workspace (or project) of ${s.organization}:`,
    'Settings → Notifications → Create a notification:',
    `  Destination:  ${s.destinationType}`,
    `  Webhook URL:  ${s.url}`,
    secret ? `  Token:        ${secret}` : '  Token:        (shown once by create/rotate; never again)',
    `  Triggers:     Only certain events → ${s.triggers.join(', ')} (or All events)`,
    `Secret created ${s.createdAt}${s.previousSecretValidUntil && Date.parse(s.previousSecretValidUntil) > Date.now() ? `; the previous one is accepted until ${s.previousSecretValidUntil}` : ''}.`,
  ];
}

const REFUSALS: Record<SecretRefusal, (organization: string) => string> = {
  exists: (organization) => `organization ${organization} already has a notification secret; rotate it instead`,
  none: (organization) => `organization ${organization} has no notification secret; create one first`,
  changed: (organization) => `the secret of ${organization} changed while rotating; run rotate again`,
};

/** The secrets written, or the refusal as one line for the operator. */
function written(organization: string, outcome: NotificationSecrets | SecretRefusal): NotificationSecrets {
  if (typeof outcome === 'string') throw new UsageError(REFUSALS[outcome](organization));
  return outcome;
}

/** What create and rotate print: the settings with the new token, shown this once, and what to do with it. */
function withNewToken(organization: string, address: string, secrets: NotificationSecrets, advice: string) {
  const s = settings(organization, address, secrets);
  return { json: { ...s, token: secrets.current.secret }, text: [...settingsLines(s, secrets.current.secret), advice] };
}

export const notificationCommands: Record<string, Command> = {
  create: {
    usage: 'notifications create --org ORG [--url ADDRESS]',
    options: OPTIONS,
    check: checkOrgAndUrl,
    async run({ values }, store) {
      const organization = requiredOption(values, 'org');
      const address = apiAddress(values, store);
      const secrets = written(organization, await createNotificationSecret(organization));
      return withNewToken(organization, address, secrets, 'The token is shown once: enter it now.');
    },
  },
  rotate: {
    usage: `notifications rotate --org ORG [--url ADDRESS] [--grace-hours N (default ${DEFAULT_GRACE_HOURS}; 0 for a leaked secret)]`,
    options: { ...OPTIONS, 'grace-hours': { type: 'string' } },
    check(args, where) {
      checkOrgAndUrl(args, where);
      gracePeriod(args.values);
    },
    async run({ values }, store) {
      const organization = requiredOption(values, 'org');
      const address = apiAddress(values, store);
      const grace = gracePeriod(values);
      const secrets = written(organization, await rotateNotificationSecret(organization, grace));
      return withNewToken(
        organization,
        address,
        secrets,
        grace === 0
          ? 'The token is shown once, and the old one is refused from now on: put this one in every notification configuration.'
          : 'The token is shown once: replace the old one in every notification configuration before the grace period ends.',
      );
    },
  },
  show: {
    usage: 'notifications show --org ORG [--url ADDRESS]',
    options: OPTIONS,
    check: checkOrgAndUrl,
    async run({ values }, store) {
      const organization = requiredOption(values, 'org');
      const address = apiAddress(values, store);
      const secrets = await findNotificationSecrets(organization);
      if (!secrets) throw new UsageError(REFUSALS.none(organization));
      const s = settings(organization, address, secrets);
      return { json: s, text: settingsLines(s) };
    },
  },
};
