import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { IAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { CfnExperimentTemplate } from 'aws-cdk-lib/aws-fis';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  type Architecture,
  type Function as LambdaFunction,
  type ILayerVersion,
  LayerVersion,
} from 'aws-cdk-lib/aws-lambda';
import { BlockPublicAccess, Bucket, BucketEncryption, type CfnBucket } from 'aws-cdk-lib/aws-s3';
import { StringParameter } from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import { APP_NAME } from '#shared/config';

export interface GameDayProps {
  stage: string;
  /** This Region's replica of the global table. */
  table: ITableV2;
  /** Every function of this Region's API stack (the routes', the authorizer, the sweeper): what "stop the functions" stops. */
  functions: readonly LambdaFunction[];
  /** Alarms of this Region that stop the experiment when they fire. */
  stopAlarms: readonly IAlarm[];
}

/** How long each fault lasts: long enough to see traffic leave (≤ 90 s, after the fault takes hold) and settle. */
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
 * FIS's Lambda fault, as the second experiment uses it: every invocation (100%) of every targeted
 * function fails without running the function (`preventExecution`), for GAME_DAY_DURATION.
 */
export const STOP_FUNCTIONS_ACTION = 'aws:lambda:invocation-error';
export const STOP_FUNCTIONS_PARAMETERS = {
  duration: GAME_DAY_DURATION,
  invocationPercentage: '100',
  preventExecution: 'true',
} as const;
/**
 * AWS's FIS extension for Lambda ("Use the AWS FIS aws:lambda:function actions", FIS user guide):
 * a layer (its ARN per Region and architecture in AWS's public SSM parameters), a wrapper that puts
 * it in front of the runtime, and an S3 prefix of the Region where FIS writes the fault of a
 * running experiment and the extension reads it.
 */
export const FIS_EXTENSION = {
  /** The public SSM parameter holding the latest 1.x layer ARN for `architecture` ("arm64", "x86_64"). */
  parameter: (architecture: string) => `/aws/service/fis/lambda-extension/AWS-FIS-extension-${architecture}/1.x.x`,
  configPrefix: 'FisConfigs/',
  configLocationEnv: 'AWS_FIS_CONFIGURATION_LOCATION',
  wrapperEnv: 'AWS_LAMBDA_EXEC_WRAPPER',
  wrapper: '/opt/aws-fis/bootstrap',
} as const;
/** What the experiment's role does with the fault configurations, and to find the functions' configuration location. */
export const STOP_FUNCTIONS_BUCKET_ACTIONS = ['s3:PutObject', 's3:DeleteObject'] as const;
export const STOP_FUNCTIONS_FUNCTION_ACTIONS = ['lambda:GetFunction'] as const;
/** A fault configuration outlives no experiment (FIS deletes it when the action ends); this removes any left behind. */
export const FAULT_CONFIG_EXPIRY_DAYS = 1;

/**
 * The game day of a multi-Region stage (docs/runbooks.md): two AWS Fault Injection Service
 * experiment templates, one fault each, so an operator runs either.
 *
 * - Pause replication (`template`): for GAME_DAY_DURATION, replication to and from this Region's
 *   replica stops. FIS does it with a resource policy on the replica that denies DynamoDB's
 *   replication role; an MRSC replica then refuses writes and strongly consistent reads
 *   (AccessDeniedException), so this Region's deep health route fails, Route 53 takes the Region
 *   out of DNS and clients move to the others; when the pause ends, the Region serves again on its
 *   own. Its role may do exactly the pause, on this replica only.
 * - Stop the functions (`stopFunctions`): for GAME_DAY_DURATION, every invocation of every function
 *   of this Region fails without running (`aws:lambda:invocation-error`, preventExecution): the
 *   Region's compute is lost while its replica stays whole. It needs AWS's FIS extension on each
 *   function (a layer, a wrapper, and a fault-configuration prefix in a bucket of this Region),
 *   which is attached here, so only a stage with a game day pays its cold start and polling. Its
 *   role may write fault configurations in this Region's bucket and read this Region's functions.
 *
 * Both are stopped early by `stopAlarms`.
 */
export class GameDay extends Construct {
  /** Pause replication of this Region's replica. */
  readonly template: CfnExperimentTemplate;
  readonly role: Role;
  /** Stop every function of this Region. */
  readonly stopFunctions: { template: CfnExperimentTemplate; role: Role };
  /** Where FIS writes the Lambda faults for the extension to read (FIS_EXTENSION.configPrefix). */
  readonly faultConfigs: Bucket;

