import { Duration } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { APP_NAME } from '#shared/config';
import { EXPIRY_INDEX } from '#shared/store/expiry';
import {
  DEFAULT_MAX_DELETES,
  MAX_DELETES_ENV,
  SWEEP_INTERVAL_MINUTES,
  SWEEPER_FUNCTION,
  SWEEPER_TIMEOUT_SECONDS,
  SWEPT_PARTITIONS,
} from '#shared/sweeper';
import { ApiFunction } from './api-function';

export interface SweeperProps {
  table: ITableV2;
  /** Lambda memory in MB (the stage's `memorySize`, as every function's). */
  memorySize?: number;
  logRetention?: RetentionDays;
}

/**
 * The sweeper (functions/sweeper.ts): built and bundled as every function is (ApiFunction), run
 * every SWEEP_INTERVAL_MINUTES by an EventBridge rule, and allowed exactly what it does: Query the
 * Expiry index (its ARN: never the table), DeleteItem only in the partitions whose items expire.
 */
export class Sweeper extends Construct {
  readonly fn: ApiFunction;
  readonly rule: Rule;

  constructor(scope: Construct, id: string, props: SweeperProps) {
    super(scope, id);
    this.fn = new ApiFunction(this, 'Function', {
      name: SWEEPER_FUNCTION,
      table: props.table,
      // Each found item, by its key from the index, conditioned on its expiry (shared/store/sweep.ts).
      tableAccess: { actions: ['dynamodb:DeleteItem'], partitions: SWEPT_PARTITIONS },
      ...(props.memorySize === undefined ? {} : { memorySize: props.memorySize }),
      ...(props.logRetention === undefined ? {} : { logRetention: props.logRetention }),
      timeout: Duration.seconds(SWEEPER_TIMEOUT_SECONDS),
      environment: { [MAX_DELETES_ENV]: String(DEFAULT_MAX_DELETES) },
    });
    // A Query of an index is authorized on the index's ARN. Its key is a shard, not a table
    // partition, so dynamodb:LeadingKeys cannot bound it; the index holds keys only (KEYS_ONLY).
    this.fn.role!.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: [`${props.table.tableArn}/index/${EXPIRY_INDEX}`],
      }),
    );
    // A failed run is not retried by Lambda (twice, within minutes): the next scheduled run is the retry.
    this.fn.configureAsyncInvoke({ retryAttempts: 0 });
    this.rule = new Rule(this, 'Schedule', {
      description: `${APP_NAME}: runs functions/${SWEEPER_FUNCTION}.ts, which deletes expired items`,
      schedule: Schedule.rate(Duration.minutes(SWEEP_INTERVAL_MINUTES)),
      targets: [new LambdaFunction(this.fn)],
    });
  }
}
