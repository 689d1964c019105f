import { Duration, Stack, Validations } from 'aws-cdk-lib';
import { type CfnStage, DomainName, EndpointType, SecurityPolicy, type Stage } from 'aws-cdk-lib/aws-apigateway';
import { Certificate, CertificateValidation, type ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  Function as CloudFrontFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  OriginSslPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { ARecord, CnameRecord, HostedZone, RecordTarget, type IHealthCheck } from 'aws-cdk-lib/aws-route53';
import { ApiGatewayDomain } from 'aws-cdk-lib/aws-route53-targets';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { APP_NAME } from '#shared/config';
import { PUBLIC_ADDRESS_VARIABLE } from '#shared/http/public-address';
import type { FrontHeaders } from './waf';

/** A custom domain for the API: its certificate (regional, in the stack's region) or the Route 53 zone to make one in. */
export interface CustomDomain {
  domainName: string;
  certificateArn?: string | undefined;
  hostedZone?: { hostedZoneId: string; zoneName: string } | undefined;
  /**
   * One Region of several serving the same name (a multi-Region stage): instead of the alias, a
   * latency record of this Region (a CNAME to its regional domain, with this TTL), answered only
   * while its health check passes.
   */
  latency?: { region: string; healthCheck: IHealthCheck; ttl: Duration } | undefined;
}

export interface PublicAddressProps {
  stage: Stage;
  /** The custom domain; without one, a CloudFront distribution gives the API a host of its own. */
  domain?: CustomDomain | undefined;
}

/** The front's proof that a request came through it, and where it puts the viewer's address. */
export const ORIGIN_VERIFY_HEADER = 'X-Tfe-Origin-Verify';
export const CLIENT_IP_HEADER = 'X-Tfe-Client-Ip';

/**
 * CloudFront Functions (cloudfront-js-2.0), viewer request: the viewer's address in a header the
 * origin can trust, overwriting whatever the client sent in it. An IPv6 viewer is given as its /64
 * network (`2001:db8:1:2::`): one subscriber holds a whole /64 (RFC 6177; SLAAC needs one) and can
 * use a new address per request, and WAF's rate-based rules key on whole addresses, with no prefix
 * aggregation (its keys: IP, forwarded IP, ASN, headers and other request parts). The /64 written
 * as an address is still an address, so the per-address rule (FORWARDED_IP on this header) keys
 * every address of that /64 into one bucket.
 */
export const CLIENT_IP_FUNCTION = `function handler(event) {
  var request = event.request;
  request.headers['${CLIENT_IP_HEADER.toLowerCase()}'] = { value: clientKey(event.viewer.ip) };
  return request;
}
function clientKey(ip) {
  if (ip.indexOf(':') === -1) return ip;
  var mapped = /^::ffff:(\\d+\\.\\d+\\.\\d+\\.\\d+)$/i.exec(ip);
  if (mapped) return mapped[1];
  var halves = ip.split('::');
  var head = halves[0] === '' ? [] : halves[0].split(':');
  var tail = halves.length > 1 && halves[1] !== '' ? halves[1].split(':') : [];
  var zeros = [];
  if (halves.length > 1) {
    var written = head.length + tail.length + (ip.indexOf('.') === -1 ? 0 : 1);
    for (var i = written; i < 8; i++) zeros.push('0');
  }
  return head.concat(zeros, tail).slice(0, 4).map(function (g) { return parseInt(g, 16).toString(16); }).join(':') + '::';
}`;

/**
 * Every 4xx and 5xx status for which CloudFront takes an error-caching setting (CustomErrorResponse
 * ErrorCode: https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/custom-error-pages-expiration.html).
 * CloudFront caches GET error responses for 10 s by default whatever Cache-Control says, with a
 * cache key of the path alone here: one client's 403 or 503 would be served to every client of
 * the path. A minimum TTL of 0 for each turns that off (416 is never cached; set for completeness).
 */
export const CLOUDFRONT_ERROR_CODES = [400, 403, 404, 405, 414, 416, 500, 501, 502, 503, 504] as const;

/**
 * The address clients are given, `https://HOST` with the API at the root of HOST: go-tfe,
 * python-tfe and Terraform keep only the host (docs/design.md, decision 11). With a custom domain,
 * an API Gateway regional custom domain mapped at its root (a Route 53 alias when the zone is
 * given); without, a CloudFront distribution before the stage, caching off, that adds the viewer's
 * address and a per-deployment secret WAF requires, so calling execute-api directly does not get
 * around the per-address limit. Either way the functions build links from the stage variable
 * `publicAddress` (a variable: no Stage → Distribution → RestApi cycle).
 */
export class PublicAddress extends Construct {
  /** `https://HOST`: what go-tfe's Address, python-tfe's url and `https://` + Terraform's hostname are. */
  readonly url: string;
  /** The headers the WAF rules trust, when the front is the way in. */
  readonly front: FrontHeaders | undefined;
  readonly distribution: Distribution | undefined;
  readonly customDomain: DomainName | undefined;

  constructor(scope: Construct, id: string, props: PublicAddressProps) {
    super(scope, id);
    if (props.domain) {
      this.customDomain = this.addCustomDomain(props.stage, props.domain);
      this.url = `https://${props.domain.domainName}`;
      this.front = undefined;
      this.distribution = undefined;
    } else {
      const secret = new Secret(this, 'OriginSecret', {
        description: `${APP_NAME}: the value CloudFront sends in ${ORIGIN_VERIFY_HEADER}; WAF blocks stage requests without it`,
        generateSecretString: { excludePunctuation: true, includeSpace: false, passwordLength: 48 },
      });
      Validations.of(secret).acknowledge({
        id: 'AwsSolutions-SMG4',
        reason:
          'A shared value between CloudFront and WAF, both set from it at deploy time: rotating it means a deploy (README, Deploy), which an automatic rotation would not make.',
      });
      this.front = {
        originVerifyHeader: ORIGIN_VERIFY_HEADER,
        // A CloudFormation dynamic reference: resolved at deploy time, never in the template.
        originSecret: secret.secretValue.unsafeUnwrap(),
        clientIpHeader: CLIENT_IP_HEADER,
      };
      this.distribution = this.addFront(props.stage, this.front);
      this.url = `https://${this.distribution.distributionDomainName}`;
      this.customDomain = undefined;
    }
    (props.stage.node.defaultChild as CfnStage).variables = { [PUBLIC_ADDRESS_VARIABLE]: this.url };
  }

  private addCustomDomain(stage: Stage, domain: CustomDomain): DomainName {
    const zone = domain.hostedZone ? HostedZone.fromHostedZoneAttributes(this, 'Zone', domain.hostedZone) : undefined;
    let certificate: ICertificate;
    if (domain.certificateArn) {
      certificate = Certificate.fromCertificateArn(this, 'Certificate', domain.certificateArn);
    } else if (zone) {
      certificate = new Certificate(this, 'Certificate', {
        domainName: domain.domainName,
        validation: CertificateValidation.fromDns(zone),
      });
    } else {
      throw new Error(
        `domainName ${domain.domainName} needs certificateArn, or hostedZoneId and hostedZoneName to create a certificate in`,
      );
    }
    const customDomain = new DomainName(this, 'Domain', {
      domainName: domain.domainName,
      certificate,
      endpointType: EndpointType.REGIONAL,
      securityPolicy: SecurityPolicy.TLS_1_2,
    });
    // No base path: the API at the root of the domain, /api/v2 right under it.
    customDomain.addBasePathMapping(stage.restApi, { stage });
    if (zone && domain.latency) {
      // A CNAME, not an alias: an alias record's TTL is the target's, and the RTO counts this one.
      new CnameRecord(this, 'LatencyRecord', {
        zone,
        recordName: domain.domainName,
        domainName: customDomain.domainNameAliasDomainName,
        region: domain.latency.region,
        setIdentifier: domain.latency.region,
        healthCheck: domain.latency.healthCheck,
        ttl: domain.latency.ttl,
      });
    } else if (zone) {
      new ARecord(this, 'AliasRecord', {
        zone,
        recordName: domain.domainName,
        target: RecordTarget.fromAlias(new ApiGatewayDomain(customDomain)),
      });
    }
    return customDomain;
  }

  private addFront(stage: Stage, front: FrontHeaders): Distribution {
    const { region, urlSuffix } = Stack.of(this);
    // The literal name: `stage.stageName` is a reference to the stage, which refers back to the front.
    const stageName = (stage.node.defaultChild as CfnStage).stageName!;
    const clientIp = new CloudFrontFunction(this, 'ClientIpFunction', {
      runtime: FunctionRuntime.JS_2_0,
      code: FunctionCode.fromInline(CLIENT_IP_FUNCTION),
      comment: `${APP_NAME}: the viewer's IP in ${CLIENT_IP_HEADER}, for the per-address WAF rule`,
    });
    const distribution = new Distribution(this, 'Front', {
      comment: `${APP_NAME} (${stageName}): the API at the root of a host`,
      httpVersion: HttpVersion.HTTP2_AND_3,
      defaultBehavior: {
        origin: new HttpOrigin(`${stage.restApi.restApiId}.execute-api.${region}.${urlSuffix}`, {
          originPath: `/${stageName}`,
          protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
          originSslProtocols: [OriginSslPolicy.TLS_V1_2],
          customHeaders: { [front.originVerifyHeader]: front.originSecret },
        }),
        allowedMethods: AllowedMethods.ALLOW_ALL,
        // Every answer is per token and per request: nothing is cached.
        cachePolicy: CachePolicy.CACHING_DISABLED,
        // Authorization, Content-Type, Accept and the query string reach the API; Host is the origin's.
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        // A redirect would turn a client's POST into a GET: plain HTTP is refused instead.
        viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
        functionAssociations: [{ function: clientIp, eventType: FunctionEventType.VIEWER_REQUEST }],
      },
      // No error is cached: each client gets its own answer (see CLOUDFRONT_ERROR_CODES).
      errorResponses: CLOUDFRONT_ERROR_CODES.map((httpStatus) => ({ httpStatus, ttl: Duration.seconds(0) })),
    });
    for (const [id, reason] of Object.entries(FRONT_ACKNOWLEDGEMENTS))
      Validations.of(distribution).acknowledge({ id, reason });
    return distribution;
  }
}

/** The AWS Solutions findings on the front, and why each is right for it. */
const FRONT_ACKNOWLEDGEMENTS: Readonly<Record<string, string>> = {
  'AwsSolutions-CFR1':
    'The API serves HCP Terraform clients wherever they run; it has no geographic restriction to make.',
  'AwsSolutions-CFR2':
    'The regional web ACL on the API stage sees every request the front forwards (and blocks any that did not come through it); a second, global ACL would count the same requests twice.',
  'AwsSolutions-CFR3':
    'Nothing is cached and every request reaches the stage, whose JSON access log records it with the request id; CloudFront standard logs would need a bucket for the same facts.',
  'AwsSolutions-CFR4':
    "Without a custom domain the distribution has only CloudFront's default certificate, whose security policy CloudFront fixes at TLSv1; the origin connection is TLS 1.2. Deploy with a domain (README, Deploy) for a TLS 1.2 minimum at the edge.",
};
