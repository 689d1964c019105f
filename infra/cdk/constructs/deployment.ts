import { Duration, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import {
  LambdaApplication,
  LambdaDeploymentConfig,
  LambdaDeploymentGroup,
  type ILambdaDeploymentConfig,
} from 'aws-cdk-lib/aws-codedeploy';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Alias, Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { APP_NAME } from '#shared/config';
import type { DeploymentConfigName } from '../config';
import { pascalCase } from './names';

/** The alias API Gateway invokes: CodeDeploy moves it from version to version. */
export const LIVE_ALIAS = 'live';

/**
 * The alarms CodeDeploy watches while it moves an alias, on the version being deployed only
 * (AWS/Lambda metrics of the alias by ExecutedVersion, the pattern of AWS's "Deploying serverless
 * applications gradually": https://docs.aws.amazon.com/serverless-application-model/latest/developerguide/automating-updates-to-serverless-apps.html).
 * One-minute periods, so a 5-minute canary sees them fire; two in a row, so one stray timeout
 * does not undo a good deploy.
 */
export const ROLLBACK_ALARMS = {
  period: Duration.minutes(1),
  evaluationPeriods: 2,
  /** Unhandled errors (crashes, timeouts: handled errors are 4xx/5xx answers, not errors) per minute. */
  errors: 1,
  /** p99 of the new version's Duration: far above a healthy request (docs/performance.md), under a stalled store call. */
  p99DurationMs: 2000,
} as const;

/** The runbook section a rollback alarm links to (docs/runbooks.md). */
export const ROLLBACK_RUNBOOK = 'rolling-back-a-bad-deploy';

/** CodeDeploy's predefined Lambda configurations, by name. */
const PREDEFINED: Record<DeploymentConfigName, ILambdaDeploymentConfig> = {
  LambdaAllAtOnce: LambdaDeploymentConfig.ALL_AT_ONCE,
  LambdaCanary10Percent5Minutes: LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
  LambdaCanary10Percent10Minutes: LambdaDeploymentConfig.CANARY_10PERCENT_10MINUTES,
  LambdaCanary10Percent15Minutes: LambdaDeploymentConfig.CANARY_10PERCENT_15MINUTES,
  LambdaCanary10Percent30Minutes: LambdaDeploymentConfig.CANARY_10PERCENT_30MINUTES,
  LambdaLinear10PercentEvery1Minute: LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_1MINUTE,
  LambdaLinear10PercentEvery2Minutes: LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_2MINUTES,
  LambdaLinear10PercentEvery3Minutes: LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_3MINUTES,
  LambdaLinear10PercentEvery10Minutes: LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_10MINUTES,
};

export interface DeploymentsProps {
  /** Every function the API invokes (the authorizer too), by its handler file name. */
  functions: ReadonlyMap<string, LambdaFunction>;
  deploymentConfig: DeploymentConfigName;
  /** Where docs/runbooks.md is read (context `runbookUrl`). */
  runbookUrl: string;
}

/**
 * Safe deploys: each function is published as a version (its `currentVersion`, a new one whenever
 * its code or configuration changes) behind the `live` alias, which is what API Gateway invokes.
 * A deploy moves the alias through CodeDeploy (the alias's CodeDeployLambdaAliasUpdate update
 * policy): all at once, or canary / linear per the stage's `deploymentConfig`, rolling back on its
 * own if the new version's error or latency alarm fires, or if the deployment fails or is stopped.
 */
export class Deployments extends Construct {
  /** The `live` alias of each function, by handler file name. */
  readonly aliases = new Map<string, Alias>();
  readonly groups = new Map<string, LambdaDeploymentGroup>();
  /** The rollback alarms, two per function. */
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: DeploymentsProps) {
    super(scope, id);
    const application = new LambdaApplication(this, 'Application');
    // One service role for every group, with the policy AWS documents for Lambda deployments
    // (https://docs.aws.amazon.com/codedeploy/latest/userguide/getting-started-create-service-role.html).
    const role = new Role(this, 'ServiceRole', {
      assumedBy: new ServicePrincipal('codedeploy.amazonaws.com'),
      description: `${APP_NAME}: CodeDeploy moves the functions' ${LIVE_ALIAS} aliases and reads their rollback alarms`,
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSCodeDeployRoleForLambdaLimited')],
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      reason:
        "CodeDeploy's own service role for Lambda deployments: AWS's managed policy is the documented one (alias get/update, alarm reads, its own hook functions), and CodeDeploy, not our code, assumes it.",
    });
    const deploymentConfig = PREDEFINED[props.deploymentConfig];

    for (const [name, fn] of props.functions) {
      const alias = fn.addAlias(LIVE_ALIAS, {
        description: `${APP_NAME}: what API Gateway invokes; CodeDeploy moves it`,
      });
      const version = fn.currentVersion.version;
      const metric = (metricName: string, statistic: string) =>
        new Metric({
          namespace: 'AWS/Lambda',
          metricName,
          // Invocations through the alias, of the version being deployed.
          dimensionsMap: {
            FunctionName: fn.functionName,
            Resource: `${fn.functionName}:${LIVE_ALIAS}`,
            ExecutedVersion: version,
          },
          statistic,
          period: ROLLBACK_ALARMS.period,
        });
      const alarm = (
        suffix: string,
        what: string,
        options: { metric: Metric; threshold: number; comparisonOperator: ComparisonOperator },
      ) => {
        const created = new Alarm(this, `${pascalCase(name)}Rollback${suffix}`, {
          ...options,
          evaluationPeriods: ROLLBACK_ALARMS.evaluationPeriods,
          datapointsToAlarm: ROLLBACK_ALARMS.evaluationPeriods,
          treatMissingData: TreatMissingData.NOT_BREACHING,
          alarmDescription: `functions/${name}.ts, the version being deployed: ${what} in ${ROLLBACK_ALARMS.evaluationPeriods} minutes in a row; CodeDeploy rolls the deploy back. Runbook: ${props.runbookUrl}#${ROLLBACK_RUNBOOK}`,
        });
        this.alarms.push(created);
        return created;
      };
      const errors = alarm('Errors', `${ROLLBACK_ALARMS.errors}+ unhandled errors or timeouts a minute`, {
        metric: metric('Errors', 'Sum'),
        threshold: ROLLBACK_ALARMS.errors,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
      const latency = alarm('Latency', `p99 duration above ${ROLLBACK_ALARMS.p99DurationMs} ms`, {
        metric: metric('Duration', 'p99'),
        threshold: ROLLBACK_ALARMS.p99DurationMs,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      });
      // The alarms watch the new version before the alias starts moving to it.
      alias.node.addDependency(errors, latency);

      this.groups.set(
        name,
        new LambdaDeploymentGroup(this, `${pascalCase(name)}Deployment`, {
          application,
          alias,
          deploymentConfig,
          role,
          alarms: [errors, latency],
          autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
        }),
      );
      this.aliases.set(name, alias);
    }
  }

  /** Rollback alarms (and their recovery) are sent to the stage's alarm topic, as every alarm is. */
  notify(topic: ITopic): void {
    const action = new SnsAction(topic);
    for (const alarm of this.alarms) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
  }
}
