import { API_BASE_PATH } from '#shared/config';
import { ensureAssembly } from './assembly';
import { ensureTable, startDynamoDbLocal, useLocalEndpoint } from './dynamodb-local';
import { localSettings, SEED_ORGANIZATION } from './settings';

/**
 * `npm start`: the `local` stage's cloud assembly (synthesized when its sources changed) served by
 * the local emulator of WAF, API Gateway, Lambda and IAM over DynamoDB Local in DATA_DIR, with a
 * seed on first start. Ctrl-C stops it all.
 * `npm run dev` (`--dev`): the inner loop: the route table's TypeScript handlers in this process,
 * no synthesis, no WAF, IAM or gateway responses from the template; never what a test relies on.
 */
const started = performance.now();
const settings = localSettings();
const dev = process.argv.includes('--dev');
if (dev) process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';

const assembly = dev ? undefined : await ensureAssembly((line) => console.log(line)).catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
const dynamo = await startDynamoDbLocal({ port: settings.ddbPort, dataDir: settings.dataDir }).catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
// The seed below writes as the operator does: straight to DynamoDB Local, not through a function.
useLocalEndpoint(dynamo.endpoint);
process.env.TABLE_NAME = settings.tableName;
await ensureTable(dynamo.endpoint, settings.tableName);

const { seedOnFirstStart } = await import('./seed');
const seed = await seedOnFirstStart();
const onRequest = ({ method, path, status, ms, errorType }: { method: string; path: string; status: number; ms: number; errorType?: string }) =>
  console.log(`${method} ${path} ${status}${errorType ? ` ${errorType}` : ''} ${ms.toFixed(1)}ms`);
// Imported only now: the handlers' SDK client (in-process in dev mode) must see the local endpoint.
const gateway = await (assembly
  ? (await import('./local-stack')).startLocalStack({ port: settings.port, assembly, dynamoDbEndpoint: dynamo.endpoint, tableName: settings.tableName, onRequest })
  : (await import('./gateway')).startGateway({ port: settings.port, onRequest })
).catch(async (error: Error) => {
  console.error(`Could not start the local stack on 127.0.0.1:${settings.port}: ${error.message}`);
  await dynamo.stop();
  process.exit(1);
});

const base = `${gateway.url}${API_BASE_PATH}`;
const unevaluated: string[] = 'unevaluatedRuleGroups' in gateway ? gateway.unevaluatedRuleGroups as string[] : [];
if (unevaluated.length > 0) console.log(`WAF managed rule groups passed through unevaluated: ${unevaluated.join(', ')}`);
const lines = [
  `API ready in ${((performance.now() - started) / 1000).toFixed(1)} s at ${base}`,
  assembly
    ? `Serving the ${assembly.synthesized ? 'newly synthesized' : 'unchanged'} cloud assembly of the local stage (${assembly.directory})`
    : 'Dev mode: the TypeScript handlers in this process (no WAF, IAM or template gateway responses); npm start serves what deploys',
  `DynamoDB Local on ${dynamo.endpoint} (table ${settings.tableName}, data in ${settings.dataDir})`,
];
if (seed) {
  lines.push(
    `Seeded organization ${seed.organization} with an owner token (shown once, stored only as a hash) and a run:`,
    `  TOKEN=${seed.token}`,
    `  RUN=${seed.runId}`,
    `Try:`,
    `  curl -H "Authorization: Bearer ${seed.token}" ${base}/organizations/${seed.organization}/reserved-tag-keys`,
    `  curl -H "Authorization: Bearer ${seed.token}" -H "Content-Type: application/vnd.api+json" \\`,
    `    -d '{"data":{"type":"comments","attributes":{"body":"Looks good"}}}' ${base}/runs/${seed.runId}/comments`,
    `  curl -H "Authorization: Bearer ${seed.token}" ${base}/runs/${seed.runId}/comments`,
  );
} else {
  lines.push(
    `The store was seeded on an earlier start. New token: npm run admin -- token create --org ${SEED_ORGANIZATION} --role owner`,
    `Its runs: npm run admin -- run list --org ${SEED_ORGANIZATION}`,
  );
}
lines.push(`  curl -i ${base}/ping`, 'Ctrl-C stops the API and DynamoDB Local.');
console.log(lines.join('\n'));

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping`);
  await gateway.close();
  await dynamo.stop();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
