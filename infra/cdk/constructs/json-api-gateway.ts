import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  AuthorizationType,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  ContentHandling,
  MethodLoggingLevel,
  MockIntegration,
  PassthroughBehavior,
  type MethodOptions,
  RequestAuthorizer,
  ResponseType,
  RestApi,
  type IResource,
} from 'aws-cdk-lib/aws-apigateway';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { API_BASE_PATH, APP_NAME, AUTHORIZER_CACHE_TTL_SECONDS } from '#shared/config';
import type { Route } from '#shared/routes';
import { pascalCase } from './names';
import { SERVICE_DISCOVERY_PATH } from '#shared/http/service-discovery';
import { JSON_BODY_TYPES } from '#shared/jsonapi/media-type';
import {
  gatewayError,
  gatewayErrorTypes,
  headerMappings,
  literalTemplate,
  methodNotAllowed,
  serviceDiscovery,
  templatesFor,
  type ContractResponse,
} from './contract-responses';

export interface JsonApiGatewayProps {
  stage: string;
  routes: readonly Route[];
  /** What API Gateway invokes for each route-table function, by name: its `live` alias (constructs/deployment.ts). */
  functions: ReadonlyMap<string, IFunction>;
  /** The authorizer's `live` alias. */
  authorizer: IFunction;
  /** Each method's throttling, sized so a burst never reaches a function past its reservation (config.ts, DEFAULTS). */
  throttle: { rateLimit: number; burstLimit: number };
  /** How long API Gateway reuses an authorizer answer per token (default AUTHORIZER_CACHE_TTL_SECONDS). */
  authorizerCacheTtlSeconds?: number;
  /**
   * Create the account's API Gateway CloudWatch Logs role in this stack (one per account and
   * region, shared by every API). Off by default: the account must already have one for logs.
   */
  cloudWatchRole?: boolean;
  /** Turn off the default `execute-api` endpoint (only when a custom domain serves the API). */
  disableExecuteApiEndpoint?: boolean;
}

/**
 * The REST API of the route table: every route under /api/v2, the REQUEST authorizer on every
 * route that needs a role, a 405 with `Allow` for known paths with another method, Terraform's
 * service discovery at the root, and gateway responses that make API Gateway's own errors the
 * contract's JSON:API errors. Every response carries X-Request-Id (`$context.requestId`).
 */
export class JsonApiGateway extends Construct {
  readonly api: RestApi;
  readonly accessLogs: LogGroup;
  /** `https://ID.execute-api.REGION.amazonaws.com/<stage>/api/v2`: the stage itself, not a client address (see PublicAddress). */
  readonly baseUrl: string;

