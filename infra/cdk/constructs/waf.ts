import { Stack } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { API_BASE_PATH, MAX_BODY_BYTES, RATE_LIMIT_PER_SECOND } from '#shared/config';
import { COMMON_HEADERS, errorResponse } from '#shared/http/responses';
import { ApiError } from '#shared/jsonapi/errors';
import { gatewayError } from './contract-responses';

/** WAF counts requests over a trailing window; 60 s is its shortest. */
export const RATE_WINDOW_SECONDS = 60;
/** The contract's 30 requests per second per token, as WAF expresses it: per window. */
export const RATE_LIMIT_PER_WINDOW = RATE_LIMIT_PER_SECOND * RATE_WINDOW_SECONDS;
/**
 * Requests per second from one client address, with or without a token: room for three tokens
 * at their full 30 req/s behind one address (a CI fleet behind one NAT), while one address can
 * take at most a twentieth of the 2,000 req/s stage and cannot make the authorizer try more than
 * 100 made-up tokens a second.
 */
export const CLIENT_IP_LIMIT_PER_SECOND = 100;
/**
 * How long a blocked client should wait. WAF keeps blocking a key until its count over the
 * trailing window falls under the limit (blocked requests count too), so only a pause of one
 * whole window is sure to end the block. go-tfe sleeps for `X-RateLimit-Reset` before retrying.
 */
export const RATE_RETRY_AFTER_SECONDS = RATE_WINDOW_SECONDS;
/**
 * Run notifications per organization: HCP Terraform sends a handful per run (created, planning,
 * needs attention, applying, completed or errored) per notification configuration; 10 a second
 * for one organization is far beyond what its runs produce, and bounds unsigned floods of one URL.
 */
export const RUN_NOTIFICATIONS_LIMIT_PER_SECOND = 10;
/** What every run-notification URL contains (the stage name precedes it on the execute-api endpoint). */
export const RUN_NOTIFICATIONS_PATH = `${API_BASE_PATH}/run-notifications/`;
/**
 * A URI path as the stage routes it: percent-decoded once (as API Gateway decodes a path
 * parameter), repeated slashes and dot segments resolved, lower-cased.
 */
const AS_ROUTED = [
  { priority: 0, type: 'URL_DECODE' },
  { priority: 1, type: 'NORMALIZE_PATH' },
  { priority: 2, type: 'LOWERCASE' },
];

export const WAF_BODY_KEYS = {
  perClientIp: 'TooManyRequestsPerAddress',
  perToken: 'TooManyRequestsPerToken',
  runNotifications: 'TooManyRunNotifications',
  payloadTooLarge: 'PayloadTooLarge',
} as const;

/**
 * A rate rule's 429 body: which limit, as WAF counts it (requests over the window, refused ones
 * included) and per second, and what to do. WAF's custom responses are static, so one body per rule.
 */
export function rateLimitBody(whose: string, perSecond: number): string {
  const perWindow = (perSecond * RATE_WINDOW_SECONDS).toLocaleString('en');
  const detail =
    `over ${whose} limit of ${perWindow} requests per ${RATE_WINDOW_SECONDS} s (${perSecond} req/s; refused requests count too): ` +
    `wait Retry-After (${RATE_RETRY_AFTER_SECONDS} s) before the next request`;
  return errorResponse(new ApiError(429, 'too many requests', detail)).body;
}
const RATE_LIMIT_BODIES = {
  [WAF_BODY_KEYS.perClientIp]: rateLimitBody("this client address's", CLIENT_IP_LIMIT_PER_SECOND),
  [WAF_BODY_KEYS.perToken]: rateLimitBody("this token's", RATE_LIMIT_PER_SECOND),
  [WAF_BODY_KEYS.runNotifications]: rateLimitBody(
    "this organization's run-notification",
    RUN_NOTIFICATIONS_LIMIT_PER_SECOND,
  ),
};

/**
 * Managed rules that would block valid requests of this API, counted instead of blocking. Each
 * inspects the request body, and the only free text a body carries is a comment: up to 16 KiB of
 * whatever a person writes about a run (markup, paths, URLs, stack traces), stored and returned as
 * a JSON string, never rendered as HTML, executed, deserialized, used as a path or fetched.
 */
