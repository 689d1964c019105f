// node:http without an ES module facade (infra/cdk/constructs/bundling.ts, BUILTINS_BY_REQUIRE).
// Not require('node:http'): the bundle's alias would send that back to this file.
module.exports = process.getBuiltinModule('node:http');
