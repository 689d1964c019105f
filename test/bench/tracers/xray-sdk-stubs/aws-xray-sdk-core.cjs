// Stands in for aws-xray-sdk-core's entry (lib/aws-xray.js) in the bench's Powertools Tracer
// bundles (test/bench/tracers/candidates.ts), as the deployed bundles had it while they used
// Powertools Tracer. The entry requires every part of the SDK at load: plugins for EC2, ECS and Elastic Beanstalk, patchers for AWS SDK v2, http(s) and promises, SQL data and the
// express/restify middleware helpers. In Lambda, Powertools Tracer uses only the context, capture,
// segment and AWS SDK v3 parts (tracer/lib/esm/provider/ProviderService.js), and HTTP capture is off
// (test/bench/tracers/powertools.ts). This module exports exactly those, from the SDK's own files, and
// starts the SDK as its entry does; everything else throws if it is ever used, instead of guessing.
const contextUtils = require('../../../../node_modules/aws-xray-sdk-core/dist/lib/context_utils');
const logging = require('../../../../node_modules/aws-xray-sdk-core/dist/lib/logger');
const segmentUtils = require('../../../../node_modules/aws-xray-sdk-core/dist/lib/segments/segment_utils');
const capture = require('../../../../node_modules/aws-xray-sdk-core/dist/lib/capture');
const LambdaEnv = require('../../../../node_modules/aws-xray-sdk-core/dist/lib/env/aws_lambda');
const pkginfo = require('../../../../node_modules/aws-xray-sdk-core/package.json');

const unavailable = (name) => () => {
  throw new Error(
    `aws-xray-sdk-core ${name} is not bundled in these functions (test/bench/tracers/xray-sdk-stubs/aws-xray-sdk-core.cjs keeps what Powertools Tracer uses in Lambda)`,
  );
};

module.exports = {
  captureAWSv3Client: require('../../../../node_modules/aws-xray-sdk-core/dist/lib/patchers/aws3_p').captureAWSClient,
  captureFunc: capture.captureFunc,
  captureAsyncFunc: capture.captureAsyncFunc,
  captureCallbackFunc: capture.captureCallbackFunc,
  getNamespace: contextUtils.getNamespace,
  resolveSegment: contextUtils.resolveSegment,
  resolveManualSegmentParams: contextUtils.resolveManualSegmentParams,
  getSegment: contextUtils.getSegment,
  setSegment: contextUtils.setSegment,
  isAutomaticMode: contextUtils.isAutomaticMode,
  enableAutomaticMode: contextUtils.enableAutomaticMode,
  enableManualMode: contextUtils.enableManualMode,
  setContextMissingStrategy: contextUtils.setContextMissingStrategy,
  setDaemonAddress: require('../../../../node_modules/aws-xray-sdk-core/dist/lib/daemon_config').setDaemonAddress,
  setStreamingThreshold: segmentUtils.setStreamingThreshold,
  setLogger: logging.setLogger,
  getLogger: logging.getLogger,
  Segment: require('../../../../node_modules/aws-xray-sdk-core/dist/lib/segments/segment'),
  Subsegment: require('../../../../node_modules/aws-xray-sdk-core/dist/lib/segments/attributes/subsegment'),
  SegmentUtils: segmentUtils,
  // AWS SDK v2 (these functions use v3), http(s) capture (off), promise patching, plugins of other
  // compute platforms, SQL data and web-framework middleware: never run here.
  captureAWS: unavailable('captureAWS (AWS SDK v2)'),
  captureAWSClient: unavailable('captureAWSClient (AWS SDK v2)'),
  captureHTTPs: unavailable('captureHTTPs'),
  captureHTTPsGlobal: unavailable('captureHTTPsGlobal'),
  capturePromise: unavailable('capturePromise'),
  config: unavailable('config (EC2, ECS, Elastic Beanstalk plugins)'),
  setAWSWhitelist: unavailable('setAWSWhitelist'),
  appendAWSWhitelist: unavailable('appendAWSWhitelist'),
};

// What the SDK's entry does at load (lib/aws-xray.js): describe the SDK and the runtime on every
// segment, and in Lambda open the facade segment that Lambda's own segment stands behind.
segmentUtils.setSDKData({ sdk: 'X-Ray for Node.js', sdk_version: pkginfo.version, package: pkginfo.name });
segmentUtils.setServiceData({
  runtime: process.release?.name ?? 'unknown',
  runtime_version: process.version,
  version: process.env.npm_package_version || 'unknown',
  name: process.env.npm_package_name || 'unknown',
});
if (process.env.LAMBDA_TASK_ROOT) LambdaEnv.init();
