import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import {
  cfnLint,
  IGNORED_CHECKS,
  LINTED_MULTI_REGION,
  LINTED_STAGES,
  stageResult,
  type Finding,
} from '#infra/ops/lint-cfn';
import { parseStageConfig } from '#infra/cdk/config';

/**
 * `npm run lint:cfn` (infra/ops/lint-cfn.ts), which .ci/run runs after the tests on the dev and prod
 * templates: how it reads cfn-lint's findings. The templates themselves are linted by that run.
 */
const finding = (level: string, id: string, path: Array<string | number>, line: number, message: string): Finding => ({
  Level: level,
  Rule: { Id: id },
  Location: { Start: { LineNumber: line }, Path: path },
  Message: message,
});

describe('npm run lint:cfn', () => {
  it('lints the deployed stages, and leaves out W3005 alone, saying why', () => {
    expect(LINTED_STAGES).toEqual(['dev', 'prod']);
    expect(Object.keys(IGNORED_CHECKS)).toEqual(['W3005']);
    expect(IGNORED_CHECKS.W3005!.length).toBeGreaterThan(40);
  });

  it('lints the multi-Region stage in both shapes: two replicas and a witness, three replicas', () => {
    const shapes = LINTED_MULTI_REGION.map(
      ({ stage, context }) => parseStageConfig(stage, (key) => context[key]).multiRegion,
    );
    expect(shapes).toEqual([
      { regions: ['us-east-1', 'us-east-2'], witnessRegion: 'us-west-2' },
      { regions: ['eu-west-1', 'eu-west-2', 'eu-central-1'], witnessRegion: undefined },
    ]);
  });

  it('fails a stage on an error and lists its warnings, each with the rule, the path and the line', () => {
    const result = stageResult('dev', 'tfc-tags-comments-dev.template.json', [
      finding('Warning', 'W3011', ['Resources', 'Table'], 12, 'Both UpdateReplacePolicy and DeletionPolicy are needed'),
      finding(
        'Error',
        'E3030',
        ['Resources', 'Table', 'Properties', 'BillingMode'],
        20,
        "'NOPE' is not one of ['PROVISIONED', 'PAY_PER_REQUEST']",
      ),
    ]);
    expect(result.errors.map((f) => f.Rule.Id)).toEqual(['E3030']);
    expect(result.warnings.map((f) => f.Rule.Id)).toEqual(['W3011']);
    expect(result.lines).toEqual([
      'lint:cfn dev: tfc-tags-comments-dev.template.json: 1 error, 1 warning (ignored: W3005)',
      "  E3030 Resources/Table/Properties/BillingMode (line 20): 'NOPE' is not one of ['PROVISIONED', 'PAY_PER_REQUEST']",
      '  W3011 Resources/Table (line 12): Both UpdateReplacePolicy and DeletionPolicy are needed',
    ]);
    expect(stageResult('prod', 't.json', []).lines).toEqual([
      'lint:cfn prod: t.json: 0 errors, 0 warnings (ignored: W3005)',
    ]);
  });

  it('runs cfn-lint: an invalid property is an error, a DependsOn a Ref already implies is not reported', () => {
    const directory = mkdtempSync(join(tmpdir(), 'lint-cfn-'));
    const template = join(directory, 'broken.template.json');
    writeFileSync(
      template,
      JSON.stringify(
        {
          Resources: {
            Topic: { Type: 'AWS::SNS::Topic' },
            Queue: { Type: 'AWS::SQS::Queue', Properties: { VisibilityTimeout: 'soon' } },
            Subscription: {
              Type: 'AWS::SNS::Subscription',
              DependsOn: ['Topic'],
              Properties: { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: 'Topic' } },
            },
          },
        },
        null,
        2,
      ),
    );
    if (spawnSync('cfn-lint', ['--version']).error) {
      // Not installed here: the run says what to do, in one line.
      expect(() => cfnLint(template)).toThrow(
        'cfn-lint is not on PATH: install it (pip install cfn-lint), then run npm run lint:cfn again',
      );
      return;
    }
    const findings = cfnLint(template);
    expect(findings.filter((f) => f.Level === 'Error').map((f) => f.Location.Path?.join('/'))).toEqual([
      'Resources/Queue/Properties/VisibilityTimeout',
    ]);
    expect(findings.map((f) => f.Rule.Id)).not.toContain('W3005');
  }, 60_000);
});
