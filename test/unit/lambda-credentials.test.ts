import { afterEach, describe, expect, it } from '@jest/globals';
import { defaultProvider } from '#infra/cdk/bundle-shims/lambda-credentials';

/** The credential chain the bundles carry in place of the SDK's (infra/cdk/bundle-shims/lambda-credentials.ts). */
const saved = { ...process.env };
afterEach(() => {
  process.env = { ...saved };
});

const useEnvironment = (variables: Record<string, string | undefined>) => {
  for (const name of [
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'AWS_PROFILE',
    'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  ])
    delete process.env[name];
  Object.assign(process.env, variables);
};

describe("the bundles' credentials", () => {
  it("are the execution role's, as Lambda puts them in the environment", async () => {
    useEnvironment({ AWS_ACCESS_KEY_ID: 'ASIAEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'session' });
    await expect(defaultProvider()()).resolves.toMatchObject({
      accessKeyId: 'ASIAEXAMPLE',
      secretAccessKey: 'secret',
      sessionToken: 'session',
    });
  });

  it('come from nowhere else: without them the first call fails, saying where they were looked for', async () => {
    // Sources the SDK's own chain would try: a profile, a container credentials endpoint.
    useEnvironment({ AWS_PROFILE: 'someone', AWS_CONTAINER_CREDENTIALS_FULL_URI: 'http://127.0.0.1:1/credentials' });
    await expect(defaultProvider()()).rejects.toThrow(
      /^no AWS credentials in the environment: a Lambda function gets its execution role's there/,
    );
  });
});
