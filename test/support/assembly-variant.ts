import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { APP_NAME } from '#shared/config';
import { ensureAssembly, PROJECT_ROOT, type Assembly } from '#infra/local/assembly';

export type TemplateResources = Record<string, { Type: string; Properties?: any }>;

/**
 * The run's `local` assembly (synthesized once by global-setup-e2e.ts) with its template changed by
 * `change`, and the same bundles, read from where the local assembly keeps them: a variant of the
 * stack costs a test file no synth and no bundling. In a folder of its own under cdk.out/ (so the
 * bundles resolve the project's packages, as the local assembly's do); `remove()` deletes it.
 */
export async function localAssemblyVariant(
  name: string,
  change: (resources: TemplateResources) => void,
): Promise<Assembly & { remove(): void }> {
  const source = await ensureAssembly();
  const read = (file: string) => JSON.parse(readFileSync(join(source.directory, file), 'utf8'));
  const template = read(`${source.stackName}.template.json`) as { Resources: TemplateResources };
  change(template.Resources);
  const directory = join(PROJECT_ROOT, 'cdk.out', 'fixtures', `${name}-${process.pid}`);
  mkdirSync(directory, { recursive: true });
  const assets = read(`${source.stackName}.assets.json`) as { files: Record<string, { source: { path: string } }> };
  for (const file of Object.values(assets.files))
    file.source.path = relative(directory, join(source.directory, file.source.path));
  writeFileSync(join(directory, `${source.stackName}.template.json`), JSON.stringify(template));
  writeFileSync(join(directory, `${source.stackName}.assets.json`), JSON.stringify(assets));
  return {
    directory,
    stackName: source.stackName,
    synthesized: false,
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}

/** The local assembly with the DynamoDB statements of these functions' roles taken away: their every store call is denied. */
export const withoutTableGrants = (name: string, functionNames: string[]) =>
  localAssemblyVariant(name, (resources) => {
    const all = Object.values(resources);
    const roles = functionNames.map((functionName) => {
      const fn = all.find(
        (r) =>
          r.Type === 'AWS::Lambda::Function' &&
          r.Properties.Description === `${APP_NAME}: functions/${functionName}.ts`,
      );
      if (!fn) throw new Error(`The local assembly has no function for functions/${functionName}.ts`);
      return fn.Properties.Role['Fn::GetAtt'][0] as string;
    });
    const onTable = (statement: { Action: string | string[] }) =>
      [statement.Action].flat().some((action) => action.startsWith('dynamodb:'));
    let removed = 0;
    for (const policy of all.filter((r) => r.Type === 'AWS::IAM::Policy')) {
      if (!policy.Properties.Roles.some((role: { Ref?: string }) => roles.includes(role.Ref!))) continue;
      const statements = policy.Properties.PolicyDocument.Statement as Array<{ Action: string | string[] }>;
      removed += statements.filter(onTable).length;
      policy.Properties.PolicyDocument.Statement = statements.filter((statement) => !onTable(statement));
    }
    if (removed === 0) throw new Error(`No table grant of ${functionNames.join(', ')} in the local assembly`);
  });
