import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertEmulated, Stack } from '#infra/local/aws/cloudformation';
import { LocalSchedules, scheduledRules, type ScheduledRule } from '#infra/local/aws/eventbridge';
import type { InvocationResult } from '#infra/local/aws/lambda';

/**
 * The local EventBridge (infra/local/aws/eventbridge.ts): which scheduled rules of a template it plays,
 * what it refuses, and how it invokes (the schedule, the event, Lambda's retries of a failed
 * asynchronous invocation). The sweeper's rule, run end to end, is test/e2e/sweeper.e2e.test.ts's.
 */
const fnArn = { 'Fn::GetAtt': ['Fn', 'Arn'] };
const base = () =>
  ({
    Fn: { Type: 'AWS::Lambda::Function', Properties: {} },
    Rule: {
      Type: 'AWS::Events::Rule',
      Properties: { ScheduleExpression: 'rate(5 minutes)', State: 'ENABLED', Targets: [{ Arn: fnArn, Id: 'Target0' }] },
    },
    Permission: {
      Type: 'AWS::Lambda::Permission',
      Properties: {
        Action: 'lambda:InvokeFunction',
        FunctionName: fnArn,
        Principal: 'events.amazonaws.com',
        SourceArn: { 'Fn::GetAtt': ['Rule', 'Arn'] },
      },
    },
  }) as Record<string, { Type: string; Properties: any }>;

function stackOf(resources: Record<string, unknown>): Stack {
  const directory = mkdtempSync(join(tmpdir(), 'eventbridge-'));
  writeFileSync(join(directory, 'fixture.template.json'), JSON.stringify({ Resources: resources }));
  return new Stack(directory, 'fixture');
}
const rulesOf = (resources: Record<string, unknown>) =>
  scheduledRules(stackOf(resources), (target) => target.split(':')[0] === 'Fn');

