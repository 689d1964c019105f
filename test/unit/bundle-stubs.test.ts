import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { POWERTOOLS_ALIAS } from '../bench/tracers/candidates';

const require = createRequire(import.meta.url);

/** The names Powertools Tracer takes from the X-Ray SDK (`const { … } = xraySdk;` in its ESM build). */
function namesTracerUses(): string[] {
  const esm = join(dirname(require.resolve('@aws-lambda-powertools/tracer')), '..', 'esm');
  const files = ['provider/ProviderService.js', 'Tracer.js'].map((file) => readFileSync(join(esm, file), 'utf8'));
  return files.flatMap((source) =>
    [...source.matchAll(/const \{([^}]+)\} = xraySdk;/g)].flatMap((match) =>
      match[1]!
        .split(',')
        .map((entry) => entry.split(':')[0]!.trim())
        .filter(Boolean),
    ),
  );
}

/** The bench's Powertools Tracer candidate (test/bench/tracers/): bundled as the functions had it. */
describe('the X-Ray SDK as the bench bundles it (xray-sdk-stubs/aws-xray-sdk-core.cjs)', () => {
  const real = require('aws-xray-sdk-core') as Record<string, unknown>;
  const bundled = require(POWERTOOLS_ALIAS['aws-xray-sdk-core']) as Record<string, unknown>;

  it("gives Powertools Tracer the SDK's own functions and classes for every name it uses that runs in Lambda", () => {
    const names = namesTracerUses();
    expect(names).toEqual(
      expect.arrayContaining(['captureAWSv3Client', 'getSegment', 'setSegment', 'Segment', 'Subsegment']),
    );
    const notInLambda = new Set(['captureAWS', 'captureAWSClient', 'captureHTTPsGlobal']);
    for (const name of names.filter((n) => !notInLambda.has(n)))
      expect([name, bundled[name]]).toEqual([name, real[name]]);
  });

  it('throws, naming what is missing, for what these functions never run: AWS SDK v2 and HTTP capture', () => {
    for (const name of ['captureAWS', 'captureAWSClient', 'captureHTTPsGlobal']) {
      expect(() => (bundled[name] as () => void)()).toThrow(`aws-xray-sdk-core ${name}`);
    }
  });
});

describe('emitter-listener as the bench bundles it (xray-sdk-stubs/emitter-listener.cjs)', () => {
  it('throws if cls-hooked ever binds an event emitter', () => {
    const wrapEmitter = require(POWERTOOLS_ALIAS['emitter-listener']) as () => void;
    expect(() => wrapEmitter()).toThrow('emitter-listener is not bundled');
  });
});
