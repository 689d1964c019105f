import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { API_BASE_PATH } from '#shared/config';
import { ApiStack } from '#infra/cdk/stack';
import { addNagChecks } from '#infra/cdk/constructs/nag';
import cdkJson from '../../cdk.json' with { type: 'json' };

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

export type Resources = Record<string, { Type: string; Properties?: any; DependsOn?: string[] }>;

export const resourcesOf = (template: Template, type: string): Resources => template.findResources(type) as Resources;

/** `GET /api/v2/runs/{run_id}/comments`: each method of the template as a route, ANY included. */
export function deployedMethods(
  template: Template,
): Array<{ method: string; path: string; logicalId: string; properties: any }> {
  const resources = resourcesOf(template, 'AWS::ApiGateway::Resource');
  const pathOf = (ref: any): string => {
    if (ref && typeof ref === 'object' && 'Fn::GetAtt' in ref) return ''; // the API's root resource
    const id = ref?.Ref as string;
    const resource = resources[id];
    if (!resource) throw new Error(`Unknown API resource ${JSON.stringify(ref)}`);
    return `${pathOf(resource.Properties.ParentId)}/${resource.Properties.PathPart}`;
  };
  return Object.entries(resourcesOf(template, 'AWS::ApiGateway::Method')).map(([logicalId, method]) => ({
    method: method.Properties.HttpMethod,
    path: pathOf(method.Properties.ResourceId),
    logicalId,
    properties: method.Properties,
  }));
}

export const underBase = (path: string) => `${API_BASE_PATH}${path}`;
