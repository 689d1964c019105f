import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { COST_PAGE, COST_STAGE, multiRegionCosts } from '#infra/cost/main';
import { costOf, costPage, usd, type CostReport, type MultiRegionReport, type Template } from '#infra/cost/model';
import { PRICES, REQUEST_TYPES } from '#infra/cost/prices';
import { CUSTOM_DOMAIN, stageTemplate } from '#infra/cost/template';

/**
 * The bill is computed, not written: what the synthesized template creates, counted, times the price
 * table. docs/cost.md is that computation's output, so it cannot drift from the template.
 */
let front: Template;
let domain: Template;
let frontCost: CostReport;
let domainCost: CostReport;
let multiRegion: Array<{ regions: string; report: MultiRegionReport }>;
beforeAll(() => {
  front = stageTemplate(COST_STAGE);
  domain = stageTemplate(COST_STAGE, CUSTOM_DOMAIN);
  frontCost = costOf(front);
  domainCost = costOf(domain);
  multiRegion = multiRegionCosts();
}, 240_000);

const ofType = (template: Template, type: string) =>
  Object.values(template.Resources)
    .filter((r) => r.Type === type)
    .map((r) => r.Properties);
const fixedLine = (report: CostReport, start: string) => report.fixed.find((l) => l.item.startsWith(start));

describe('docs/cost.md', () => {
  it('is what the template and the price table give (npm run cost writes it)', () => {
    const page = costPage({ stage: COST_STAGE, front: frontCost, customDomain: domainCost, multiRegion });
    const committed = readFileSync(COST_PAGE, 'utf8');
    expect({ upToDate: committed === page, hint: 'run npm run cost' }).toEqual({
      upToDate: true,
      hint: 'run npm run cost',
    });
  });

  it("is summed up in the README with the computation's own totals", () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    const [read, create] = frontCost.perMillionUsd;
    expect(readme).toContain(`**${usd(frontCost.fixedUsd)} a month** before traffic`);
    expect(readme).toContain(`**${usd(read!)} per million reads and ${usd(create!)} per million creates**`);
  });

  it('states the totals the computation gives', () => {
    const page = readFileSync(COST_PAGE, 'utf8');
    expect(page).toContain(`| **Total** | | **${usd(frontCost.fixedUsd)}** |`);
    expect(page).toContain(
      `With a custom domain instead of the CloudFront front: **${usd(domainCost.fixedUsd)}** a month`,
    );
    expect(page).toContain(`| **Total** | ${frontCost.perMillionUsd.map((n) => `**${usd(n)}**`).join(' | ')} |`);
  });
});

describe('the multi-Region stage, from its templates', () => {
  const [witnessed, three] = [() => multiRegion[0]!.report, () => multiRegion[1]!.report];

  it('prices two replicas and a witness, and three replicas', () => {
    expect(
      multiRegion.map(({ regions, report }) => ({ regions, replicas: report.replicas, witness: report.witness })),
    ).toEqual([
      { regions: 'us-east-1,us-east-2, witness us-west-2', replicas: 2, witness: true },
      { regions: 'us-east-1,us-east-2,us-west-2', replicas: 3, witness: false },
    ]);
  });

  it("pays each replica Region its API stack with a custom domain, its health check and the checks' requests; the witness nothing", () => {
    const healthCheck = PRICES.route53HealthCheck.usd + 2 * PRICES.route53HealthCheckOption.usd; // HTTPS, every 10 s
    for (const report of [witnessed(), three()]) {
      expect(report.healthCheckUsd).toBeGreaterThan(report.replicas * healthCheck);
      // Each Region: at least a stage with a domain (plus the health function's alarms and metrics), its health check and requests.
      expect(report.fixedUsd).toBeGreaterThan(report.replicas * domainCost.fixedUsd + report.healthCheckUsd);
      expect(report.fixedUsd).toBeLessThan(report.replicas * (domainCost.fixedUsd + 5) + report.healthCheckUsd);
    }
  });

  it('pays every write again in each other replica Region, reads once', () => {
    const create = REQUEST_TYPES.findIndex((t) => t.name === 'Create');
    const read = REQUEST_TYPES.findIndex((t) => t.name === 'Read');
    const { writeUnits, expiringItems } = REQUEST_TYPES[create]!;
    for (const report of [witnessed(), three()]) {
      expect(report.replicatedWriteUnits[create]).toBe(writeUnits + 3 * expiringItems);
      expect(report.perMillionUsd[read]).toBeCloseTo(domainCost.perMillionUsd[read]!, 2);
      expect(report.perMillionUsd[create]).toBeCloseTo(
        domainCost.perMillionUsd[create]! +
          (report.replicas - 1) * (writeUnits + 3 * expiringItems) * PRICES.dynamoDbWrites.usd,
        2,
      );
    }
  });

  it("states each shape's totals on the page", () => {
    const page = readFileSync(COST_PAGE, 'utf8');
    expect(page).toContain(
      `| Every month, whatever the traffic | ${multiRegion.map((m) => `**${usd(m.report.fixedUsd)}**`).join(' | ')} |`,
    );
  });
});

