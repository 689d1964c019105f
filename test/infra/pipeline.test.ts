import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { preflight } from '#infra/ops/preflight';
import cdkJson from '../../cdk.json' with { type: 'json' };
import packageJson from '../../package.json' with { type: 'json' };

/**
 * The pipeline as code (.github/workflows/pipeline.yml), parsed and held to what it promises: npm ci
 * and npm test, the dev stage's diff, deploy and smoke test, prod only after dev and an approval,
 * AWS credentials by OIDC only, actions pinned by commit, and every step an npm script that exists.
 */
const WORKFLOW_FILE = new URL('../../.github/workflows/pipeline.yml', import.meta.url);
const text = readFileSync(WORKFLOW_FILE, 'utf8');
const workflow = parse(text) as {
  on: Record<string, any>;
  permissions: Record<string, string>;
  jobs: Record<string, Job>;
};
interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, string>;
  env?: Record<string, string>;
  name?: string;
}
interface Job {
  needs?: string | string[];
  environment?: string | { name: string };
  permissions?: Record<string, string>;
  steps: Step[];
  if?: string;
}

const jobs = workflow.jobs;
const runs = (job: Job) => job.steps.filter((step) => step.run !== undefined).map((step) => step.run!.trim());
const needs = (job: Job) => [job.needs ?? []].flat();
const environmentOf = (job: Job) => (typeof job.environment === 'object' ? job.environment.name : job.environment);
const CREDENTIALS_ACTION = 'aws-actions/configure-aws-credentials';
/** The jobs that deploy: the ones that assume an AWS role. */
const awsJobs = Object.entries(jobs).filter(([, job]) =>
  job.steps.some((step) => step.uses?.startsWith(`${CREDENTIALS_ACTION}@`)),
);

