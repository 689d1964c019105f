import { describe, expect, it } from '@jest/globals';
import { DEFAULT_LAMBDA_NICENESS, lambdaNiceness } from '#infra/local/settings';

describe('LOCAL_LAMBDA_NICENESS', () => {
  it('is 10 when unset or empty, and any whole number from 0 to 19 otherwise', () => {
    expect(DEFAULT_LAMBDA_NICENESS).toBe(10);
    expect(lambdaNiceness({})).toBe(10);
    expect(lambdaNiceness({ LOCAL_LAMBDA_NICENESS: ' ' })).toBe(10);
    expect(lambdaNiceness({ LOCAL_LAMBDA_NICENESS: '0' })).toBe(0);
    expect(lambdaNiceness({ LOCAL_LAMBDA_NICENESS: '19' })).toBe(19);
  });

  it('refuses anything else, naming the variable', () => {
    for (const bad of ['-1', '20', '2.5', 'high']) {
      expect(() => lambdaNiceness({ LOCAL_LAMBDA_NICENESS: bad })).toThrow(
        `LOCAL_LAMBDA_NICENESS=${bad} is not a niceness`,
      );
    }
  });
});
