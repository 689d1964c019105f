import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { API_BASE_PATH } from '#shared/config';

/**
 * The synthesized template of the stack, read once per jest run: the variants several test files
 * read (PRESYNTHESIZED) are synthesized by one process that the infra project's global setup starts
 * (test/support/global-setup-infra.ts runs synthesize-templates.ts), each as `synthesize()` in
 * synth.ts makes it (cdk.json, the AWS Solutions checks, no bundling), its JSON written into the
 * run's scratch folder. A file that reads one waits for it there instead of synthesizing the stack
 * itself: a synth in a test file costs it seconds of loading aws-cdk-lib and the constructs, where
 * that process pays them once. Any other variant, or one that process could not make (it failed,
 * or there is no such process: a file run without jest), is synthesized here, in the test file,
 * so its error is the test's. Tests that need the live App (cdk-nag's report, the bundles) call
 * synthesize() itself.
 */
export interface TemplateOptions {
  stage?: string;
  /** Settings, as `-c` adds them to cdk.json's context. */
  context?: Record<string, unknown>;
}

/** Where the global setup's process writes the templates: set for the test workers by that setup. */
export const TEMPLATES_FOLDER_ENV = 'INFRA_TEMPLATES_FOLDER';
/** Written into the folder by the global setup once that process has exited, whatever it made. */
export const EXITED_MARKER = 'exited';

/** A custom domain with its certificate: CloudFront stays out, API Gateway serves the host. */
export const CUSTOM_DOMAIN = {
  domainName: 'tfe.example.com',
  certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc-123',
};
/** A custom domain whose certificate the stack makes in a Route 53 hosted zone. */
export const HOSTED_ZONE = {
  domainName: 'tfe.example.com',
  hostedZoneId: 'Z0123456789ABCDEFGHIJ',
  hostedZoneName: 'example.com',
};

/** The variants more than one test file reads, or that spare a file synthesizing at all; most read first. */
export const PRESYNTHESIZED: TemplateOptions[] = [
  {},
  { context: CUSTOM_DOMAIN },
  { context: { ...CUSTOM_DOMAIN, disableExecuteApiEndpoint: 'true' } },
  { context: HOSTED_ZONE },
  { stage: 'local' },
];

/** A variant's file name: its stage and context, as JSON, made safe for a file name. */
export const templateFile = ({ stage = 'test', context = {} }: TemplateOptions): string =>
  `${Buffer.from(JSON.stringify({ stage, context })).toString('base64url')}.json`;

const presynthesized = new Set(PRESYNTHESIZED.map(templateFile));
const read = new Map<string, Promise<Template>>();

/** The template `synthesize(options)` makes (never bundled), synthesized once per jest run where it can be. */
export function templateOf(options: TemplateOptions = {}): Promise<Template> {
  const name = templateFile(options);
  let template = read.get(name);
  if (!template) {
    template = readOrSynthesize(name, options);
    read.set(name, template);
  }
  return template;
}

async function readOrSynthesize(name: string, options: TemplateOptions): Promise<Template> {
  const folder = process.env[TEMPLATES_FOLDER_ENV];
  if (folder && presynthesized.has(name)) {
    const file = join(folder, name);
    for (;;) {
      if (existsSync(file)) return Template.fromJSON(JSON.parse(readFileSync(file, 'utf8')));
      // Exited without it: it failed (its log in the folder says why), and the synth below fails the same way.
      if (existsSync(join(folder, EXITED_MARKER)) || existsSync(`${file}.failed`)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const { synthesize } = await import('./synth');
  return synthesize(options).template;
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