describe('the pipeline workflow', () => {
  it('runs on every push to main (and checks pull requests)', () => {
    expect(workflow.on.push.branches).toEqual(['main']);
    expect(workflow.on).toHaveProperty('pull_request');
  });

  it('installs exactly what the lockfile says and runs the whole test suite first', () => {
    expect(needs(jobs.test!)).toEqual([]);
    expect(runs(jobs.test!)).toEqual(['npm ci', 'npm test']);
    for (const [, job] of Object.entries(jobs))
      expect(runs(job)).not.toContainEqual(expect.stringMatching(/npm (install|i)\b/));
  });

  it('every run step is an npm script that exists in package.json (what a person runs)', () => {
    const scripts = Object.keys(packageJson.scripts);
    const commands = Object.values(jobs)
      .flatMap(runs)
      .flatMap((run) =>
        run
          .split(/\n|&&/)
          .map((c) => c.trim())
          .filter(Boolean),
      );
    expect(commands.length).toBeGreaterThan(8);
    for (const command of commands) {
      const match = /^npm (ci|test|run ([\w:-]+))(\s|$)/.exec(command);
      expect({ command, npm: match !== null }).toEqual({ command, npm: true });
      if (match?.[2]) expect(scripts).toContain(match[2]);
    }
    expect(scripts).toEqual(expect.arrayContaining(['test', 'diff', 'deploy', 'smoke']));
  });

  it('dev: after the tests, shows the diff, deploys the dev stage and smoke-tests what it deployed', () => {
    const dev = jobs.dev!;
    expect(needs(dev)).toEqual(['test']);
    expect(environmentOf(dev)).toBe('dev');
    expect(dev.if).toContain("github.ref == 'refs/heads/main'");
    const [install, diff, deploy, smoke] = runs(dev);
    expect(install).toBe('npm ci');
    expect(diff).toBe('npm run diff -- -c stage=dev');
    expect(deploy).toMatch(/^npm run deploy -- -c stage=dev .*--require-approval never/);
    expect(smoke).toMatch(/^npm run smoke -- /);
    expectSmokeOfItsOwnDeploy(deploy!, smoke!);
    // The credentials are in place before the first command that talks to AWS.
    const steps = dev.steps.map((step) => step.uses?.split('@')[0] ?? step.run);
    expect(steps.indexOf(CREDENTIALS_ACTION)).toBeLessThan(steps.indexOf(diff));
  });

  it('prod: only after dev passed its smoke test, a prod diff for the reviewers, and the approval of the prod environment', () => {
    const prod = jobs.prod!;
    expect(needs(prod)).toEqual(expect.arrayContaining(['dev', 'prod-diff']));
    // Required reviewers are a setting of the GitHub environment: the job names it, and waits for them.
    expect(environmentOf(prod)).toBe('prod');
    expect(runs(jobs['prod-diff']!)).toEqual(['npm ci', 'npm run diff -- -c stage=prod']);
    expect(needs(jobs['prod-diff']!)).toEqual(['dev']);
    const [install, deploy, smoke] = runs(prod);
    expect(install).toBe('npm ci');
    expect(deploy).toMatch(/^npm run deploy -- -c stage=prod .*--require-approval never/);
    expectSmokeOfItsOwnDeploy(deploy!, smoke!);
    // Nothing else deploys prod.
    const prodDeploys = Object.entries(jobs).filter(([, job]) =>
      runs(job).some((run) => /npm run deploy .*stage=prod/.test(run)),
    );
    expect(prodDeploys.map(([name]) => name)).toEqual(['prod']);
  });

  it('AWS credentials only by OIDC: id-token: write where a role is assumed, never an access key', () => {
    expect(workflow.permissions).toEqual({ contents: 'read' });
    expect(awsJobs.map(([name]) => name).sort()).toEqual(['dev', 'prod', 'prod-diff']);
    for (const [, job] of awsJobs) {
      expect(job.permissions).toEqual({ contents: 'read', 'id-token': 'write' });
      const credentials = job.steps.find((step) => step.uses?.startsWith(`${CREDENTIALS_ACTION}@`))!;
      expect(credentials.with!['role-to-assume']).toBe('${{ vars.AWS_DEPLOY_ROLE_ARN }}');
      expect(Object.keys(credentials.with!)).not.toEqual(expect.arrayContaining(['aws-access-key-id']));
      expect(environmentOf(job)).toBeDefined();
    }
    expect(text).not.toMatch(/aws-access-key-id|aws-secret-access-key|AWS_ACCESS_KEY_ID|AWS_SECRET_ACCESS_KEY/);
    // The jobs that assume no role get no OIDC token.
    expect(jobs.test!.permissions).toBeUndefined();
  });

  it('pins every action to a full commit SHA, its tag beside it', () => {
    const uses = text.split('\n').filter((line) => /^\s*-?\s*uses:/.test(line));
    expect(uses.length).toBeGreaterThanOrEqual(10);
    for (const line of uses) expect(line).toMatch(/uses: [\w.-]+\/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
  });

  it('the settings the pipeline deploys with pass the deploy check (offline, as npm run deploy runs it first)', () => {
    for (const stage of ['dev', 'prod']) {
      const deploy = runs(jobs[stage]!).find((run) => run.startsWith('npm run deploy'))!;
      const check = preflight({
        args: deploy.split(/\s+/).slice(4),
        env: { AWS_ACCESS_KEY_ID: 'from-oidc', AWS_SECRET_ACCESS_KEY: 'from-oidc', AWS_REGION: 'eu-west-1' },
        home: process.env.TMPDIR!,
        cdkContext: cdkJson.context,
      });
      expect({ stage: check.stage, problems: check.problems }).toEqual({ stage, problems: [] });
    }
  });

  it('the smoke test gets its token from a secret, in its own step only', () => {
    for (const stage of ['dev', 'prod']) {
      const smoke = jobs[stage]!.steps.find((step) => step.run?.startsWith('npm run smoke'))!;
      expect(smoke.env).toEqual({
        TFE_TOKEN: '${{ secrets.SMOKE_TOKEN }}',
        SMOKE_ORG: '${{ vars.SMOKE_ORG }}',
        SMOKE_NOTIFICATION_SECRET: '${{ secrets.SMOKE_NOTIFICATION_SECRET }}',
      });
      expect(JSON.stringify(jobs[stage]!.steps.filter((step) => step !== smoke))).not.toContain('SMOKE_TOKEN');
    }
  });
});

/** The smoke test reads the address of the stage this job just deployed, from its outputs file. */
function expectSmokeOfItsOwnDeploy(deploy: string, smoke: string) {
  const outputs = /--outputs-file (\S+)/.exec(deploy)?.[1];
  expect(outputs).toBeDefined();
  expect(smoke).toBe(`npm run smoke -- --outputs ${outputs}`);
}
