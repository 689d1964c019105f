import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Template } from 'aws-cdk-lib/assertions';
import { deployedMethods, resourcesOf, templateOf } from './templates';
import { expectWith } from '../support/expect-with';

/**
 * The documentation cannot say one thing while the template does another: every status, header,
 * limit and alarm threshold the API reference and the runbooks state is read out of their text and
 * compared with what `cdk synth` makes. Change either, and this fails until the other follows.
 */
let template: Template;
beforeAll(async () => {
  template = await templateOf();
}, 120_000);

const ROOT = join(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** The pages whose statements about what clients see are checked. */
const PAGES = ['README.md', 'docs/api.md', 'docs/deploying.md', 'docs/operating.md', 'docs/runbooks.md'];

/** Text outside fenced code blocks. */
const prose = (text: string) => text.replace(/^\s*```[\s\S]*?^\s*```\s*$/gm, '');

/** The body of a section: from its heading to the next heading of the same or a higher level. */
function section(file: string, heading: string): string {
  const lines = read(file).split('\n');
  const start = lines.findIndex((line) => /^#+ /.test(line) && line.replace(/^#+ /, '').trim() === heading);
  if (start < 0) throw new Error(`${file} has no heading "${heading}"`);
  const level = /^#+/.exec(lines[start]!)![0].length;
  const end = lines.findIndex(
    (line, index) => index > start && /^#+ /.test(line) && /^#+/.exec(line)![0].length <= level,
  );
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** Paragraphs and list items, each on one line. */
const blocks = (text: string): string[] =>
  prose(text)
    .split(/\n\s*\n|\n(?=\s*- )/)
    .map((block) => block.replace(/\s*\n\s*/g, ' ').trim())
    .filter((block) => block !== '');

/** Sentences and `;`-separated clauses of a block. */
const clauses = (block: string): string[] =>
  block.split(/(?<=[.;])\s+(?=[^a-z])|;\s+/).filter((clause) => clause.trim() !== '');

/** `Name: value` headers written in code spans. */
const headersIn = (text: string): Record<string, string> =>
  Object.fromEntries([...text.matchAll(/`([A-Za-z][\w-]*): ([^`]+)`/g)].map((m) => [m[1]!, m[2]!]));
/** 4xx and 5xx statuses written as numbers. */
const statusesIn = (text: string): number[] =>
  [
    ...text.matchAll(
      /(?<![\d.,/-])\b([45]\d\d)\b(?![\d,.]\d|%| ?(?:ms|req|KB|MB|GB|requests|a second|per|creates|comments|writes))/g,
    ),
  ].map((m) => Number(m[1]));

interface Answer {
  status: number | undefined;
  headers: Record<string, string>;
  title?: string;
}

/** The template's gateway responses by type: status, static headers, the JSON:API title of the body. */
function gatewayResponses(): Map<string, Answer> {
  return new Map(
    Object.values(resourcesOf(template, 'AWS::ApiGateway::GatewayResponse')).map(({ Properties: p }) => {
      const headers = Object.fromEntries(
        Object.entries<string>(p.ResponseParameters ?? {})
          .filter(([, value]) => value.startsWith("'"))
          .map(([name, value]) => [name.replace('gatewayresponse.header.', ''), value.slice(1, -1)]),
      );
      const body = Object.values<string>(p.ResponseTemplates ?? {})[0];
      const title = body ? JSON.parse(body).errors?.[0]?.title : undefined;
      return [
        p.ResponseType as string,
        { status: p.StatusCode === undefined ? undefined : Number(p.StatusCode), headers, title },
      ];
    }),
  );
}

/** The web ACL's rules by name, with what a block answers (a rule without a custom response: WAF_FILTERED). */
function wafRules(): Map<string, { rule: any; answer: Answer }> {
  const [acl] = Object.values(resourcesOf(template, 'AWS::WAFv2::WebACL'));
  const bodies = acl!.Properties.CustomResponseBodies ?? {};
  const filtered = gatewayResponses().get('WAF_FILTERED')!;
  return new Map(
    acl!.Properties.Rules.map((rule: any) => {
      const custom = rule.Action?.Block?.CustomResponse;
      const answer: Answer = custom
        ? {
            status: custom.ResponseCode,
            headers: Object.fromEntries((custom.ResponseHeaders ?? []).map((h: any) => [h.Name, h.Value])),
            title: JSON.parse(bodies[custom.CustomResponseBodyKey].Content).errors[0].title,
          }
        : filtered;
      return [rule.Name, { rule, answer }];
    }),
  );
}

/** The stage's method throttle (the `/*` `*` method setting). */
function methodThrottle(): { rate: number; burst: number } {
  const [stage] = Object.values(resourcesOf(template, 'AWS::ApiGateway::Stage'));
  const all = stage!.Properties.MethodSettings.find((s: any) => s.ResourcePath === '/*' && s.HttpMethod === '*');
  return { rate: all.ThrottlingRateLimit, burst: all.ThrottlingBurstLimit };
}

const number = (text: string) => Number(text.replace(/,/g, ''));

describe("the API reference's gateway responses are the template's", () => {
  const items = () =>
    blocks(section('docs/api.md', "API Gateway's own answers")).filter((block) => block.startsWith('- `'));

  it('lists every gateway response the template has, and no other', () => {
    const listed = items().flatMap((item) => [...item.split(':')[0]!.matchAll(/`([A-Z_0-9]+)`/g)].map((m) => m[1]!));
    expect([...listed].sort()).toEqual([...gatewayResponses().keys()].sort());
  });

  it('gives each the status, title and headers the template answers with', () => {
    const responses = gatewayResponses();
    for (const item of items()) {
      const types = [...item.split(':')[0]!.matchAll(/`([A-Z_0-9]+)`/g)].map((m) => m[1]!);
      const stated = /\*\*(.+?)\*\*/.exec(item)![1]!;
      for (const type of types) {
        const response = responses.get(type)!;
        if (stated === "the type's own") {
          expectWith(response.status, `${type}: "${stated}" means no status of its own`).toBeUndefined();
          continue;
        }
        expectWith(response.status, `${type}: ${item}`).toBe(statusesIn(stated)[0]);
        expectWith(response.title, `${type}: ${item}`).toBe(/`([a-z][a-z ]+)`/.exec(stated)![1]);
        expectWith(response.headers, `${type}: ${item}`).toEqual(expect.objectContaining(headersIn(stated)));
      }
    }
  });
});

describe("the API reference's limits are the template's", () => {
  const items = () => blocks(section('docs/api.md', 'Limits')).filter((block) => block.startsWith('- **'));
  const answerOf = (item: string, previous: Record<string, string>) => {
    const answer = /Answer: (.*)$/.exec(item)![1]!;
    return { status: statusesIn(answer)[0], headers: /the same headers/.test(answer) ? previous : headersIn(answer) };
  };

  it('names every rule of the web ACL and answers as each rule does', () => {
    const rules = wafRules();
    const named = new Set<string>();
    let previous: Record<string, string> = {};
    for (const item of items()) {
      const stated = answerOf(item, previous);
      previous = stated.headers;
      const label = /^- \*\*(.+?)\*\*/.exec(item)![1]!;
      const ruleNames = [...label.matchAll(/WAF `(\w+)`/g), ...item.matchAll(/`(AWSManagedRules\w+)`/g)].map(
        (m) => m[1]!,
      );
      if (/API Gateway/.test(label)) {
        const throttle = methodThrottle();
        const [, rate, burst] = /(\d[\d,]*) req\/s, burst (\d[\d,]*)/.exec(item)!;
        expectWith({ rate: number(rate!), burst: number(burst!) }, item).toEqual(throttle);
        const throttled = gatewayResponses().get('THROTTLED')!;
        expectWith(throttled.status, item).toBe(stated.status);
        expectWith(throttled.headers, item).toEqual(expect.objectContaining(stated.headers));
        continue;
      }
      expectWith(ruleNames.length, `names no WAF rule: ${item}`).toBeGreaterThan(0);
      for (const name of ruleNames) {
        named.add(name);
        const found = rules.get(name);
        expectWith(found, `${name} is not a rule of the web ACL`).toBeDefined();
        expectWith(found!.answer.status, item).toBe(stated.status);
        expectWith(found!.answer.headers, item).toEqual(expect.objectContaining(stated.headers));
        const rate = found!.rule.Statement.RateBasedStatement;
        if (rate) {
          const [, limit, window] = /(\d[\d,]*) per (\d+) s\b/.exec(item)!;
          expectWith({ limit: rate.Limit, window: rate.EvaluationWindowSec }, item).toEqual({
            limit: number(limit!),
            window: number(window!),
          });
        }
        const size = found!.rule.Statement.SizeConstraintStatement;
        if (size) expectWith(size.Size, item).toBe(number(/(\d+) KiB/.exec(item)![1]!) * 1024);
      }
      if (ruleNames.some((name) => name.startsWith('AWSManagedRules'))) {
        const counted = ruleNames.flatMap((name) =>
          rules
            .get(name)!
            .rule.Statement.ManagedRuleGroupStatement.RuleActionOverrides.filter((o: any) => o.ActionToUse.Count)
            .map((o: any) => o.Name as string),
        );
        const stated = [...item.split('Every other rule blocks')[0]!.matchAll(/`(\w+_BODY)`/g)].map((m) => m[1]!);
        expectWith([...stated].sort(), item).toEqual([...counted].sort());
      }
    }
    // The run-notifications path has its own limit, stated where that endpoint is.
    named.add('RunNotificationsPerOrganization');
    expect([...rules.keys()].filter((name) => !named.has(name))).toEqual([]);
  });

  it("quotes a rate rule's 429 detail as the template words it", () => {
    const text = section('docs/api.md', 'Limits').replace(/\s*\n\s*/g, ' ');
    const quoted = /its `detail` says which limit was passed and what to do, e\.g\. for a token: `([^`]+)`/.exec(
      text,
    )![1]!;
    const [acl] = Object.values(resourcesOf(template, 'AWS::WAFv2::WebACL'));
    const key = wafRules().get('PerTokenRateLimit')!.rule.Action.Block.CustomResponse.CustomResponseBodyKey;
    expect(quoted).toBe(JSON.parse(acl!.Properties.CustomResponseBodies[key].Content).errors[0].detail);
  });

  it('states the run-notifications limit as the template sets it', () => {
    const block = blocks(section('docs/api.md', 'Run notifications')).find((b) => b.includes('WAF limits this path'))!;
    const text = block.slice(block.indexOf('WAF limits this path'));
    const { rule, answer } = wafRules().get('RunNotificationsPerOrganization')!;
    const [, limit] = /(\d[\d,]*) requests a minute/.exec(text)!;
    expectWith(
      { limit: rule.Statement.RateBasedStatement.Limit, window: rule.Statement.RateBasedStatement.EvaluationWindowSec },
      text,
    ).toEqual({ limit: number(limit!), window: 60 });
    expectWith(answer.status, text).toBe(statusesIn(text)[0]);
  });
});

describe('every statement that names a gateway response or a WAF rule is true of it', () => {
  it('gives the status and headers of the responses it names', () => {
    const responses = gatewayResponses();
    const rules = wafRules();
    const answers = new Map<string, Answer>([
      ...responses,
      ...[...rules].map(([name, { answer }]) => [name, answer] as const),
    ]);
    const checked: string[] = [];
    const wrong: string[] = [];
    for (const file of PAGES) {
      for (const block of blocks(read(file))) {
        for (const clause of clauses(block)) {
          const named = [...clause.matchAll(/`([A-Za-z_0-9]+)`/g)]
            .map((m) => m[1]!)
            .filter((name) => answers.has(name));
          // A clause about what AWS answers without this template's customization is not about the template.
          if (named.length === 0 || /\bAWS(?:'s)? (?:own )?default\b|\bdefault status\b/.test(clause)) continue;
          const statuses = statusesIn(clause);
          const headers = headersIn(clause);
          if (statuses.length === 0 && Object.keys(headers).length === 0) continue;
          checked.push(`${file}: ${clause}`);
          const possible = named.map((name) => answers.get(name)!).filter((answer) => answer.status !== undefined);
          for (const status of statuses) {
            if (!possible.some((answer) => answer.status === status))
              wrong.push(`${file}: ${status} is not what ${named.join('/')} answers: ${clause}`);
          }
          for (const [header, value] of Object.entries(headers)) {
            if (!possible.some((answer) => answer.headers[header] === value))
              wrong.push(`${file}: ${header}: ${value} is not sent by ${named.join('/')}: ${clause}`);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
    // The statements this exists for: the runbooks' authorizer failure and throttling answers.
    expect(checked.some((c) => c.startsWith('docs/runbooks.md') && c.includes('`AUTHORIZER_FAILURE`'))).toBe(true);
    expect(checked.some((c) => c.startsWith('docs/runbooks.md') && c.includes('`INTEGRATION_FAILURE`'))).toBe(true);
    expect(checked.some((c) => c.startsWith('docs/runbooks.md') && c.includes('`PerTokenRateLimit`'))).toBe(true);
  });

  it('has alarm descriptions that say what clients get as the template answers it', () => {
    const responses = gatewayResponses();
    for (const alarm of Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm'))) {
      const description: string = alarm.Properties.AlarmDescription;
      const got = /clients got (\d{3})/.exec(description);
      if (!got) continue;
      expectWith(description, 'the authorizer is the only alarm that states a client status').toMatch(/authorizer/);
      expectWith(Number(got[1]), description).toBe(responses.get('AUTHORIZER_FAILURE')!.status);
    }
  });
});

describe("the API reference's mock answers are the template's", () => {
  it('answers any other method on a known path 405 with Allow, as it says', () => {
    const statement = blocks(section('docs/api.md', "API Gateway's own answers")).find((block) =>
      block.includes('Any other method'),
    )!;
    const [, status, title] = /(\d{3}) `([a-z ]+)` with `Allow`/.exec(statement)!;
    const mocks = deployedMethods(template).filter((m) => m.method === 'ANY');
    expect(mocks.length).toBeGreaterThan(5);
    expect(statement).toContain('whatever the body and its media type');
    for (const { path, properties } of mocks) {
      // A body of a type with no template passes through to the one response (NEVER would answer 415).
      expectWith(properties.Integration.PassthroughBehavior, path).toBe('WHEN_NO_MATCH');
      expectWith(properties.Integration.IntegrationResponses.length, path).toBe(1);
      const [response] = properties.Integration.IntegrationResponses;
      expectWith(response.StatusCode, path).toBe(status);
      expectWith(response.ResponseParameters['method.response.header.Allow'], path).toMatch(/^'[A-Z, ]+'$/);
      expectWith(JSON.parse(response.ResponseTemplates['application/vnd.api+json']).errors[0].title, path).toBe(title);
    }
  });

  it('serves the service discovery document it shows', () => {
    const shown = /`(\{"tfe\.v2"[^`]+\})`/.exec(section('docs/api.md', 'Ping and service discovery'))![1]!;
    const discovery = deployedMethods(template).find(
      (m) => m.method === 'GET' && m.path === '/.well-known/terraform.json',
    )!;
    const [response] = discovery.properties.Integration.IntegrationResponses;
    expect(JSON.parse(Object.values<string>(response.ResponseTemplates)[0]!)).toEqual(JSON.parse(shown));
  });
});

describe("the runbooks' dashboard is the template's", () => {
  it('names only panels the dashboard has', () => {
    const [dashboard] = Object.values(resourcesOf(template, 'AWS::CloudWatch::Dashboard'));
    const body = JSON.stringify(dashboard!.Properties.DashboardBody);
    const titles = [...body.matchAll(/\\"title\\":\\"((?:[^"\\]|\\\\.)*?)\\"/g)].map((m) => m[1]!);
    expect(titles.length).toBeGreaterThan(5);
    const named = blocks(read('docs/runbooks.md'))
      .filter((block) => /dashboard|panel/i.test(block))
      .flatMap((block) => [...block.replace(/`[^`]*`/g, '').matchAll(/"([^"]+)"/g)].map((m) => m[1]!));
    expect(named.length).toBeGreaterThan(3);
    expect(named.filter((name) => !titles.some((title) => title.includes(name)))).toEqual([]);
  });
});

describe("the runbooks' alarms are the template's", () => {
  const anchor = (heading: string) =>
    heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
  const alarmSections = () =>
    read('docs/runbooks.md')
      .split('\n')
      .filter((line) => /^## Alarm: /.test(line))
      .map((line) => line.slice(3).trim());
  const alarmsLinkingTo = (section: string) =>
    Object.entries(resourcesOf(template, 'AWS::CloudWatch::Alarm'))
      .filter(([, alarm]) => (alarm.Properties.AlarmDescription as string).endsWith(`#${anchor(section)}`))
      .map(([id, alarm]) => ({ id, ...alarm.Properties }));

  /** What the first paragraph of an alarm's section says about when it fires. */
  function stated(text: string) {
    const rate = /more than (\d+(?:\.\d+)?)%/i.exec(text);
    const seconds = /over (\d+(?:\.\d+)?) s\b/.exec(text);
    const count = /(\d[\d,]*)\+ (?!requests (?:each|per))/.exec(text);
    const threshold = rate
      ? { value: Number(rate[1]) / 100, operator: 'GreaterThanThreshold' }
      : seconds
        ? { value: Number(seconds[1]) * 1000, operator: 'GreaterThanThreshold' }
        : count
          ? { value: number(count[1]!), operator: 'GreaterThanOrEqualToThreshold' }
          : undefined;
    const ofPeriods = /(\d) of (?:the last )?(\d|three) (?:five|5)-minute periods/.exec(text);
    const eachOf = /each of (?:the last )?(three|\d) (?:five|5)-minute periods/.exec(text);
    const forMinutes = /for (\d+) minutes/.exec(text);
    const inMinutes = /in (\d+) minutes/.exec(text);
    const digit = (word: string) => (word === 'three' ? 3 : Number(word));
    const evaluation = ofPeriods
      ? { periods: digit(ofPeriods[2]!), datapoints: digit(ofPeriods[1]!), period: 300 }
      : eachOf
        ? { periods: digit(eachOf[1]!), datapoints: digit(eachOf[1]!), period: 300 }
        : forMinutes
          ? { periods: Number(forMinutes[1]) / 5, datapoints: Number(forMinutes[1]) / 5, period: 300 }
          : inMinutes
            ? { periods: 1, datapoints: 1, period: Number(inMinutes[1]) * 60 }
            : undefined;
    const busy = /(?:at least |at )(\d+)\+? requests|(\d+)\+ requests (?:each|per)/.exec(text);
    return { threshold, evaluation, minRequests: busy ? Number(busy[1] ?? busy[2]) : undefined };
  }

  const periodOf = (alarm: any): number =>
    alarm.Period ??
    [...new Set(alarm.Metrics.filter((m: any) => m.MetricStat).map((m: any) => m.MetricStat.Period))].reduce(
      (a: any, b: any) => {
        if (a !== b) throw new Error(`${alarm.id}: metrics of different periods`);
        return b;
      },
    );

  it('has a section for every alarm, each read by at least one alarm', () => {
    for (const heading of alarmSections()) expectWith(alarmsLinkingTo(heading).length, heading).toBeGreaterThan(0);
  });

  it('states each threshold, comparison, evaluation and period as the alarms that link to it have them', () => {
    for (const heading of alarmSections()) {
      const first = blocks(section('docs/runbooks.md', heading))[0]!;
      const { threshold, evaluation, minRequests } = stated(first);
      expectWith(threshold, `${heading}: no threshold in "${first}"`).toBeDefined();
      expectWith(evaluation, `${heading}: no evaluation window in "${first}"`).toBeDefined();
      for (const alarm of alarmsLinkingTo(heading)) {
        const actual = {
          value: alarm.Threshold,
          operator: alarm.ComparisonOperator,
          periods: alarm.EvaluationPeriods,
          datapoints: alarm.DatapointsToAlarm ?? alarm.EvaluationPeriods,
          period: periodOf(alarm),
        };
        expectWith(actual, `${alarm.id} against "${first}"`).toEqual({ ...threshold!, ...evaluation! });
        const guard = /IF\(requests >= (\d+)/.exec(alarm.Metrics?.find((m: any) => m.Expression)?.Expression ?? '');
        expectWith(guard ? Number(guard[1]) : undefined, `${alarm.id}: minimum requests in "${first}"`).toBe(
          minRequests,
        );
      }
    }
  });
});