describe('the scheduled rules of a template', () => {
  it('are played: rate, ARN, its function target, Lambda’s retries (2 unless the function’s EventInvokeConfig says)', () => {
    const stack = stackOf(base());
    expect(() => assertEmulated(stack)).not.toThrow();
    expect(scheduledRules(stack, () => true)).toEqual([
      {
        logicalId: 'Rule',
        arn: 'arn:aws:events:us-east-1:000000000000:rule/Rule',
        expression: 'rate(5 minutes)',
        periodMs: 300_000,
        enabled: true,
        targets: [{ id: 'Target0', function: 'Fn', maximumRetryAttempts: 2 }],
      },
    ]);
    const configured = {
      ...base(),
      Config: {
        Type: 'AWS::Lambda::EventInvokeConfig',
        Properties: { FunctionName: { Ref: 'Fn' }, Qualifier: '$LATEST', MaximumRetryAttempts: 0 },
      },
    };
    expect(() => assertEmulated(stackOf(configured))).not.toThrow();
    expect(rulesOf(configured)[0]!.targets[0]!.maximumRetryAttempts).toBe(0);
  });

  it.each([
    ['rate(1 minute)', 60_000],
    ['rate(2 hours)', 7_200_000],
    ['rate(1 day)', 86_400_000],
  ])('reads %s', (expression, periodMs) => {
    const resources = base();
    resources.Rule!.Properties.ScheduleExpression = expression;
    expect(rulesOf(resources)[0]!.periodMs).toBe(periodMs);
  });

  it('keeps a disabled rule off its timer, and gives a target’s constant Input as the event', () => {
    const resources = base();
    resources.Rule!.Properties.State = 'DISABLED';
    resources.Rule!.Properties.Targets[0].Input = '{"sweep":"now"}';
    expect(rulesOf(resources)[0]).toMatchObject({ enabled: false, targets: [{ input: { sweep: 'now' } }] });
  });

  const refusals: Array<[string, (r: ReturnType<typeof base>) => void, string]> = [
    [
      'a cron schedule',
      (r) => {
        r.Rule!.Properties.ScheduleExpression = 'cron(0 12 * * ? *)';
      },
      'EventBridge rule Rule: cron(0 12 * * ? *): cron schedules are not emulated by the local stack, only rate(…)',
    ],
    [
      'an event pattern',
      (r) => {
        r.Rule!.Properties.EventPattern = { source: ['aws.ec2'] };
      },
      'EventBridge rule Rule: event patterns are not emulated by the local stack, only schedules',
    ],
    [
      'a plural unit for 1',
      (r) => {
        r.Rule!.Properties.ScheduleExpression = 'rate(1 minutes)';
      },
      'EventBridge rule Rule: rate(1 minutes): EventBridge wants a positive number, with a singular unit for 1 and a plural one otherwise',
    ],
    [
      'a rate of 0',
      (r) => {
        r.Rule!.Properties.ScheduleExpression = 'rate(0 minutes)';
      },
      'EventBridge rule Rule: rate(0 minutes): EventBridge wants',
    ],
    [
      'no expression EventBridge knows',
      (r) => {
        r.Rule!.Properties.ScheduleExpression = 'every 5 minutes';
      },
      'EventBridge rule Rule: every 5 minutes is not a schedule expression EventBridge accepts',
    ],
    [
      'a target that is no function of the template',
      (r) => {
        r.Rule!.Properties.Targets[0].Arn = 'arn:aws:sqs:us-east-1:000000000000:queue';
      },
      'EventBridge rule Rule: target Target0 is not a Lambda function of this template (arn:aws:sqs:us-east-1:000000000000:queue)',
    ],
    [
      'an input transformer',
      (r) => {
        r.Rule!.Properties.Targets[0].InputTransformer = { InputTemplate: '{}' };
      },
      'EventBridge rule Rule: target Target0: InputTransformer not emulated by the local stack',
    ],
    [
      'no permission for EventBridge',
      (r) => {
        delete r.Permission;
      },
      'EventBridge rule Rule: target Target0: no AWS::Lambda::Permission lets events.amazonaws.com invoke Fn for this rule, so EventBridge could not',
    ],
    [
      'a permission for another rule',
      (r) => {
        r.Permission!.Properties.SourceArn = 'arn:aws:events:us-east-1:000000000000:rule/Other';
      },
      'no AWS::Lambda::Permission lets events.amazonaws.com invoke Fn',
    ],
    [
      'a permission for API Gateway only',
      (r) => {
        r.Permission!.Properties.Principal = 'apigateway.amazonaws.com';
      },
      'no AWS::Lambda::Permission lets events.amazonaws.com invoke Fn',
    ],
    [
      'a state it does not play',
      (r) => {
        r.Rule!.Properties.State = 'ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS';
      },
      'EventBridge rule Rule: State ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS is not emulated by the local stack',
    ],
    [
      'asynchronous invocation destinations',
      (r) => {
        (r as any).Config = {
          Type: 'AWS::Lambda::EventInvokeConfig',
          Properties: { FunctionName: { Ref: 'Fn' }, Qualifier: '$LATEST', DestinationConfig: {} },
        };
      },
      'Lambda EventInvokeConfig Config: DestinationConfig not emulated by the local stack',
    ],
    [
      'more retries than Lambda allows',
      (r) => {
        (r as any).Config = {
          Type: 'AWS::Lambda::EventInvokeConfig',
          Properties: { FunctionName: { Ref: 'Fn' }, Qualifier: '$LATEST', MaximumRetryAttempts: 3 },
        };
      },
      'Lambda EventInvokeConfig Config: MaximumRetryAttempts 3 is refused by Lambda (0 to 2)',
    ],
  ];
  it.each(refusals)('refuses %s in one line', (_, change, message) => {
    const resources = base();
    change(resources);
    expect(() => rulesOf(resources)).toThrow(message);
  });
});

