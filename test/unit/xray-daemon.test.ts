import { describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { newTraceId, startXRayDaemon } from '#infra/local/aws/xray';

/** What `TRACES=print npm start` prints: each request's trace once, whole. */
describe('the local X-Ray daemon', () => {
  it('prints a trace once its request has ended, not at a pause between its functions (a cold start)', async () => {
    const printed: Array<[string, string[]]> = [];
    const daemon = await startXRayDaemon({
      onTrace: (id, segments) => printed.push([id, segments.map((s) => s.name as string)]),
    });
    const trace = newTraceId();
    const invocation = (name: string, parent: string) => ({
      name,
      traceHeader: `Root=${trace};Parent=${parent};Sampled=1`,
      startedAt: Date.now(),
      endedAt: Date.now(),
      ok: true,
    });
    try {
      daemon.recordFunctionSegment(invocation('Authorizer', 'aaaaaaaaaaaaaaaa'));
      await sleep(400); // the function's instance starting, after the authorizer answered
      expect(printed).toEqual([]);
      daemon.recordFunctionSegment(invocation('CommentsCreate', 'bbbbbbbbbbbbbbbb'));
      daemon.endTrace(trace);
      await sleep(200);
      expect(printed).toEqual([[trace, ['Authorizer', 'CommentsCreate']]]);

      daemon.endTrace(newTraceId()); // a request that sent no segment: nothing to print
      await sleep(200);
      expect(printed).toHaveLength(1);
    } finally {
      await daemon.close();
    }
  });
});
