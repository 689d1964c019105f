// node:async_hooks without an ES module facade (infra/cdk/constructs/bundling.ts, BUILTINS_BY_REQUIRE).
// Not require('node:async_hooks'): the bundle's alias would send that back to this file.
module.exports = process.getBuiltinModule('node:async_hooks');
