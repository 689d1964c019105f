import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Template } from 'aws-cdk-lib/assertions';
import { resourcesOf, templateOf } from './templates';

/**
 * Request bodies reach the functions as the client's bytes: the JSON types are binary media types
 * (API Gateway then base64-encodes the body for a Lambda proxy instead of decoding it as UTF-8, so a
 * body that is not UTF-8 can be refused rather than stored with U+FFFD), and the mocks, whose
 * payloads would become binary too, convert to text to keep their templates and text answers
 * ("Content type conversions in API Gateway").
 */
let template: Template;
beforeAll(async () => {
  template = await templateOf();
}, 120_000);

describe('request bodies', () => {
  it('declares the JSON:API and JSON media types binary on the REST API', () => {
    const [api] = Object.values(resourcesOf(template, 'AWS::ApiGateway::RestApi'));
    expect(new Set(api!.Properties.BinaryMediaTypes)).toEqual(
      new Set(['application/vnd.api+json', 'application/json']),
    );
  });

  it("converts every mock integration's request and response to text", () => {
    const mocks = Object.values(resourcesOf(template, 'AWS::ApiGateway::Method')).filter(
      (m) => m.Properties.Integration?.Type === 'MOCK',
    );
    expect(mocks.length).toBeGreaterThan(0);
    for (const {
      Properties: { Integration },
    } of mocks) {
      expect(Integration.ContentHandling).toBe('CONVERT_TO_TEXT');
      for (const response of Integration.IntegrationResponses) expect(response.ContentHandling).toBe('CONVERT_TO_TEXT');
    }
  });

  it('leaves the Lambda proxy integrations without a conversion: the function gets the base64 body and decodes it itself', () => {
    const proxies = Object.values(resourcesOf(template, 'AWS::ApiGateway::Method')).filter(
      (m) => m.Properties.Integration?.Type === 'AWS_PROXY',
    );
    expect(proxies.length).toBeGreaterThan(0);
    for (const {
      Properties: { Integration },
    } of proxies)
      expect(Integration.ContentHandling).toBeUndefined();
  });
});
