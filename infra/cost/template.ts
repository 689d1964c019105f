import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { App } from 'aws-cdk-lib';
import { ApiStack, stackNameFor } from '#infra/cdk/stack';
import type { Template } from './model';

const PROJECT_ROOT = resolve(import.meta.dirname, '../..');

/**
 * The template a stage deploys, synthesized here as `cdk synth` would (cdk.json's context, the
 * stage's settings, `extra` as `-c` adds them), without bundling the functions: the bundles'
 * contents change nothing the bill counts.
 */
export function stageTemplate(stage: string, extra: Record<string, string> = {}): Template {
  const cdkJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
  const app = new App({ context: { ...cdkJson.context, ...extra, 'aws:cdk:bundling-stacks': [] } });
  const stack = new ApiStack(app, stackNameFor(stage), { stage, env: { account: '123456789012', region: 'us-east-1' } });
  const assembly = app.synth();
  return assembly.getStackByName(stack.stackName).template as Template;
}

/** A custom domain, to price the stage without the CloudFront front. */
export const CUSTOM_DOMAIN = { domainName: 'tfe.example.com', certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/example' };
