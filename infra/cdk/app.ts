import { App } from 'aws-cdk-lib';
import { APP_NAME } from '#shared/config';
import { ConfigError, stageConfigFrom, stageNameFrom } from './config';
import { addNagChecks } from './constructs/nag';
import { addMultiRegionStage } from './regions';
import { ApiStack, stackNameFor } from './stack';

/**
 * `npm run deploy [-- -c stage=prod]`. The stage comes from context `stage`, else the STAGE
 * environment variable, else `dev`; its settings from context (infra/cdk/config.ts); account and
 * region from the CLI's credentials and profile. A setting that cannot work stops the synth with
 * one line on stderr naming it and what it accepts (exit 1), never a stack trace. With context
 * `regions` (and `witnessRegion`), a multi-Region stage: a global table's stack and an API stack
 * per replica Region, each in its own Region whatever the CLI's (infra/cdk/regions.ts).
 */
try {
  // No synth on exit: after a refused setting, a half-built stack must not be synthesized.
  const app = new App({ autoSynth: false });
  const stage = stageNameFrom(app.node);
  const { multiRegion } = stageConfigFrom(app.node, stage);

  if (multiRegion) {
    addMultiRegionStage(app, stage, multiRegion);
  } else {
    new ApiStack(app, stackNameFor(stage), {
      stage,
      env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
      // Stack tags: CloudFormation applies them to every resource it creates (explicitStackTags).
      tags: { app: APP_NAME, stage },
    });
  }

  addNagChecks(app);
  app.synth();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exitCode = 1;
}
