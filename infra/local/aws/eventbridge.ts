import { randomUUID } from 'node:crypto';
import type { Stack } from './cloudformation';
import { LOCAL_ACCOUNT, LOCAL_REGION } from './cloudformation';
import type { InvocationResult } from './lambda';

/**
 * The local stand-in for EventBridge's scheduled rules: each `rate(…)` rule invokes its Lambda
 * targets through the local Lambda (lambda.ts), as any other invocation, and a failed one is
 * retried as Lambda retries an asynchronous invocation. What it plays, and what stops the start:
 * docs/design.md, "What the local stack emulates".
 */
export interface ScheduledTarget {
  /** The target's Id in the rule. */
  id: string;
  /** What the local Lambda invokes: `NAME` or `NAME:QUALIFIER`. */
  function: string;
  /** The event, when the target gives a constant Input; else EventBridge's Scheduled Event. */
  input?: unknown;
  /** Lambda's MaximumRetryAttempts for this function's asynchronous invocations. */
  maximumRetryAttempts: number;
}

export interface ScheduledRule {
  logicalId: string;
  arn: string;
  expression: string;
  /** The rule's period, ms. */
  periodMs: number;
  enabled: boolean;
  targets: ScheduledTarget[];
}

/** One invocation of a target by its rule (a retry is one too, with its attempt number). */
export interface ScheduledRun {
  rule: string;
  expression: string;
  function: string;
  /** 1 for the scheduled invocation, 2 and 3 for Lambda's retries of a failed one. */
  attempt: number;
  ok: boolean;
  error?: { errorType: string; errorMessage: string };
  /** What the function returned. */
  result?: unknown;
  ms: number;
}

export interface ScheduleOptions {
  /** Runs each enabled rule this often instead of its rate, ms (tests, `LOCAL_SCHEDULE_SECONDS`). */
  everyMs?: number;
  /** Each run once it ended. */
  onRun?(run: ScheduledRun): void;
}

type Invoke = (target: string, event: unknown) => Promise<InvocationResult>;

const RULE_PROPERTIES = new Set(['ScheduleExpression', 'State', 'Targets', 'Description', 'Name']);
/** RetryPolicy and DeadLetterConfig concern a failure to deliver to Lambda, which locally always takes the event. */
const TARGET_PROPERTIES = new Set(['Arn', 'Id', 'Input', 'RetryPolicy', 'DeadLetterConfig']);
const INVOKE_CONFIG_PROPERTIES = new Set([
  'FunctionName',
  'Qualifier',
  'MaximumRetryAttempts',
  'MaximumEventAgeInSeconds',
]);
const UNIT_MS: Record<string, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };
/** Lambda: "waits one minute before the first retry, and two minutes before the second" (asynchronous invocation). */
const RETRY_DELAYS_MS = [60_000, 120_000];
/** Lambda's default MaximumRetryAttempts for asynchronous invocations. */
const DEFAULT_RETRY_ATTEMPTS = 2;

/**
 * The scheduled rules of a template, read and checked (a refusal throws one line naming the rule).
 * `hasFunction` says whether the local Lambda resolves a target (a function, version or alias).
 */
