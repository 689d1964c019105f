import { fromEnv } from '@aws-sdk/credential-provider-env';
import type { defaultProvider as nodeDefaultProvider } from '@aws-sdk/credential-provider-node';

/**
 * What the bundles take for `@aws-sdk/credential-provider-node`, the SDK's default credential
 * chain (esbuild `alias`, infra/cdk/constructs/bundling.ts). Lambda gives a function its execution
 * role's credentials in its environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_SESSION_TOKEN), and the chain takes them from there first, so its other sources (profiles and
 * the shared files, SSO, web identity, processes, the container and instance metadata endpoints,
 * with the STS and SSO clients they carry) never run in a function. Left out, a bundle is about 125 KB smaller and its cold
 * start 10 ms of CPU shorter (docs/performance.md). The local stack gives its functions
 * credentials the same way (infra/local/aws/iam.ts); the operator CLI, which is not bundled, keeps the
 * whole chain.
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
