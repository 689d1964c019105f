import { describe, expect, it } from '@jest/globals';
import { API_BASE_PATH } from '#shared/config';
import { functionNames, routes } from '#shared/routes';
import { scenarios, type Fixture } from '../load/scenarios';

const fixture: Fixture = {
  organization: 'org',
  runId: 'run-AAAAAAAAAAAAAAAA',
  commentRunIds: ['run-AAAAAAAAAAAAAAAA'],
  keyIds: ['rtk-AAAAAAAAAAAAAAAA', 'rtk-BBBBBBBBBBBBBBBB'],
  deletable: ['rtk-CCCCCCCCCCCCCCCC'],
  commentId: 'wsc-AAAAAAAAAAAAAAAA',
  notificationSecret: 'secret',
};
const pattern = (path: string) => new RegExp(`^${API_BASE_PATH}${path.replace(/\{\w+\}/g, '[^/]+')}$`);

describe('load and bench scenarios', () => {
  it('exist for exactly the functions of the route table', () => {
    expect(Object.keys(scenarios).sort()).toEqual(functionNames().sort());
  });

  it.each(functionNames())('%s: its requests reach that function', (name) => {
    const request = scenarios[name]!.request({ ...fixture, deletable: [...fixture.deletable] }, 3, 'u');
    const route = routes.find(
      (r) => r.method === request.method && pattern(r.path).test(`${API_BASE_PATH}${request.path}`),
    );
    expect(route?.function).toBe(name);
  });

  it('updates flip each key on every visit', () => {
    const bodies = [0, 1, 2, 3].map((n) => scenarios['reserved-tag-keys/update']!.request(fixture, n, 'u'));
    expect(bodies.map((b) => b.path)).toEqual([
      '/reserved-tag-keys/rtk-AAAAAAAAAAAAAAAA',
      '/reserved-tag-keys/rtk-BBBBBBBBBBBBBBBB',
      '/reserved-tag-keys/rtk-AAAAAAAAAAAAAAAA',
      '/reserved-tag-keys/rtk-BBBBBBBBBBBBBBBB',
    ]);
    expect(bodies.map((b) => (b.body as any).data.attributes['disable-overrides'])).toEqual([true, true, false, false]);
  });
});