export function scheduledRules(stack: Stack, hasFunction: (target: string) => boolean): ScheduledRule[] {
  const permissions = stack.resourcesOf('AWS::Lambda::Permission').map(([, p]) => p.Properties ?? {});
  const retryAttempts = invokeConfigs(stack);
  return stack.resourcesOf('AWS::Events::Rule').map(([logicalId, resource]) => {
    const p = resource.Properties ?? {};
    const refuse = (what: string): never => {
      throw new Error(`EventBridge rule ${logicalId}: ${what}`);
    };
    if (p.EventPattern !== undefined) refuse('event patterns are not emulated by the local stack, only schedules');
    const unknown = Object.keys(p).filter((key) => !RULE_PROPERTIES.has(key));
    if (unknown.length > 0) refuse(`${unknown.join(', ')} not emulated by the local stack`);
    const state = p.State === undefined ? 'ENABLED' : stack.string(p.State);
    if (state !== 'ENABLED' && state !== 'DISABLED') refuse(`State ${state} is not emulated by the local stack`);
    const expression = stack.string(p.ScheduleExpression);
    const periodMs = ratePeriodMs(expression, refuse);
    const arn = stack.getAtt(logicalId, 'Arn');
    const targets = ((p.Targets ?? []) as Array<Record<string, unknown>>).map((target): ScheduledTarget => {
      const id = stack.string(target.Id);
      const unknownTarget = Object.keys(target).filter((key) => !TARGET_PROPERTIES.has(key));
      if (unknownTarget.length > 0) refuse(`target ${id}: ${unknownTarget.join(', ')} not emulated by the local stack`);
      const fn = functionTarget(stack.string(target.Arn));
      if (!fn || !hasFunction(fn))
        refuse(`target ${id} is not a Lambda function of this template (${stack.string(target.Arn)})`);
      if (!permissions.some((permission) => allowsEventBridge(stack, permission, fn!, arn))) {
        refuse(
          `target ${id}: no AWS::Lambda::Permission lets events.amazonaws.com invoke ${fn} for this rule, so EventBridge could not`,
        );
      }
      return {
        id,
        function: fn!,
        ...(target.Input === undefined ? {} : { input: JSON.parse(stack.string(target.Input)) as unknown }),
        maximumRetryAttempts: retryAttempts.get(qualified(fn!)) ?? DEFAULT_RETRY_ATTEMPTS,
      };
    });
    return { logicalId, arn, expression, periodMs, enabled: state === 'ENABLED', targets };
  });
}

/**
 * `rate(N unit)` in ms. EventBridge's rules: N a positive whole number, the unit singular for 1
 * and plural otherwise ("rate(1 minute)", "rate(5 minutes)").
 */
function ratePeriodMs(expression: string, refuse: (what: string) => never): number {
  if (expression.startsWith('cron('))
    refuse(`${expression}: cron schedules are not emulated by the local stack, only rate(…)`);
  const match = /^rate\((\d+) (minute|hour|day)(s?)\)$/.exec(expression);
  if (!match) return refuse(`${expression} is not a schedule expression EventBridge accepts`);
  const count = Number(match[1]);
  if (count < 1 || (count === 1) !== (match[3] === ''))
    refuse(`${expression}: EventBridge wants a positive number, with a singular unit for 1 and a plural one otherwise`);
  return count * UNIT_MS[match[2]!]!;
}

/** `arn:aws:lambda:…:function:NAME[:QUALIFIER]` → `NAME[:QUALIFIER]`; undefined for any other target. */
function functionTarget(arn: string): string | undefined {
  const match = /^arn:[^:]+:lambda:[^:]*:[^:]*:function:([^:]+)(?::([^:]+))?$/.exec(arn);
  return match ? (match[2] ? `${match[1]}:${match[2]}` : match[1]) : undefined;
}

/** `NAME` and `NAME:$LATEST` are one function version: the unqualified one. */
const qualified = (target: string) => (target.includes(':') ? target : `${target}:$LATEST`);

/** The permission EventBridge needs: lambda:InvokeFunction for events.amazonaws.com on exactly this function (and qualifier), from this rule. */
function allowsEventBridge(
  stack: Stack,
  permission: Record<string, unknown>,
  target: string,
  ruleArn: string,
): boolean {
  if (stack.string(permission.Principal) !== 'events.amazonaws.com') return false;
  if (!['lambda:InvokeFunction', 'lambda:*'].includes(stack.string(permission.Action))) return false;
  const name = stack.string(permission.FunctionName);
  const fn = name.startsWith('arn:') ? functionTarget(name) : name;
  if (!fn || qualified(fn) !== qualified(target)) return false;
  return permission.SourceArn === undefined || stack.string(permission.SourceArn) === ruleArn;
}

