import { fromEnv } from '@aws-sdk/credential-provider-env';
import type { defaultProvider as nodeDefaultProvider } from '@aws-sdk/credential-provider-node';

/**
 * What the bundles take for `@aws-sdk/credential-provider-node`, the SDK's default credential
 * chain (esbuild `alias`, infra/cdk/constructs/bundling.ts): the environment's credentials alone.
 * Lambda puts the execution role's there and the chain looks there first, so its other sources
 * (and the STS and SSO clients they carry) never run in a function, yet were most of a bundle's
 * size and lengthened its cold start (docs/performance.md). The local stack gives its functions
 * credentials the same way (infra/local/aws/iam.ts); the operator CLI, not bundled, keeps the chain.
 */
export const defaultProvider: typeof nodeDefaultProvider = (init = {}) => {
  const fromEnvironment = fromEnv(init);
  return async (properties) => {
    try {
      return await fromEnvironment(properties);
    } catch (error) {
      // fromEnv's own message says only that the variables are missing, not why that is fatal here.
      throw new Error(
        "no AWS credentials in the environment: a Lambda function gets its execution role's there (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN); this bundle reads no other source",
        { cause: error },
      );
    }
  };
};
