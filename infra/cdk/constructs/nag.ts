import { Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';

/**
 * AWS Solutions checks on every synth: a finding that is not acknowledged (next to the resource,
 * with its reason) fails `cdk synth` and `cdk deploy`. cdk-nag 3 is a policy-validation plugin.
 */
export function addNagChecks(app: App): AwsSolutionsChecks {
  const checks = new AwsSolutionsChecks(app, { verbose: true });
  Validations.of(app).addPlugins(checks);
  return checks;
}