describe('the fixed monthly cost, counted from the template', () => {
  it('WAF: $5 for the web ACL and $1 for each of its rules and managed rule groups', () => {
    const rules = ofType(front, 'AWS::WAFv2::WebACL')[0].Rules as unknown[];
    expect(rules).toHaveLength(7); // 5 of ours, AWS's common and known-bad-inputs groups
    expect(fixedLine(frontCost, 'WAF web ACL')).toMatchObject({ count: 1, usd: 5 });
    expect(fixedLine(frontCost, 'WAF rules (5) and managed rule groups (2)')).toMatchObject({ count: 7, usd: 7 });
    // Without the front, the rule that requires it goes.
    expect(fixedLine(domainCost, 'WAF rules (4) and managed rule groups (2)')).toMatchObject({ count: 6, usd: 6 });
  });

  it('alarms are billed per metric they read: a metric math alarm for each metric in it', () => {
    const alarms = ofType(front, 'AWS::CloudWatch::Alarm');
    const metrics = alarms.reduce((n, a) => n + (a.Metrics ? a.Metrics.filter((m: any) => m.MetricStat).length : 1), 0);
    expect(metrics).toBeGreaterThan(alarms.length); // some alarms read several metrics
    expect(fixedLine(frontCost, `CloudWatch alarms: ${alarms.length}, reading ${metrics} metrics`)).toMatchObject({
      count: metrics,
      usd: metrics * 0.1,
    });
  });

  it("the dashboard, the KMS key, the front's secret and the custom metrics are on the bill", () => {
    expect(fixedLine(frontCost, 'CloudWatch dashboard')).toMatchObject({ count: 1, usd: 3 });
    expect(fixedLine(frontCost, 'KMS key')).toMatchObject({ count: 1, usd: 1 });
    expect(fixedLine(frontCost, 'Secrets Manager secret')).toMatchObject({ count: 1, usd: 0.4 });
    expect(fixedLine(domainCost, 'Secrets Manager secret')).toBeUndefined();
    const custom = fixedLine(frontCost, 'Custom metrics')!;
    const functions = ofType(front, 'AWS::Lambda::Function').filter(
      (f) => f.Environment?.Variables?.POWERTOOLS_SERVICE_NAME,
    ).length;
    expect(custom.count).toBeGreaterThan(functions); // a ColdStart per function, and more
    expect(custom.atMost).toBe(true);
    expect(frontCost.fixedUsd).toBeCloseTo(
      frontCost.fixed.reduce((n, l) => n + l.usd, 0),
      2,
    );
    expect(frontCost.fixedUsd).toBeGreaterThan(20);
  });

  it('a resource the model does not price stops the computation', () => {
    const withInstance: Template = {
      Resources: { ...front.Resources, Bastion: { Type: 'AWS::EC2::Instance', Properties: {} } },
    };
    expect(() => costOf(withInstance)).toThrow(
      'the template creates AWS::EC2::Instance (Bastion), which the cost model does not price: add it',
    );
  });
});

describe('the cost per million requests, through every service a request crosses', () => {
  it('has a line for each service of the template, and the totals add them up', () => {
    expect(frontCost.perMillion.map((l) => l.service)).toEqual([
      'CloudFront',
      'WAF',
      'API Gateway',
      'Lambda',
      'DynamoDB',
      'Expiring items',
      'CloudWatch Logs',
      'X-Ray',
    ]);
    expect(domainCost.perMillion.map((l) => l.service)).toEqual([
      'WAF',
      'API Gateway',
      'Lambda',
      'DynamoDB',
      'Expiring items',
      'CloudWatch Logs',
      'X-Ray',
    ]);
    for (const i of REQUEST_TYPES.keys()) {
      expect(frontCost.perMillionUsd[i]).toBeCloseTo(
        frontCost.perMillion.reduce((n, l) => n + l.usd[i]!, 0),
        2,
      );
    }
    const line = (service: string) => frontCost.perMillion.find((l) => l.service === service)!.usd;
    expect(line('API Gateway')).toEqual([3.5, 3.5]);
    expect(line('WAF')).toEqual([0.6, 0.6]);
    // A comment create writes 4 single items on the table at $0.625 a million (its receipt's index
    // entry is on the expiring items' line); a read page reads 3 at $0.125 (plus the authorizer's share).
    expect(line('DynamoDB')[1]! - line('DynamoDB')[0]!).toBeCloseTo(4 * 0.625 - 3 * 0.125, 6);
    // With the entry: 5 write units as a comment is created (issue 35: at most 5; 8 as one transaction).
    expect(REQUEST_TYPES[1].writeUnits + REQUEST_TYPES[1].expiringItems).toBe(5);
    expect(frontCost.perMillion.find((l) => l.service === 'DynamoDB')!.how).toContain(
      "create 4 write units on the table (5 with the Expiry index's entry, priced below)",
    );
  });

  it('prices Lambda by the memory and architecture the template gives the functions', () => {
    const functions = ofType(front, 'AWS::Lambda::Function').filter(
      (f) => f.Environment?.Variables?.POWERTOOLS_SERVICE_NAME,
    );
    expect(new Set(functions.map((f) => `${f.MemorySize} ${f.Architectures?.[0]}`))).toEqual(new Set(['1024 arm64']));
    const lambda = frontCost.perMillion.find((l) => l.service === 'Lambda')!;
    expect(lambda.how).toContain('1024 MB');
    // 0.20 + 20 ms × 1 GB × $0.0000133334, and a tenth of (0.20 + 10 ms × 1 GB × the same).
    expect(lambda.usd[0]).toBeCloseTo(0.2 + 0.02 * 13.3334 + 0.1 * (0.2 + 0.01 * 13.3334), 6);
  });
});