/** MaximumRetryAttempts of each function version's asynchronous invocations (`NAME:QUALIFIER`). */
function invokeConfigs(stack: Stack): Map<string, number> {
  const configs = new Map<string, number>();
  for (const [logicalId, resource] of stack.resourcesOf('AWS::Lambda::EventInvokeConfig')) {
    const p = resource.Properties ?? {};
    const unknown = Object.keys(p).filter((key) => !INVOKE_CONFIG_PROPERTIES.has(key));
    if (unknown.length > 0)
      throw new Error(`Lambda EventInvokeConfig ${logicalId}: ${unknown.join(', ')} not emulated by the local stack`);
    const name = stack.string(p.FunctionName);
    const fn = name.startsWith('arn:') ? functionTarget(name) : name;
    const attempts =
      p.MaximumRetryAttempts === undefined ? DEFAULT_RETRY_ATTEMPTS : Number(stack.resolve(p.MaximumRetryAttempts));
    if (!Number.isInteger(attempts) || attempts < 0 || attempts > 2)
      throw new Error(
        `Lambda EventInvokeConfig ${logicalId}: MaximumRetryAttempts ${attempts} is refused by Lambda (0 to 2)`,
      );
    configs.set(`${fn}:${stack.string(p.Qualifier)}`, attempts);
  }
  return configs;
}

/** EventBridge's event for a scheduled rule (EventBridge: "Scheduled events"). */
export function scheduledEvent(ruleArn: string, at = new Date()): Record<string, unknown> {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: LOCAL_ACCOUNT,
    time: at.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: LOCAL_REGION,
    resources: [ruleArn],
    detail: {},
  };
}

/** The enabled rules, each on its timer, until close(). */
export class LocalSchedules {
  readonly rules: ScheduledRule[];
  /** Every run so far (newest last). */
  readonly runs: ScheduledRun[] = [];
  private readonly invoke: Invoke;
  private readonly options: ScheduleOptions;
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(rules: ScheduledRule[], invoke: Invoke, options: ScheduleOptions = {}) {
    this.rules = rules;
    this.invoke = invoke;
    this.options = options;
    for (const rule of rules.filter((r) => r.enabled)) {
      const every = options.everyMs ?? rule.periodMs;
      const timer = setInterval(() => {
        void this.fire(rule);
      }, every);
      timer.unref(); // a stack left open by mistake never holds its process up for this
      this.timers.add(timer);
    }
  }

  /** Invokes every target of `rule` now, as its schedule does; resolves with the scheduled runs (not their retries). */
  async fire(rule: ScheduledRule): Promise<ScheduledRun[]> {
    const event = scheduledEvent(rule.arn);
    return Promise.all(rule.targets.map((target) => this.run(rule, target, target.input ?? event, 1)));
  }

  /** Stops the timers and the retries to come; a run in flight ends with the Lambda instances. */
  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private async run(
    rule: ScheduledRule,
    target: ScheduledTarget,
    event: unknown,
    attempt: number,
  ): Promise<ScheduledRun> {
    const started = performance.now();
    let outcome: InvocationResult;
    try {
      outcome = await this.invoke(target.function, event);
    } catch (error) {
      outcome = {
        ok: false,
        error: { errorType: 'Local.InvokeError', errorMessage: (error as Error).message },
        coldStart: false,
        instanceId: '',
      };
    }
    const run: ScheduledRun = {
      rule: rule.logicalId,
      expression: rule.expression,
      function: target.function,
      attempt,
      ok: outcome.ok,
      ...(outcome.ok ? { result: outcome.result } : { error: outcome.error! }),
      ms: performance.now() - started,
    };
    if (this.closed) return run; // stopped meanwhile: its instance was stopped with the stack
    this.runs.push(run);
    if (this.runs.length > 1_000) this.runs.splice(0, 500);
    this.options.onRun?.(run);
    // A throttled invocation (rejected) is kept and retried by Lambda too; both count as a failure here.
    if (!outcome.ok && attempt <= target.maximumRetryAttempts) {
      const timer = setTimeout(
        () => {
          this.timers.delete(timer);
          void this.run(rule, target, event, attempt + 1);
        },
        RETRY_DELAYS_MS[attempt - 1]!,
      );
      timer.unref();
      this.timers.add(timer);
    }
    return run;
  }
}
