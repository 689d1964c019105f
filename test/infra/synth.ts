import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { ApiStack } from '#infra/cdk/stack';
import { addNagChecks } from '#infra/cdk/constructs/nag';
import cdkJson from '../../cdk.json' with { type: 'json' };

// What reads a template lives in templates.ts, without the weight of the CDK app; here too for the files that synthesize.
export { deployedMethods, resourcesOf, underBase, type Resources } from './templates';

export interface Synthesized {
  app: App;
  stack: ApiStack;
  template: Template;
  /** The cloud assembly directory (a temporary one per synth). */
  outdir: string;
  nag: ReturnType<typeof addNagChecks>;
}

/**
 * The stack as `npm run synth` builds it: cdk.json's feature flags, the AWS Solutions checks, the
 * route table. `bundle: false` skips esbuild (the template is the same but for asset hashes):
 * only the test that looks at the bundles pays for them. `context` adds settings as `-c` does.
 */
export function synthesize({
  bundle = false,
  stage = 'test',
  context = {} as Record<string, unknown>,
} = {}): Synthesized {
  const app = new App({
    context: { ...cdkJson.context, ...context, ...(bundle ? {} : { 'aws:cdk:bundling-stacks': [] }) },
  });
  const stack = new ApiStack(app, `tfc-tags-comments-${stage}`, {
    stage,
    env: { account: '123456789012', region: 'eu-west-1' },
  });
  const nag = addNagChecks(app);
  const assembly = app.synth();
  return { app, stack, template: Template.fromStack(stack), outdir: assembly.directory, nag };
}