export const COUNTED_MANAGED_RULES = {
  AWSManagedRulesCommonRuleSet: {
    /** 8 KB; a comment may be 16,384 bytes, and BodyOver64KiB bounds bodies. */
    SizeRestrictions_BODY: 'a comment body may be 16 KiB; the 64 KiB rule bounds bodies',
    /** `<script>` in a comment is text: the API never serves HTML. */
    CrossSiteScripting_BODY: 'comment text may contain markup; the API serves JSON, never HTML',
    /** `../modules/vpc` is an ordinary thing to write about a Terraform run. */
    GenericLFI_BODY: 'comment text may contain relative paths; no body value is used as a path',
    /** A URL with an IPv4 host (`http://10.0.0.12:8080`) is ordinary in a run comment. */
    GenericRFI_BODY: 'comment text may contain URLs with IP hosts; the API fetches no URL',
    /** 169.254.169.254 may be quoted in a comment; the API fetches no URL. */
    EC2MetaDataSSRF_BODY: 'comment text may quote the metadata address; the API fetches no URL',
  },
  AWSManagedRulesKnownBadInputsRuleSet: {
    /** `${jndi:…}` in a comment is text: no Java, no log interpolation of bodies. */
    Log4JRCE_BODY: 'comment text may quote a Log4Shell string; the API runs no Java and never logs bodies',
    /** Serialized-Java markers in a comment are text: nothing deserializes a body but JSON.parse. */
    JavaDeserializationRCE_BODY: 'comment text may contain such markers; nothing deserializes bodies but JSON.parse',
  },
} as const;

/** What the front (CloudFront) adds to each request it forwards, for the rules to trust. */
export interface FrontHeaders {
  /** Origin custom header whose value is the per-deployment secret: proof a request came through the front. */
  originVerifyHeader: string;
  /** The secret (a CloudFormation dynamic reference to a Secrets Manager secret). */
  originSecret: string;
  /** Set by the front's viewer-request function to the viewer's IP, overwriting anything the client sent. */
  clientIpHeader: string;
}

export interface WafProps {
  stage: Stage;
  /** Given when a CloudFront front is the published address (no custom domain). */
  front?: FrontHeaders;
}

/**
 * The regional web ACL on the stage, which every way in reaches (the custom domain, the front,
 * and the execute-api endpoint itself): only through the front when there is one, no body over
 * 64 KiB, a bound per client address, 30 req/s per token however its header is spelled, and AWS's
 * common and known-bad-inputs rule groups. Limits answer the contract's JSON:API errors; WAF
 * cannot set `Content-Type` on a custom response (its API refuses that header), so those bodies
 * carry `application/json` with every other header of the contract. Blocks without a custom
 * response (managed rules, the front check) become API Gateway's WAF_FILTERED gateway response.
 */