  constructor(scope: Construct, id: string, props: GameDayProps) {
    super(scope, id);
    const stopConditions =
      props.stopAlarms.length > 0
        ? props.stopAlarms.map((alarm) => ({ source: 'aws:cloudwatch:alarm', value: alarm.alarmArn }))
        : [{ source: 'none' }];
    const tags = (fault: string) => ({
      Name: `${APP_NAME}-${props.stage}-${fault}`,
      app: APP_NAME,
      stage: props.stage,
    });

    this.role = this.experimentRole(
      'Role',
      `${APP_NAME} (${props.stage}): the game day's FIS experiment, pausing this Region's table replica`,
      [new PolicyStatement({ actions: [...PAUSE_REPLICATION_TABLE_ACTIONS], resources: [props.table.tableArn] })],
    );
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
      stopConditions,
      experimentOptions: { accountTargeting: 'single-account', emptyTargetResolutionMode: 'fail' },
      tags: tags('game-day'),
    });

    // One bucket per Region (FIS requires the configuration location in the experiment's Region).
    this.faultConfigs = new Bucket(this, 'FaultConfigs', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: BucketEncryption.S3_MANAGED,
      lifecycleRules: [
        {
          id: 'ExpireFaultConfigs',
          expiration: Duration.days(FAULT_CONFIG_EXPIRY_DAYS),
          abortIncompleteMultipartUploadAfter: Duration.days(FAULT_CONFIG_EXPIRY_DAYS),
        },
      ],
      // Empty but during an experiment: a stage's removal deletes it (a leftover expires within a day).
      removalPolicy: RemovalPolicy.DESTROY,
    });
    Validations.of(this.faultConfigs).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        "The bucket holds only AWS FIS's fault configurations for the game day, written by the experiment's role and read by this Region's functions; each experiment is itself recorded (FIS experiment history, CloudTrail), and nothing else is stored or served from it.",
    });
    const configs = this.faultConfigs.arnForObjects(`${FIS_EXTENSION.configPrefix}*`);
    for (const fn of props.functions) this.attachExtension(fn, configs);

    const stopRole = this.experimentRole(
      'StopFunctionsRole',
      `${APP_NAME} (${props.stage}): the game day's FIS experiment, stopping this Region's functions`,
      [
        new PolicyStatement({ actions: [...STOP_FUNCTIONS_BUCKET_ACTIONS], resources: [configs] }),
        // FIS reads each target's configuration (its AWS_FIS_CONFIGURATION_LOCATION): these functions only.
        new PolicyStatement({
          actions: [...STOP_FUNCTIONS_FUNCTION_ACTIONS],
          resources: props.functions.map((fn) => fn.functionArn),
        }),
      ],
    );
    Validations.of(stopRole).acknowledge({
      id: this.configsFinding(),
      reason:
        "FIS writes and deletes one fault configuration per function and experiment, under names it chooses, in this Region's bucket: the prefix is the narrowest resource (FIS user guide, Use the AWS FIS aws:lambda:function actions).",
    });
    this.stopFunctions = {
      role: stopRole,
      template: new CfnExperimentTemplate(this, 'StopFunctionsTemplate', {
        description: `${APP_NAME} (${props.stage}): stop every function of this Region (each invocation fails, none runs) for ${GAME_DAY_DURATION}; docs/runbooks.md, The game day`,
        roleArn: stopRole.roleArn,
        targets: {
          Functions: {
            resourceType: 'aws:lambda:function',
            resourceArns: props.functions.map((fn) => fn.functionArn),
            selectionMode: 'ALL',
          },
        },
        actions: {
          StopFunctions: {
            actionId: STOP_FUNCTIONS_ACTION,
            description:
              "Fail every invocation of this Region's functions without running them: the Region's compute is lost, its replica is not",
            parameters: { ...STOP_FUNCTIONS_PARAMETERS },
            targets: { Functions: 'Functions' },
          },
        },
        stopConditions,
        experimentOptions: { accountTargeting: 'single-account', emptyTargetResolutionMode: 'fail' },
        tags: tags('game-day-stop-functions'),
      }),
    };
  }

  /** A role FIS assumes for this account's experiments: `statements`, and tag:GetResources (how FIS resolves targets). */
  private experimentRole(id: string, description: string, statements: PolicyStatement[]): Role {
    const role = new Role(this, id, {
      assumedBy: new ServicePrincipal('fis.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
      description,
    });
    for (const statement of statements) role.addToPrincipalPolicy(statement);
    // FIS resolves its targets through the Resource Groups Tagging API, which has no resource-level permissions.
    role.addToPrincipalPolicy(new PolicyStatement({ actions: ['tag:GetResources'], resources: ['*'] }));
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'tag:GetResources (how FIS resolves an experiment\'s targets) supports no resource-level permissions (AWS service authorization reference): "*" is its only valid resource; every other action names this Region\'s resources.',
    });
    return role;
  }

  /**
   * AWS's FIS extension on `fn`: the layer for its architecture, the wrapper, the configuration
   * location, and its role allowed to list and read the fault configurations (and nothing else of
   * the bucket). With no experiment running, the extension finds nothing and the function runs.
   */
  private attachExtension(fn: LambdaFunction, configs: string): void {
    fn.addLayers(this.extensionLayer(fn.architecture));
    fn.addEnvironment(FIS_EXTENSION.configLocationEnv, this.faultConfigs.arnForObjects(FIS_EXTENSION.configPrefix));
    fn.addEnvironment(FIS_EXTENSION.wrapperEnv, FIS_EXTENSION.wrapper);
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [this.faultConfigs.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${FIS_EXTENSION.configPrefix}*`] } },
      }),
    );
    fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:GetObject'], resources: [configs] }));
    Validations.of(fn.role!).acknowledge({
      id: this.configsFinding(),
      reason:
        "AWS's FIS extension reads the fault configurations FIS writes under the prefix, named by FIS per experiment: GetObject on the prefix of this Region's bucket is the narrowest grant (FIS user guide).",
    });
  }

  /** cdk-nag's finding for a grant on every fault configuration (the bucket's prefix, a wildcard). */
  private configsFinding(): string {
    const bucket = Stack.of(this).getLogicalId(this.faultConfigs.node.defaultChild as CfnBucket);
    return `AwsSolutions-IAM5[Resource::<${bucket}.Arn>/${FIS_EXTENSION.configPrefix}*]`;
  }

  /** The extension's layer for an architecture, its ARN resolved at deploy time from AWS's public parameter in this Region. */
  private extensionLayer(architecture: Architecture): ILayerVersion {
    const id = `FisExtension${architecture.name.replace(/[^A-Za-z0-9]/g, '')}`;
    return (
      (this.node.tryFindChild(id) as ILayerVersion | undefined) ??
      LayerVersion.fromLayerVersionArn(
        this,
        id,
        StringParameter.valueForStringParameter(this, FIS_EXTENSION.parameter(architecture.name)),
      )
    );
  }
}
