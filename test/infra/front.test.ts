import { isIP } from 'node:net';
import { runInNewContext } from 'node:vm';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { CUSTOM_DOMAIN, templateOf, type Resources } from './templates';
import { CLIENT_IP_HEADER, CLOUDFRONT_ERROR_CODES } from '#infra/cdk/constructs/public-address';

/**
 * The edge as AWS runs it: CloudFront caches no error (one client's 403 or 503 is never another's),
 * and the per-address WAF limit bounds an IPv6 client by its /64, not by each of its addresses.
 */
let front: Resources;
let domain: Resources;
beforeAll(async () => {
  front = (await templateOf()).toJSON().Resources;
  domain = (await templateOf({ context: CUSTOM_DOMAIN })).toJSON().Resources;
}, 120_000);

const ofType = (resources: Resources, type: string) => Object.values(resources).filter((r) => r.Type === type);
const distributionConfig = () => ofType(front, 'AWS::CloudFront::Distribution')[0]!.Properties.DistributionConfig;

describe('CloudFront error caching', () => {
  it('is off for every 4xx and 5xx status CloudFront lets a distribution set, and nothing else is changed', () => {
    expect(distributionConfig().CustomErrorResponses).toEqual(
      [400, 403, 404, 405, 414, 416, 500, 501, 502, 503, 504].map((code) => ({
        ErrorCode: code,
        ErrorCachingMinTTL: 0,
      })),
    );
    // No ResponseCode or ResponsePagePath: the API's own JSON:API error reaches the client as it was sent.
  });

  it('covers every status the API answers that CloudFront would cache', () => {
    // The contract's error statuses (API-CONTRACT section 5), the gateway responses' and WAF's.
    const contract = [400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 429, 500, 502, 503, 504];
    const gateway = ofType(front, 'AWS::ApiGateway::GatewayResponse')
      .map((r) => Number(r.Properties.StatusCode))
      .filter(Boolean);
    const waf = (ofType(front, 'AWS::WAFv2::WebACL')[0]!.Properties.Rules as any[])
      .map((r) => r.Action?.Block?.CustomResponse?.ResponseCode)
      .filter(Boolean);
    const answered = new Set([...contract, ...gateway, ...waf]);
    const configurable = new Set<number>(CLOUDFRONT_ERROR_CODES);
    const covered = new Set(distributionConfig().CustomErrorResponses.map((r: { ErrorCode: number }) => r.ErrorCode));
    for (const status of answered)
      if (configurable.has(status)) expect({ status, covered: covered.has(status) }).toEqual({ status, covered: true });
    expect(gateway.length).toBeGreaterThan(10);
  });
});

describe('the per-address WAF limit and IPv6', () => {
  const clientKey = (ip: string, sent?: string): string => {
    const code = ofType(front, 'AWS::CloudFront::Function')[0]!.Properties.FunctionCode as string;
    const headers: Record<string, { value: string }> = sent
      ? { [CLIENT_IP_HEADER.toLowerCase()]: { value: sent } }
      : {};
    const request = runInNewContext(`${code}\nhandler(event);`, {
      event: { viewer: { ip }, request: { method: 'GET', uri: '/api/v2/ping', headers } },
    });
    return request.headers[CLIENT_IP_HEADER.toLowerCase()].value;
  };

  it('the front serves IPv6 viewers, so the bound matters', () => {
    expect(distributionConfig().IPV6Enabled).toBe(true);
  });

  it('keys an IPv6 viewer by its /64, in every way of writing the address; an IPv4 viewer by its address', () => {
    const cases: Array<[string, string]> = [
      ['203.0.113.7', '203.0.113.7'],
      ['2001:db8:85a3:8d3:1319:8a2e:370:7348', '2001:db8:85a3:8d3::'],
      ['2001:0db8:85a3:08d3:ffff:ffff:ffff:fffe', '2001:db8:85a3:8d3::'],
      ['2001:db8:85a3:8d3::1', '2001:db8:85a3:8d3::'],
      ['2001:db8::1', '2001:db8:0:0::'],
      ['2001:db8:1::', '2001:db8:1:0::'],
      ['2001:DB8:1:2:3:4:5:6', '2001:db8:1:2::'],
      ['::1', '0:0:0:0::'],
      ['64:ff9b::198.51.100.7', '64:ff9b:0:0::'],
      ['::ffff:198.51.100.7', '198.51.100.7'],
    ];
    for (const [viewer, key] of cases) {
      expect({ viewer, key: clientKey(viewer) }).toEqual({ viewer, key });
      // Still an address: WAF's FORWARDED_IP reads it (a malformed one would fall back to one shared bucket).
      expect(isIP(key)).not.toBe(0);
    }
    // Two addresses of one /64 are one bucket; the next /64 is another; a client cannot choose its key.
    expect(clientKey('2a01:4f8:c0c:1234::a')).toBe(clientKey('2a01:4f8:c0c:1234:dead:beef:0:1'));
    expect(clientKey('2a01:4f8:c0c:1235::a')).not.toBe(clientKey('2a01:4f8:c0c:1234::a'));
    expect(clientKey('2a01:4f8:c0c:1234::a', '10.0.0.1')).toBe('2a01:4f8:c0c:1234::');
  });

  it('the rule keys on that header; without the front, both ways in are IPv4 only', () => {
    const rules = ofType(front, 'AWS::WAFv2::WebACL')[0]!.Properties.Rules as any[];
    expect(rules.find((r) => r.Name === 'PerClientIpRateLimit').Statement.RateBasedStatement).toMatchObject({
      AggregateKeyType: 'FORWARDED_IP',
      ForwardedIPConfig: { HeaderName: CLIENT_IP_HEADER, FallbackBehavior: 'MATCH' },
    });
    // A custom domain's stage keys on the source address: public REST endpoints are IPv4 unless dualstack.
    for (const type of ['AWS::ApiGateway::RestApi', 'AWS::ApiGateway::DomainName']) {
      const [resource] = ofType(domain, type);
      expect({ type, ipAddressType: resource!.Properties.EndpointConfiguration?.IpAddressType ?? 'ipv4' }).toEqual({
        type,
        ipAddressType: 'ipv4',
      });
    }
  });
});