export class Waf extends Construct {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: WafProps) {
    super(scope, id);
    const metricPrefix = Stack.of(this).stackName;
    const visibility = (name: string): CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      metricName: `${metricPrefix}-${name}`,
      // Sampled requests keep full request headers, Authorization included, for hours: off.
      sampledRequestsEnabled: false,
    });

    const tooMany = gatewayError('THROTTLED');
    const tooLarge = gatewayError('REQUEST_TOO_LARGE');
    const rateLimited = (bodyKey: keyof typeof RATE_LIMIT_BODIES): CfnWebACL.RuleActionProperty => ({
      block: {
        customResponse: {
          responseCode: tooMany.statusCode!,
          customResponseBodyKey: bodyKey,
          responseHeaders: wafHeaders({
            ...COMMON_HEADERS,
            'Retry-After': String(RATE_RETRY_AFTER_SECONDS),
            'X-RateLimit-Reset': RATE_RETRY_AFTER_SECONDS.toFixed(3),
          }),
        },
      },
    });

    /** The rules in evaluation order; priorities are their positions. */
    const rules: Array<Omit<CfnWebACL.RuleProperty, 'priority'>> = [];
    if (props.front) {
      rules.push({
        name: 'OnlyThroughFront',
        action: { block: {} },
        statement: {
          notStatement: {
            statement: {
              byteMatchStatement: {
                // WAF takes single-header names in lower case (SingleHeader is untyped in the CDK: CloudFormation casing).
                fieldToMatch: { singleHeader: { Name: props.front.originVerifyHeader.toLowerCase() } },
                positionalConstraint: 'EXACTLY',
                searchString: props.front.originSecret,
                textTransformations: [{ priority: 0, type: 'NONE' }],
              },
            },
          },
        },
        visibilityConfig: visibility('only-through-front'),
      });
    }
    rules.push(
      {
        name: 'BodyOver64KiB',
        action: {
          block: {
            customResponse: {
              responseCode: tooLarge.statusCode!,
              customResponseBodyKey: WAF_BODY_KEYS.payloadTooLarge,
              responseHeaders: wafHeaders({ ...COMMON_HEADERS }),
            },
          },
        },
        statement: {
          sizeConstraintStatement: {
            // A body longer than the 64 KiB WAF inspects is "oversize": MATCH blocks it too.
            fieldToMatch: { body: { oversizeHandling: 'MATCH' } },
            comparisonOperator: 'GT',
            size: MAX_BODY_BYTES,
            textTransformations: [{ priority: 0, type: 'NONE' }],
          },
        },
        visibilityConfig: visibility('body-size'),
      },
      {
        name: 'PerClientIpRateLimit',
        action: rateLimited(WAF_BODY_KEYS.perClientIp),
        statement: {
          rateBasedStatement: {
            limit: CLIENT_IP_LIMIT_PER_SECOND * RATE_WINDOW_SECONDS,
            evaluationWindowSec: RATE_WINDOW_SECONDS,
            // Behind the front, the source address is CloudFront's: the client's is the header the
            // front's function sets (X-Forwarded-For's first address is the client's to choose).
            // An IPv6 client's is its /64 (CLIENT_IP_FUNCTION): WAF has no prefix key, and a /64
            // is one subscriber's. Without the front, clients arrive over IPv4 only (the REST API
            // and its regional custom domain are IPv4 endpoints unless set to dualstack:
            // https://docs.aws.amazon.com/apigateway/latest/developerguide/rest-custom-domain-ip-address-type.html).
            ...(props.front
              ? {
                  aggregateKeyType: 'FORWARDED_IP',
                  forwardedIpConfig: { headerName: props.front.clientIpHeader, fallbackBehavior: 'MATCH' },
                }
              : { aggregateKeyType: 'IP' }),
          },
        },
        visibilityConfig: visibility('per-client-ip-rate'),
      },
      {
        name: 'PerTokenRateLimit',
        action: rateLimited(WAF_BODY_KEYS.perToken),
        statement: {
          rateBasedStatement: {
            limit: RATE_LIMIT_PER_WINDOW,
            evaluationWindowSec: RATE_WINDOW_SECONDS,
            aggregateKeyType: 'CUSTOM_KEYS',
            // One bucket per token however its header is spelled: the authorizer accepts `Bearer`
            // in any case, then spaces or tabs, then the token; lower-casing and folding every
            // run of white space to one space makes each of those spellings the same key.
            // Requests without the header are not counted here (only public paths need none).
            customKeys: [
              {
                header: {
                  name: 'Authorization',
                  textTransformations: [
                    { priority: 0, type: 'LOWERCASE' },
                    { priority: 1, type: 'COMPRESS_WHITE_SPACE' },
                  ],
                },
              },
            ],
          },
        },
        visibilityConfig: visibility('per-token-rate'),
      },
      {
        // Notifications carry no token (their signature is checked by the function): one bucket per
        // URL, i.e. per organization. Counted on the path as the stage routes it, so that no other
        // spelling of one organization's URL (`%65xample-org`, `./`, `x/../`, `//`, capitals) is a
        // bucket of its own; WAF cannot drop a trailing slash, so that spelling is the one other.
        name: 'RunNotificationsPerOrganization',
        action: rateLimited(WAF_BODY_KEYS.runNotifications),
        statement: {
          rateBasedStatement: {
            limit: RUN_NOTIFICATIONS_LIMIT_PER_SECOND * RATE_WINDOW_SECONDS,
            evaluationWindowSec: RATE_WINDOW_SECONDS,
            aggregateKeyType: 'CUSTOM_KEYS',
            customKeys: [{ uriPath: { textTransformations: AS_ROUTED } }],
            scopeDownStatement: {
              byteMatchStatement: {
                fieldToMatch: { uriPath: {} },
                positionalConstraint: 'CONTAINS',
                searchString: RUN_NOTIFICATIONS_PATH,
                textTransformations: AS_ROUTED,
              },
            },
          },
        },
        visibilityConfig: visibility('run-notifications-rate'),
      },
      ...Object.entries(COUNTED_MANAGED_RULES).map(([group, counted]) => ({
        name: group,
        overrideAction: { none: {} },
        statement: {
          managedRuleGroupStatement: {
            vendorName: 'AWS',
            name: group,
            ruleActionOverrides: Object.keys(counted).map((rule) => ({ name: rule, actionToUse: { count: {} } })),
          },
        },
        visibilityConfig: visibility(group),
      })),
    );

    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      description:
        'The API contract limits: front only, body size, per client address, per token, run notifications per organization, AWS common and known-bad-input rules',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('web-acl'),
      // Inspect up to 64 KiB of body (the default is 16 KiB) so the size rule can see the limit.
      associationConfig: { requestBody: { API_GATEWAY: { defaultSizeInspectionLimit: 'KB_64' } } },
      customResponseBodies: {
        ...Object.fromEntries(
          Object.entries(RATE_LIMIT_BODIES).map(([key, content]) => [
            key,
            { contentType: 'APPLICATION_JSON', content },
          ]),
        ),
        [WAF_BODY_KEYS.payloadTooLarge]: { contentType: 'APPLICATION_JSON', content: tooLarge.body },
      },
      // Evaluated in this order (lowest priority first).
      rules: rules.map((rule, priority) => ({ ...rule, priority })),
    });

    const association = new CfnWebACLAssociation(this, 'StageAssociation', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
    // The stage ARN is built from names, not from the stage resource: wait for the stage to exist.
    association.node.addDependency(props.stage);
  }
}

const wafHeaders = (headers: Record<string, string>): CfnWebACL.CustomHTTPHeaderProperty[] =>
  Object.entries(headers)
    .filter(([name]) => name.toLowerCase() !== 'content-type')
    .map(([name, value]) => ({ name, value }));
