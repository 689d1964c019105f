import { App, Tags } from 'aws-cdk-lib';
import { APP_NAME } from '#shared/config';
import { addNagChecks } from './constructs/nag';
import { ApiStack, DEFAULT_STAGE, stackNameFor } from './stack';

/**
 * `npm run deploy [-- -c stage=prod]`. The stage comes from context `stage`, else the STAGE
 * environment variable, else `dev`; account and region from the CLI's credentials and profile.
 */
const app = new App();
const stage = String(app.node.tryGetContext('stage') ?? process.env.STAGE ?? DEFAULT_STAGE);
const alarmEmail = app.node.tryGetContext('alarmEmail') as string | undefined;

const stack = new ApiStack(app, stackNameFor(stage), {
  stage,
  ...(alarmEmail ? { alarmEmail } : {}),
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
Tags.of(stack).add('app', APP_NAME);
Tags.of(stack).add('stage', stage);

addNagChecks(app);
app.synth();
