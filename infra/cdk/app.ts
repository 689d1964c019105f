import { App } from 'aws-cdk-lib';
import { APP_NAME } from '#shared/config';
import { stageNameFrom } from './config';
import { addNagChecks } from './constructs/nag';
import { ApiStack, stackNameFor } from './stack';

/**
 * `npm run deploy [-- -c stage=prod]`. The stage comes from context `stage`, else the STAGE
 * environment variable, else `dev`; its settings from context (infra/cdk/config.ts); account and
 * region from the CLI's credentials and profile.
 */
const app = new App();
const stage = stageNameFrom(app.node);

new ApiStack(app, stackNameFor(stage), {
  stage,
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  // Stack tags: CloudFormation applies them to every resource it creates (explicitStackTags).
  tags: { app: APP_NAME, stage },
});

addNagChecks(app);
app.synth();
