import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { App } from 'aws-cdk-lib';
import { ApiStack, stackNameFor } from '#infra/cdk/stack';
import { stageConfigFrom } from '#infra/cdk/config';
import { addMultiRegionStage } from '#infra/cdk/regions';
import type { Template } from './model';

const PROJECT_ROOT = resolve(import.meta.dirname, '../..');

/**
 * The template a stage deploys, synthesized here as `cdk synth` would (cdk.json's context, the
 * stage's settings, `extra` as `-c` adds them), without bundling the functions: the bundles'
 * contents change nothing the bill counts.
 */
export function stageTemplate(stage: string, extra: Record<string, string> = {}): Template {
  const cdkJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as {
    context: Record<string, unknown>;
  };
  const app = new App({ context: { ...cdkJson.context, ...extra, 'aws:cdk:bundling-stacks': [] } });
  const stack = new ApiStack(app, stackNameFor(stage), {
    stage,
    env: { account: '123456789012', region: 'us-east-1' },
  });
  const assembly = app.synth();
  return assembly.getStackByName(stack.stackName).template as Template;
}

/** A custom domain, to price the stage without the CloudFront front. */
export const CUSTOM_DOMAIN = {
  domainName: 'tfe.example.com',
  certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/example',
};

/** A hosted zone for the multi-Region stage (each Region makes its certificate in it). */
export const HOSTED_DOMAIN = {
  domainName: 'tfe.example.com',
  hostedZoneId: 'Z0123456789ABCDEFGHIJ',
  hostedZoneName: 'example.com',
};

/** The multi-Region stage's templates (context `regions`, `witnessRegion`): the table's stack, then each Region's API stack. */
export function multiRegionTemplates(
  stage: string,
  extra: Record<string, string>,
): { table: Template; apis: Template[] } {
  const cdkJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as {
    context: Record<string, unknown>;
  };
  const app = new App({ context: { ...cdkJson.context, ...HOSTED_DOMAIN, ...extra, 'aws:cdk:bundling-stacks': [] } });
  const { multiRegion } = stageConfigFrom(app.node, stage);
  if (!multiRegion) throw new Error('infra/cost/template.ts: multiRegionTemplates needs context regions');
  const { table, apis } = addMultiRegionStage(app, stage, multiRegion, '123456789012');
  const assembly = app.synth();
  const of = (name: string) => assembly.getStackByName(name).template as Template;
  return { table: of(table.stackName), apis: [...apis.values()].map((api) => of(api.stackName)) };
}
