import { Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { synthesize, type Synthesized } from './synth';
import { expectWith } from '../support/expect-with';

/** The stack with the AWS Solutions checks, as `npm run synth` runs them (a finding fails synth). */
let synth: Synthesized;
beforeAll(() => {
  synth = synthesize({ bundle: false });
}, 120_000);

interface Acknowledgement {
  path: string;
  id: string;
  reason: string;
}

function acknowledgements(root: IConstruct): Acknowledgement[] {
  return root.node.findAll().flatMap((c) =>
    c.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((m) =>
        Object.entries(m.data as Record<string, string>).map(([id, reason]) => ({
          path: c.node.path,
          id: id.replace(/^annotation::/i, ''),
          reason,
        })),
      ),
  );
}

describe('cdk-nag (AwsSolutions)', () => {
  it('finds nothing that is not acknowledged', () => {
    const report = synth.nag.validateScope(synth.app);
    expect(
      report.violations.map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`),
    ).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('states a reason for every acknowledgement', () => {
    const acks = acknowledgements(synth.app);
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      expect(ack.id).toMatch(/^AwsSolutions-[A-Z]+\d+(\[.+\])?$/);
      expectWith(ack.reason.length, `${ack.id} at ${ack.path}`).toBeGreaterThan(40);
    }
  });

  it('acknowledges only findings that exist: without the acknowledgements, exactly those rules fire', () => {
    const fresh = synthesize({ bundle: false });
    const expected = new Set(acknowledgements(fresh.app).map((a) => a.id));
    for (const c of fresh.app.node.findAll()) {
      const node = c.node as unknown as { _metadata?: Array<{ type: string }> };
      if (node._metadata)
        node._metadata = node._metadata.filter((m) => m.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY);
    }
    expectWith(acknowledgements(fresh.app), 'acknowledgements stripped').toEqual([]);
    const findings = new AwsSolutionsChecks().validateScope(fresh.app).violations.map((v) => v.ruleName);
    expect(new Set(findings)).toEqual(expected);
  });
});