describe('a rule on its timer', () => {
  const rule = (maximumRetryAttempts: number, enabled = true): ScheduledRule => ({
    logicalId: 'Rule',
    arn: 'arn:aws:events:us-east-1:000000000000:rule/Rule',
    expression: 'rate(5 minutes)',
    periodMs: 300_000,
    enabled,
    targets: [{ id: 'Target0', function: 'Fn', maximumRetryAttempts }],
  });
  const ok: InvocationResult = { ok: true, result: { swept: 1 }, coldStart: false, instanceId: 'i' };
  const failed: InvocationResult = {
    ok: false,
    error: { errorType: 'Error', errorMessage: 'boom' },
    coldStart: false,
    instanceId: 'i',
  };
  let schedules: LocalSchedules | undefined;
  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['performance'] });
  });
  afterEach(() => {
    schedules?.close();
    jest.useRealTimers();
  });

  it('invokes its function once a period, from one period after the start, with EventBridge’s Scheduled Event', async () => {
    const events: unknown[] = [];
    schedules = new LocalSchedules([rule(0)], async (target, event) => {
      events.push({ target, event });
      return ok;
    });
    await jest.advanceTimersByTimeAsync(299_999);
    expect(events).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(events).toEqual([
      {
        target: 'Fn',
        event: {
          version: '0',
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          'detail-type': 'Scheduled Event',
          source: 'aws.events',
          account: '000000000000',
          time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
          region: 'us-east-1',
          resources: ['arn:aws:events:us-east-1:000000000000:rule/Rule'],
          detail: {},
        },
      },
    ]);
    await jest.advanceTimersByTimeAsync(600_000);
    expect(events).toHaveLength(3);
    expect(schedules.runs.map((r) => ({ ok: r.ok, attempt: r.attempt, result: r.result }))).toEqual(
      Array(3).fill({ ok: true, attempt: 1, result: { swept: 1 } }),
    );
  });

  it('runs sooner when asked (everyMs), and never once closed', async () => {
    let calls = 0;
    schedules = new LocalSchedules(
      [rule(0)],
      async () => {
        calls += 1;
        return ok;
      },
      { everyMs: 1_000 },
    );
    await jest.advanceTimersByTimeAsync(3_000);
    expect(calls).toBe(3);
    schedules.close();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(calls).toBe(3);
  });

  it('leaves a disabled rule alone', async () => {
    let calls = 0;
    schedules = new LocalSchedules(
      [rule(0, false)],
      async () => {
        calls += 1;
        return ok;
      },
      { everyMs: 1_000 },
    );
    await jest.advanceTimersByTimeAsync(5_000);
    expect(calls).toBe(0);
  });

  it('tries a failed invocation again as Lambda does, 1 then 2 minutes later, up to MaximumRetryAttempts', async () => {
    const at: number[] = [];
    const started = Date.now();
    schedules = new LocalSchedules(
      [rule(2)],
      async () => {
        at.push(Date.now() - started);
        return failed;
      },
      { everyMs: 3_600_000 },
    );
    await jest.advanceTimersByTimeAsync(3_600_000 + 200_000);
    expect(at).toEqual([3_600_000, 3_660_000, 3_780_000]);
    expect(schedules.runs.map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(schedules.runs[0]).toMatchObject({ ok: false, error: { errorType: 'Error', errorMessage: 'boom' } });
  });

  it('does not try again a function whose MaximumRetryAttempts is 0 (the sweeper: its next run is the retry)', async () => {
    let calls = 0;
    schedules = new LocalSchedules(
      [rule(0)],
      async () => {
        calls += 1;
        return failed;
      },
      { everyMs: 3_600_000 },
    );
    await jest.advanceTimersByTimeAsync(3_600_000 + 200_000);
    expect(calls).toBe(1);
  });

  it('fires now on demand, and reports each run', async () => {
    const reported: unknown[] = [];
    schedules = new LocalSchedules([rule(0)], async () => ok, { onRun: (run) => reported.push(run.function) });
    const [run] = await schedules.fire(schedules.rules[0]!);
    expect(run).toMatchObject({ rule: 'Rule', expression: 'rate(5 minutes)', function: 'Fn', attempt: 1, ok: true });
    expect(reported).toEqual(['Fn']);
  });
});
