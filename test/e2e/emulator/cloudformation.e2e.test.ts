import { createServer } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { serve, echo } from './fixture-stacks';
import { startLocalStack } from '#infra/local/local-stack';
import { fixtureAssembly, type FixtureApi } from '../../support/fixture-assembly';

/**
 * CloudFormation (infra/local/aws/cloudformation.ts): what a template may hold, and the values
 * CloudFormation refuses, each stopping the start in one line. Each case runs on a hand-written
 * template that states exactly the configuration it exercises (fixture-stacks.ts).
 */
describe('values CloudFormation refuses stop the start in one line', () => {
  const withRule = (statement: Record<string, unknown>): FixtureApi => ({
    functions: { Echo: { code: echo } },
    methods: [{ method: 'GET', path: '/things', function: 'Echo' }],
    webAcl: {
      DefaultAction: { Allow: {} },
      Rules: [
        {
          Name: 'Rate',
          Priority: 0,
          Action: { Block: {} },
          Statement: { RateBasedStatement: { AggregateKeyType: 'IP', ...statement } },
          VisibilityConfig: {},
        },
      ],
    },
  });
  const withFunction = (properties: Record<string, unknown>): FixtureApi => ({
    functions: { Echo: { code: echo, properties } },
    methods: [{ method: 'GET', path: '/things', function: 'Echo' }],
  });

  const cases: Array<[FixtureApi, string]> = [
    [
      withRule({ Limit: 5, EvaluationWindowSec: 60 }),
      'WAF rule Rate: rate limit 5 is refused by WAF (10 to 2,000,000,000)',
    ],
    [
      withRule({ Limit: 100, EvaluationWindowSec: 30 }),
      'WAF rule Rate: evaluation window 30 s is refused by WAF (60, 120, 300 or 600)',
    ],
    [withFunction({ Timeout: 0 }), 'Lambda Echo: Timeout 0 is refused by Lambda (1 to 900 seconds)'],
    [withFunction({ MemorySize: 64 }), 'Lambda Echo: MemorySize 64 is refused by Lambda (128 to 10240 MB)'],
    [
      withFunction({ SnapStart: { ApplyOn: 'PublishedVersions' } }),
      'Lambda Echo: SnapStart not emulated by the local stack',
    ],
    [
      { ...withFunction({}), resources: { Url: { Type: 'AWS::Lambda::Url', Properties: {} } } },
      "The template's Url (AWS::Lambda::Url) is not emulated by the local stack",
    ],
  ];
  it.each(cases.map(([api, message]) => [message, api] as const))('%s', async (message, api) => {
    await expect(serve(api)).rejects.toThrow(new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
  });
});

describe('refusing to start', () => {
  // npm start prints the refusal after "npm start: ": what is refused comes first, a template setting or the port.
  it('names the port it could not take in its one line; a template refusal names the setting first', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    try {
      const assembly = fixtureAssembly({
        functions: { Echo: { code: echo } },
        methods: [{ method: 'GET', path: '/things', function: 'Echo' }],
      });
      const started = startLocalStack({
        assembly,
        port,
        dynamoDbEndpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB!,
        tableName: process.env.TABLE_NAME!,
        log: () => undefined,
      });
      await expect(started).rejects.toThrow(
        new RegExp(`^could not serve on 127\\.0\\.0\\.1:${port}: listen EADDRINUSE`),
      );
      assembly.remove();
    } finally {
      holder.close();
    }
    await expect(
      serve({
        functions: { Echo: { code: echo, properties: { SnapStart: { ApplyOn: 'PublishedVersions' } } } },
        methods: [{ method: 'GET', path: '/things', function: 'Echo' }],
      }),
    ).rejects.toThrow(/^Lambda Echo: SnapStart not emulated by the local stack$/);
  });
});
