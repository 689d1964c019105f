// Stands in for `semver` in the Lambda bundles (infra/cdk/constructs/bundling.ts). aws-xray-sdk-core
// requires it at load only for captureAWS, which checks the version of AWS SDK v2; these functions
// use SDK v3 (captureAWSv3Client) and never call it. The real package costs ~29 KB and compiles
// dozens of regular expressions at every cold start. Any use fails loudly instead of guessing.
const unavailable = () => {
  throw new Error('semver is not bundled: aws-xray-sdk-core captureAWS (AWS SDK v2) is not supported in these functions');
};
module.exports = { gte: unavailable };
