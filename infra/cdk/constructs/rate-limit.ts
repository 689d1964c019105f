import { Stack } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { MAX_BODY_BYTES, RATE_LIMIT_PER_SECOND } from '#shared/config';
import { COMMON_HEADERS } from '#shared/http/responses';
import { gatewayError } from './contract-responses';

/** WAF counts requests over a trailing window; 60 s is its shortest. */
export const RATE_WINDOW_SECONDS = 60;
/** The contract's 30 requests per second per token, as WAF expresses it: per window. */
export const RATE_LIMIT_PER_WINDOW = RATE_LIMIT_PER_SECOND * RATE_WINDOW_SECONDS;
/**
 * How long a blocked client should wait. WAF keeps blocking a token until its count over the
 * trailing window falls under the limit (blocked requests count too), so only a pause of one
 * whole window is sure to end the block. go-tfe sleeps for `X-RateLimit-Reset` before retrying.
 */
export const RATE_RETRY_AFTER_SECONDS = RATE_WINDOW_SECONDS;

export const WAF_BODY_KEYS = { tooManyRequests: 'TooManyRequests', payloadTooLarge: 'PayloadTooLarge' } as const;

export interface RateLimitProps {
  stage: Stage;
}

/**
 * The web ACL in front of the stage: 30 req/s per token (keyed on the Authorization header) and
 * no body over 64 KiB, both answered with the contract's JSON:API errors. WAF cannot set
 * `Content-Type` on a custom response (its API refuses that header): these two carry
 * `application/json`, every other header of the contract is set.
 */
export class RateLimit extends Construct {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: RateLimitProps) {
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
    const retryHeaders = {
      'Retry-After': String(RATE_RETRY_AFTER_SECONDS),
      'X-RateLimit-Reset': RATE_RETRY_AFTER_SECONDS.toFixed(3),
    };

    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      description: 'Per-token rate limit and body size limit of the API contract',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('web-acl'),
      // Inspect up to 64 KiB of body (the default is 16 KiB) so the size rule can see the limit.
      associationConfig: { requestBody: { API_GATEWAY: { defaultSizeInspectionLimit: 'KB_64' } } },
      customResponseBodies: {
        [WAF_BODY_KEYS.tooManyRequests]: { contentType: 'APPLICATION_JSON', content: tooMany.body },
        [WAF_BODY_KEYS.payloadTooLarge]: { contentType: 'APPLICATION_JSON', content: tooLarge.body },
      },
      rules: [
        {
          name: 'PerTokenRateLimit',
          priority: 0,
          action: {
            block: {
              customResponse: {
                responseCode: tooMany.statusCode,
                customResponseBodyKey: WAF_BODY_KEYS.tooManyRequests,
                responseHeaders: wafHeaders({ ...COMMON_HEADERS, ...retryHeaders }),
              },
            },
          },
          statement: {
            rateBasedStatement: {
              limit: RATE_LIMIT_PER_WINDOW,
              evaluationWindowSec: RATE_WINDOW_SECONDS,
              aggregateKeyType: 'CUSTOM_KEYS',
              // The raw header: the token is the key, as HCP Terraform limits per user. Requests
              // without it (only /ping needs none) are left to the stage throttle.
              customKeys: [{ header: { name: 'Authorization', textTransformations: [{ priority: 0, type: 'NONE' }] } }],
            },
          },
          visibilityConfig: visibility('per-token-rate'),
        },
        {
          name: 'BodyOver64KiB',
          priority: 1,
          action: {
            block: {
              customResponse: {
                responseCode: tooLarge.statusCode,
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
      ],
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
