import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { API_BASE_PATH } from '#shared/config';

/**
 * The synthesized template of the stack, made once per jest run whatever number of test files read
 * it. The infra project's global setup (test/support/global-setup-infra.ts) starts one process,
 * synthesize-templates.ts, that makes each template a file asks for, as `synthesize()` in synth.ts
 * makes it (cdk.json, the AWS Solutions checks, no bundling), and writes its JSON into the run's
 * scratch folder, where every file that asks for it reads it. A synth in a test file costs it
 * seconds of loading aws-cdk-lib and the constructs (each jest test file loads its modules anew);
 * that process loads them once. A template it could not make (its synth failed; there is no such
 * process, as when a file runs without that setup) is synthesized in the test file instead, so its
 * error is the test's. Tests that need the live App (cdk-nag's report, the bundles) call synthesize().
 */
export interface TemplateOptions {
  stage?: string;
  /** Settings, as `-c` adds them to cdk.json's context. */
  context?: Record<string, unknown>;
}

/** Where that process reads the requests and writes the templates: set for the test workers by the global setup. */
export const TEMPLATES_FOLDER_ENV = 'INFRA_TEMPLATES_FOLDER';
/** Written into the folder by the global setup once that process has exited. */
export const EXITED_MARKER = 'exited';

/** In the folder: `<key>.wanted` (the options, as JSON) asks for a template, `<key>.json` is it, `<key>.failed` its synth's error. */
export const templateKey = ({ stage = 'test', context = {} }: TemplateOptions): string =>
  createHash('sha256').update(JSON.stringify({ stage, context })).digest('hex').slice(0, 24);

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

const read = new Map<string, Promise<Template>>();

/** The template `synthesize(options)` makes (never bundled), synthesized once per jest run. */
export function templateOf(options: TemplateOptions = {}): Promise<Template> {
  const key = templateKey(options);
  let template = read.get(key);
  if (!template) {
    template = fromTheRun(key, options);
    read.set(key, template);
  }
  return template;
}

async function fromTheRun(key: string, options: TemplateOptions): Promise<Template> {
  const folder = process.env[TEMPLATES_FOLDER_ENV];
  if (folder) {
    const file = join(folder, `${key}.json`);
    if (!existsSync(file)) {
      // Written whole, then renamed into place: the process never reads half a request.
      const wanted = join(folder, `${key}.wanted`);
      writeFileSync(`${wanted}.${process.pid}`, JSON.stringify(options));
      renameSync(`${wanted}.${process.pid}`, wanted);
    }
    for (;;) {
      if (existsSync(file)) return Template.fromJSON(JSON.parse(readFileSync(file, 'utf8')));
      // Its synth failed, or the process is gone: the synth below fails the same way, in the test.
      if (existsSync(join(folder, `${key}.failed`)) || existsSync(join(folder, EXITED_MARKER))) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
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
