// Stands in for `emitter-listener` in the bench's Powertools Tracer bundles
// (test/bench/tracers/candidates.ts).
// cls-hooked (the X-Ray SDK's context) requires it at load only for Namespace#bindEmitter, which
// binds an EventEmitter's listeners to a context; the X-Ray SDK's Lambda path and Powertools Tracer
// never call it (only the SDK's http patchers and web-framework middleware would, and they are not
// bundled: xray-sdk-stubs/aws-xray-sdk-core.cjs). The real package also loads `shimmer`. Any use
// fails loudly instead of silently losing the trace context.
module.exports = function wrapEmitter() {
  throw new Error(
    'emitter-listener is not bundled: cls-hooked Namespace#bindEmitter is not supported in these functions',
  );
};
