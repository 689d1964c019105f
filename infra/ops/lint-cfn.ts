import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_STAGE, PRODUCTION_STAGE } from '#infra/cdk/config';
import { synthesizeStage } from '#infra/local/assembly';
import { PROJECT_TMP } from '#infra/local/settings';

/**
 * `npm run lint:cfn`: the template of every deployed stage, synthesized offline as `npm run synth`
 * does (cdk.json's context and the stage's settings, no AWS account, no bundling: the bundles'
 * contents are no part of a template), checked by cfn-lint against CloudFormation's own resource
 * specifications and rules. An error fails the run (exit 1); warnings are listed. .ci/run runs it
 * after `npm test`. cfn-lint is a Python tool: `pip install cfn-lint`.
 */
export const LINTED_STAGES = [DEFAULT_STAGE, PRODUCTION_STAGE] as const;

/** A hosted zone and domain for the multi-Region synths: nothing is looked up, any valid values do. */
const EXAMPLE_DOMAIN = {
  domainName: 'tfe.example.com',
  hostedZoneId: 'Z0123456789ABCDEFGHIJ',
  hostedZoneName: 'example.com',
};
/**
 * The multi-Region stage in both of its shapes (infra/cdk/regions.ts): every stack of each (the
 * global table's, and the API stack of each replica Region) is linted.
 */
export const LINTED_MULTI_REGION: ReadonlyArray<{ name: string; stage: string; context: Record<string, string> }> = [
  {
    name: `${PRODUCTION_STAGE} us-east-1,us-east-2 + witness us-west-2`,
    stage: PRODUCTION_STAGE,
    context: { ...EXAMPLE_DOMAIN, regions: 'us-east-1,us-east-2', witnessRegion: 'us-west-2' },
  },
  {
    name: `${PRODUCTION_STAGE} eu-west-1,eu-west-2,eu-central-1`,
    stage: PRODUCTION_STAGE,
    context: { ...EXAMPLE_DOMAIN, regions: 'eu-west-1,eu-west-2,eu-central-1' },
  },
];

/** Checks left out, each with why: what they flag is how CDK writes templates, and CloudFormation takes it as meant. */
export const IGNORED_CHECKS: Record<string, string> = {
  W3005:
    'a DependsOn that a Ref or GetAtt already implies: CDK writes them (each function on its role, the WAF association on the stage), and they change nothing',
};

/** One finding as `cfn-lint --format json` gives it. */
export interface Finding {
  Level: 'Error' | 'Warning' | 'Informational' | string;
  Message: string;
  Rule: { Id: string };
  Location: { Start: { LineNumber: number }; Path?: Array<string | number> };
}

export interface StageResult {
  stage: string;
  errors: Finding[];
  warnings: Finding[];
  lines: string[];
}

/** What to print for a stage's findings, and whether it passes (no error). */
export function stageResult(stage: string, template: string, findings: Finding[]): StageResult {
  const errors = findings.filter((f) => f.Level === 'Error');
  const warnings = findings.filter((f) => f.Level !== 'Error');
  const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const line = (f: Finding) =>
    `  ${f.Rule.Id} ${(f.Location.Path ?? []).join('/')} (line ${f.Location.Start.LineNumber}): ${f.Message}`;
  return {
    stage,
    errors,
    warnings,
    lines: [
      `lint:cfn ${stage}: ${template}: ${plural(errors.length, 'error')}, ${plural(warnings.length, 'warning')} (ignored: ${Object.keys(IGNORED_CHECKS).join(', ')})`,
      ...errors.map(line),
      ...warnings.map(line),
    ],
  };
}

/** cfn-lint's findings for one template; throws when cfn-lint cannot be run or does not answer in JSON. */
export function cfnLint(template: string): Finding[] {
  const run = spawnSync(
    'cfn-lint',
    [
      '--format',
      'json',
      '--non-zero-exit-code',
      'none',
      '--ignore-checks',
      ...Object.keys(IGNORED_CHECKS),
      '--',
      template,
    ],
    {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  if (run.error) {
    const missing = (run.error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new Error(
      missing
        ? 'cfn-lint is not on PATH: install it (pip install cfn-lint), then run npm run lint:cfn again'
        : `cfn-lint could not run: ${run.error.message}`,
    );
  }
  if (run.status !== 0)
    throw new Error(`cfn-lint failed (exit ${run.status}): ${run.stderr.trim() || run.stdout.trim()}`);
  try {
    return JSON.parse(run.stdout || '[]') as Finding[];
  } catch {
    throw new Error(`cfn-lint answered something other than JSON: ${run.stdout.slice(0, 500)}`);
  }
}

/**
 * Synthesizes `stage` (with `context` as `-c` adds it) into a scratch folder, lints every stack's
 * template in it (one for a single-Region stage; the table's and each Region's for a multi-Region
 * one), removes the folder. `label` names the run in what is printed.
 */
export async function lintStage(
  stage: string,
  context: Record<string, unknown> = {},
  label = stage,
): Promise<StageResult[]> {
  mkdirSync(PROJECT_TMP, { recursive: true });
  const outdir = mkdtempSync(join(PROJECT_TMP, `lint-cfn-${stage}-`));
  try {
    // No bundling: the template is the same but for the assets' hashes, and esbuild is the slow part.
    await synthesizeStage(outdir, stage, { ...context, 'aws:cdk:bundling-stacks': [] });
    const templates = readdirSync(outdir)
      .filter((file) => file.endsWith('.template.json'))
      .sort();
    if (templates.length === 0) throw new Error(`the synth of ${label} wrote no template`);
    return templates.map((template) => stageResult(label, template, cfnLint(join(outdir, template))));
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

const USAGE = `Usage: npm run lint:cfn [-- --stage NAME …]

Synthesizes the template of each stage (${LINTED_STAGES.join(', ')} unless --stage names others) offline and
checks it with cfn-lint (pip install cfn-lint); without --stage, also every stack of the multi-Region
stage (${LINTED_MULTI_REGION.map((run) => run.name).join('; ')}).
Exit 1 when a template has an error; warnings are listed.
Left out: ${Object.entries(IGNORED_CHECKS)
  .map(([id, why]) => `${id}, ${why}`)
  .join('; ')}.
  --stage NAME   lint this stage (repeatable)
  -h, --help     this text`;

if (process.argv[1] && resolve(process.argv[1]) === import.meta.filename) {
  let values;
  try {
    ({ values } = parseArgs({
      options: { stage: { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }));
  } catch (error) {
    console.error(`lint:cfn: ${(error as Error).message}. npm run lint:cfn -- --help says more.`);
    process.exit(2);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  let failed = false;
  const runs = values.stage
    ? values.stage.map((stage) => ({ name: stage, stage, context: {} }))
    : [...LINTED_STAGES.map((stage) => ({ name: stage, stage, context: {} })), ...LINTED_MULTI_REGION];
  for (const { name, stage, context } of runs) {
    try {
      for (const result of await lintStage(stage, context, name)) {
        for (const line of result.lines) console.log(line);
        if (result.errors.length > 0) failed = true;
      }
    } catch (error) {
      console.error(`lint:cfn ${name}: ${(error as Error).message}`);
      failed = true;
    }
  }
  process.exitCode = failed ? 1 : 0;
}
