import { Stack, Validations } from 'aws-cdk-lib';
import type { IAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { CfnExperimentTemplate } from 'aws-cdk-lib/aws-fis';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { APP_NAME } from '#shared/config';

export interface GameDayProps {
  stage: string;
  /** This Region's replica of the global table. */
  table: ITableV2;
  /** Alarms of this Region that stop the experiment when they fire. */
  stopAlarms: readonly IAlarm[];
}

/** How long the replica stays cut off: long enough to see traffic leave (≤ 90 s) and settle. */
export const GAME_DAY_DURATION = 'PT10M';
/** AWS FIS's action, and the DynamoDB actions its role needs to apply and remove the pause (FIS actions reference). */
export const PAUSE_REPLICATION_ACTION = 'aws:dynamodb:global-table-pause-replication';
export const PAUSE_REPLICATION_TABLE_ACTIONS = [
  'dynamodb:DescribeTable',
  'dynamodb:GetResourcePolicy',
  'dynamodb:PutResourcePolicy',
  'dynamodb:DeleteResourcePolicy',
] as const;

/**
 * The game day of a multi-Region stage (docs/runbooks.md): an AWS Fault Injection Service
 * experiment template that pauses replication to and from this Region's replica for
 * GAME_DAY_DURATION. FIS does it with a resource policy on the replica that denies DynamoDB's
 * replication role; an MRSC replica then refuses writes and strongly consistent reads
 * (AccessDeniedException), so this Region's deep health route fails, Route 53 takes the Region out
 * of DNS and clients move to the others; when the pause ends, the Region serves again on its own.
 * Stopped early by `stopAlarms`. Its role may do exactly the pause, on this replica only.
 */
export class GameDay extends Construct {
  readonly template: CfnExperimentTemplate;
  readonly role: Role;

  constructor(scope: Construct, id: string, props: GameDayProps) {
    super(scope, id);
    const { account } = Stack.of(this);
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('fis.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': account } },
      }),
      description: `${APP_NAME} (${props.stage}): the game day's FIS experiment, pausing this Region's table replica`,
    });
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: [...PAUSE_REPLICATION_TABLE_ACTIONS],
        resources: [props.table.tableArn],
      }),
    );
    // FIS resolves its targets through the Resource Groups Tagging API, which has no resource-level permissions.
    this.role.addToPrincipalPolicy(new PolicyStatement({ actions: ['tag:GetResources'], resources: ['*'] }));
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'tag:GetResources (how FIS resolves an experiment\'s targets) supports no resource-level permissions (AWS service authorization reference): "*" is its only valid resource; every DynamoDB action is on the one replica.',
    });

    this.template = new CfnExperimentTemplate(this, 'Template', {
      description: `${APP_NAME} (${props.stage}): pause replication of this Region's replica for ${GAME_DAY_DURATION}; docs/runbooks.md, The game day`,
      roleArn: this.role.roleArn,
      targets: {
        Replica: {
          resourceType: 'aws:dynamodb:global-table',
          resourceArns: [props.table.tableArn],
          selectionMode: 'ALL',
        },
      },
      actions: {
        PauseReplication: {
          actionId: PAUSE_REPLICATION_ACTION,
          description:
            "Cut this Region's replica off from the global table: its writes and strongly consistent reads are refused",
          parameters: { duration: GAME_DAY_DURATION },
          targets: { Tables: 'Replica' },
        },
      },
      stopConditions:
        props.stopAlarms.length > 0
          ? props.stopAlarms.map((alarm) => ({ source: 'aws:cloudwatch:alarm', value: alarm.alarmArn }))
          : [{ source: 'none' }],
      experimentOptions: { accountTargeting: 'single-account', emptyTargetResolutionMode: 'fail' },
      tags: { Name: `${APP_NAME}-${props.stage}-game-day`, app: APP_NAME, stage: props.stage },
    });
  }
}