describe('expiring items: the Expiry index and the sweeper', () => {
  it('prices the sweeper’s schedule as a fixed cost: its runs a month, each an invocation, its time, a Query per shard and its log', () => {
    const rule = ofType(front, 'AWS::Events::Rule')[0];
    expect(rule.ScheduleExpression).toBe('rate(15 minutes)');
    const sweeper = fixedLine(frontCost, 'Sweeper runs')!;
    expect(sweeper).toMatchObject({
      item: 'Sweeper runs (rate(15 minutes); Lambda, 16 index Queries, logs)',
      count: 730 * 4,
    });
    // $0.20 a million runs, 200 ms at 1 GB on Arm, 16 half read units, 2 KB of logs.
    const run = 0.2e-6 + 0.2 * 0.0000133334 + 16 * 0.5 * 0.125e-6 + (2 / 1_048_576) * 0.5;
    expect(sweeper.usd).toBeCloseTo(2920 * run, 6);
    expect(fixedLine(domainCost, 'Sweeper runs')!.usd).toBeCloseTo(sweeper.usd, 6);
  });

  it('prices each expiring item a request writes: its index entry, its delete and the entry’s removal, its share of the sweeper', () => {
    const table = ofType(front, 'AWS::DynamoDB::GlobalTable')[0];
    expect(table.GlobalSecondaryIndexes.map((i: any) => [i.IndexName, i.Projection.ProjectionType])).toEqual([
      ['Expiry', 'KEYS_ONLY'],
    ]);
    expect(REQUEST_TYPES.map((t) => t.expiringItems)).toEqual([0, 1]); // a create's receipt
    const [read, create] = frontCost.perMillion.find((l) => l.service === 'Expiring items')!.usd;
    expect(read).toBe(0);
    // 3 write units (the entry written, the item deleted, the entry removed), 0.2 KB of an eventually
    // consistent Query (half a unit per 4 KB), 2 ms at 1 GB on Arm.
    expect(create).toBeCloseTo(3 * 0.625 + 0.5 * (0.2 / 4) * 0.125 + 0.002 * 13.3334, 6);
  });

  it('leaves the sweeper out of the API’s Lambda line; without one, an expiring item costs its index entry alone', () => {
    const withoutSweeper: Template = {
      Resources: Object.fromEntries(
        Object.entries(front.Resources).filter(
          ([, r]) =>
            r.Type !== 'AWS::Events::Rule' &&
            !(r.Type === 'AWS::Lambda::Function' && String(r.Properties?.Description).endsWith('functions/sweeper.ts')),
        ),
      ),
    };
    const report = costOf(withoutSweeper);
    expect(report.perMillion.find((l) => l.service === 'Lambda')).toEqual(
      frontCost.perMillion.find((l) => l.service === 'Lambda'),
    );
    expect(fixedLine(report, 'Sweeper runs')).toBeUndefined();
    // Without a sweeper, an expiring item costs its index entry alone (and stays until someone deletes it).
    expect(report.perMillion.find((l) => l.service === 'Expiring items')!.usd).toEqual([0, 0.625]);
  });
});

describe('the price table', () => {
  it('gives every price its AWS pricing page and the date it was read', () => {
    for (const [key, price] of Object.entries(PRICES)) {
      expect({ key, source: price.source, read: price.read }).toEqual({
        key,
        source: expect.stringMatching(/^https:\/\/aws\.amazon\.com\/[\w-]+\/pricing\//),
        read: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      });
      expect(price.usd).toBeGreaterThan(0);
    }
    expect(PRICES.wafWebAcl.usd).toBe(5);
    expect(PRICES.wafRule.usd).toBe(1);
    expect(PRICES.wafRequests.usd).toBe(0.6);
    expect(PRICES.secret.usd).toBe(0.4);
    expect(PRICES.alarmMetric.usd).toBe(0.1);
    expect(PRICES.dashboard.usd).toBe(3);
    expect(PRICES.apiGatewayRest.usd).toBe(3.5);
    expect(PRICES.logsIngestion.usd).toBe(0.5);
  });
});