  constructor(scope: Construct, id: string, props: JsonApiGatewayProps) {
    super(scope, id);

    this.accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.api = new RestApi(this, 'Api', {
      // The stack's name (it holds the stage): API Gateway's metrics are keyed on it.
      restApiName: Stack.of(this).stackName,
      description: `${APP_NAME} (${props.stage}): HCP Terraform Reserved Tag Keys and Comments APIs`,
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      disableExecuteApiEndpoint: props.disableExecuteApiEndpoint ?? false,
      // Request bodies of these types reach the functions as the client's bytes (base64), not as
      // text API Gateway decoded for them, so a body that is not valid UTF-8 can be refused (400)
      // instead of stored with U+FFFD ("Content type conversions in API Gateway").
      binaryMediaTypes: [...JSON_BODY_TYPES],
      // Access and execution logs need the account's API Gateway CloudWatch role. It is one per
      // account and region, shared by every stage and API: a stage owns it only when asked, and
      // then retains it so that removing the stage does not break everyone else's logging.
      cloudWatchRole: props.cloudWatchRole ?? false,
      ...(props.cloudWatchRole ? { cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN } : {}),
      deployOptions: {
        stageName: props.stage,
        accessLogDestination: new LogGroupLogDestination(this.accessLogs),
        accessLogFormat: ACCESS_LOG_FORMAT,
        // Execution logs for errors only, and never request/response data: they would hold tokens.
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        metricsEnabled: true,
        tracingEnabled: true,
        throttlingRateLimit: props.throttle.rateLimit,
        throttlingBurstLimit: props.throttle.burstLimit,
      },
    });

    const authorizer = new RequestAuthorizer(this, 'TokenAuthorizer', {
      handler: props.authorizer,
      identitySources: [IdentitySource.header('Authorization')],
      resultsCacheTtl: Duration.seconds(props.authorizerCacheTtlSeconds ?? AUTHORIZER_CACHE_TTL_SECONDS),
    });

    const methodsOf = new Map<IResource, string[]>();
    for (const route of props.routes) {
      const fn = props.functions.get(route.function);
      if (!fn) throw new Error(`No Lambda for function ${route.function} (${route.method} ${route.path})`);
      const resource = this.api.root.resourceForPath(`${API_BASE_PATH}${route.path}`);
      const method = resource.addMethod(
        route.method,
        new LambdaIntegration(fn, { allowTestInvoke: false }),
        route.role === null
          ? { authorizationType: AuthorizationType.NONE }
          : { authorizationType: AuthorizationType.CUSTOM, authorizer },
      );
      if (route.role === null) {
        Validations.of(method).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason: `${route.method} ${route.path} is public by contract (role null in the route table): go-tfe calls it before it has a token.`,
        });
      }
      methodsOf.set(resource, [...(methodsOf.get(resource) ?? []), route.method]);
    }
    methodsOf.set(this.addServiceDiscovery(), ['GET']);
    for (const [resource, methods] of methodsOf) this.addMethodNotAllowed(resource, methods);

    for (const type of gatewayErrorTypes()) {
      const response = gatewayError(type);
      // The CDK prefixes each header name with `gatewayresponse.header.`; values are mappings.
      const headers = Object.fromEntries(
        Object.entries(headerMappings('gatewayresponse.header', response.headers)).map(([key, value]) => [
          key.slice('gatewayresponse.header.'.length),
          value,
        ]),
      );
      this.api.addGatewayResponse(`Gateway${pascalCase(type.toLowerCase())}`, {
        type: ResponseType.of(type),
        // No status on the DEFAULT_* fallbacks: it would replace the status of every uncustomized type.
        ...(response.statusCode === undefined ? {} : { statusCode: String(response.statusCode) }),
        responseHeaders: headers,
        templates: templatesFor(response.body),
      });
    }

    this.baseUrl = this.api.urlForPath(API_BASE_PATH);
    // RestApi's own output is the stage root, which serves nothing; the stack outputs baseUrl.
    this.api.node.tryRemoveChild('Endpoint');

    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'Requests are validated by the functions (shared/jsonapi): the contract needs its own JSON:API errors (400, 409, 415, 422 with pointers), which an API Gateway request validator cannot produce.',
    });
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-COG4',
      reason:
        'HCP Terraform clients authenticate with opaque API tokens (Authorization: Bearer), not Cognito: a Lambda REQUEST authorizer checks them against the table.',
    });
    if (props.cloudWatchRole) {
      Validations.of(this.api).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          "The account-level API Gateway logging role: AWS's managed policy is the documented one for it, and API Gateway (not our code) assumes it.",
      });
    }
  }

  /**
   * `GET /.well-known/terraform.json`, no token: Terraform's service discovery, answered by API
   * Gateway itself (a mock), at the root of the host beside /api/v2.
   */
  private addServiceDiscovery(): IResource {
    const resource = this.api.root.resourceForPath(SERVICE_DISCOVERY_PATH);
    const method = resource.addMethod('GET', ...this.mock(serviceDiscovery(), ['application/json']));
    Validations.of(method).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Terraform service discovery is public by protocol (Terraform reads it before it has a token): a mock that returns a constant document and reaches no function or data.',
    });
    return resource;
  }

  /**
   * `ANY` on a resource that has routes answers 405 with the contract's body and `Allow`; API
   * Gateway prefers an explicit method, so only the methods the resource does not serve reach it.
   */
  private addMethodNotAllowed(resource: IResource, methods: readonly string[]): void {
    const method = resource.addMethod('ANY', ...this.mock(methodNotAllowed(methods), Object.keys(templatesFor('{}'))));
    Validations.of(method).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Mock integration that only answers 405 method not allowed, like the local gateway, before any authentication; it reaches no function and no data.',
    });
  }

  /** A MOCK integration answering `response`, with its body as the template for each of `templateTypes`. */
  private mock(response: ContractResponse, templateTypes: readonly string[]): [MockIntegration, MethodOptions] {
    const statusCode = String(response.statusCode);
    const parameters = headerMappings('method.response.header', response.headers);
    const integration = new MockIntegration({
      // A body of a type with no template passes through, and the mock answers its default (only)
      // integration response: the method is judged before the media type, so any body gets the 405
      // (https://docs.aws.amazon.com/apigateway/latest/developerguide/integration-passthrough-behaviors.html,
      // https://docs.aws.amazon.com/apigateway/latest/developerguide/how-to-mock-integration.html).
      passthroughBehavior: PassthroughBehavior.WHEN_NO_MATCH,
      // With binary media types set, a JSON body or Accept would make the mock's payloads binary:
      // CONVERT_TO_TEXT keeps its request template and its text answer ("Content type conversions").
      contentHandling: ContentHandling.CONVERT_TO_TEXT,
      requestTemplates: Object.fromEntries(MOCK_REQUEST_TYPES.map((type) => [type, `{"statusCode": ${statusCode}}`])),
      integrationResponses: [
        {
          statusCode,
          contentHandling: ContentHandling.CONVERT_TO_TEXT,
          responseParameters: parameters,
          responseTemplates: Object.fromEntries(templateTypes.map((type) => [type, literalTemplate(response.body)])),
        },
      ],
    });
    return [
      integration,
      {
        authorizationType: AuthorizationType.NONE,
        methodResponses: [
          { statusCode, responseParameters: Object.fromEntries(Object.keys(parameters).map((key) => [key, true])) },
        ],
      },
    ];
  }
}

/** Content types whose body the mock maps to its status (a body-less request counts as application/json); any other passes through. */
const MOCK_REQUEST_TYPES = [
  'application/json',
  'application/vnd.api+json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'application/octet-stream',
  'application/xml',
  'text/xml',
];

/**
 * One JSON line per request. No Authorization header and no request data: tokens must never reach
 * a log. The principal is the token's subject (a user or team name), not a secret.
 */
export const ACCESS_LOG_FIELDS: Readonly<Record<string, string>> = {
  requestId: '$context.requestId',
  extendedRequestId: '$context.extendedRequestId',
  requestTime: '$context.requestTimeEpoch',
  ip: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  method: '$context.httpMethod',
  resourcePath: '$context.resourcePath',
  path: '$context.path',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  integrationStatus: '$context.integration.status',
  principal: '$context.authorizer.principalId',
  authorizerStatus: '$context.authorizer.status',
  authorizerLatency: '$context.authorizer.latency',
  errorType: '$context.error.responseType',
  wafStatus: '$context.waf.status',
  xrayTraceId: '$context.xrayTraceId',
};

const ACCESS_LOG_FORMAT = AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS));
