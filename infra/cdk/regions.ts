import { Stack, type App, type StackProps } from 'aws-cdk-lib';
import { MultiRegionConsistency, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { APP_NAME } from '#shared/config';
import type { MultiRegion } from './config';
import { ApiStack, stackNameFor, tableProps } from './stack';

/** The global table's stack, in the first replica Region. */
export const tableStackNameFor = (stage: string) => `${stackNameFor(stage)}-table`;
/** One API stack per replica Region. */
export const regionalStackNameFor = (stage: string, region: string) => `${stackNameFor(stage)}-${region}`;
/** The global table's name, the same in every Region (replicas share it): the functions' TABLE_NAME. */
export const globalTableNameFor = (stage: string) => stackNameFor(stage);

export interface GlobalTableStackProps extends StackProps {
  stage: string;
  multiRegion: MultiRegion;
}

/**
 * The global table of a multi-Region stage: the single-Region table's keys, index, PITR, deletion
 * protection and retention (tableProps), a replica in each other replica Region, multi-Region
 * strong consistency (MRSC), and the witness when there is one. Created empty (MRSC starts from an
 * empty table), and its Regions and mode can never change: docs/deploying.md, Three Regions.
 */
export class GlobalTableStack extends Stack {
  readonly table: TableV2;
  readonly tableName: string;

  constructor(scope: Construct, id: string, props: GlobalTableStackProps) {
    super(scope, id, {
      description: `${APP_NAME} (${props.stage}): the global table (MRSC) of the multi-Region stage`,
      ...props,
    });
    const [home, ...others] = props.multiRegion.regions;
    if (this.region !== home)
      throw new Error(`The global table's stack belongs in ${home}, the first of regions, not ${this.region}`);
    this.tableName = globalTableNameFor(props.stage);
    this.table = new TableV2(this, 'Table', {
      ...tableProps(),
      tableName: this.tableName,
      replicas: others.map((region) => ({ region })),
      multiRegionConsistency: MultiRegionConsistency.STRONG,
      ...(props.multiRegion.witnessRegion ? { witnessRegion: props.multiRegion.witnessRegion } : {}),
    });
  }
}

export interface MultiRegionStage {
  table: GlobalTableStack;
  /** By Region, in the order of `regions`. */
  apis: Map<string, ApiStack>;
}

/**
 * A multi-Region stage: the table stack in the first replica Region, then an API stack in each
 * replica Region over its replica (each depends on the table stack, so `cdk deploy --all` makes
 * the table first). Every stack has its Region in its env; the account is the CLI's, if known.
 */
export function addMultiRegionStage(
  app: App,
  stage: string,
  multiRegion: MultiRegion,
  account = process.env.CDK_DEFAULT_ACCOUNT,
): MultiRegionStage {
  const tags = { app: APP_NAME, stage };
  const table = new GlobalTableStack(app, tableStackNameFor(stage), {
    stage,
    multiRegion,
    env: { account, region: multiRegion.regions[0] },
    tags,
  });
  const apis = new Map(
    multiRegion.regions.map((region) => [
      region,
      new ApiStack(app, regionalStackNameFor(stage, region), {
        stage,
        env: { account, region },
        tags,
        globalTable: { tableName: table.tableName, stack: table },
      }),
    ]),
  );
  return { table, apis };
}
