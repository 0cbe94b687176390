import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ThrottleLog } from './throttle-log.ts';
import { ThrottleReport } from '../shared/gateway.ts';

const T0 = Date.parse('2026-12-06T10:00:00Z');

describe('ThrottleLog', () => {
  it('counts throttles per provider+model, the good answers since the last, and forgets after the window', () => {
    let now = T0;
    const log = new ThrottleLog(() => now, 60);
    const at = (model: string | null, throttled: boolean, status = throttled ? 429 : 200, retryAfterS: number | null = null) => log.observe({ provider: 'anthropic', model, status, throttled, retryAfterS });
    at('claude-a', false); // a good answer of a model never throttled: nothing to report
    expect(log.report().throttles).toEqual([]);
    at('claude-a', true, 429, 3);
    now += 1000;
    at('claude-a', true, 529, null);
    at('claude-a', false);
    at('claude-a', false);
    at('claude-b', true, 429, 10);
    expect(log.report()).toEqual({
      now: new Date(T0 + 1000).toISOString(),
      window_s: 60,
      throttles: [
        { provider: 'anthropic', model: 'claude-a', status: 529, count: 2, ok_since: 2, last_at: new Date(T0 + 1000).toISOString(), retry_after_s: null },
        { provider: 'anthropic', model: 'claude-b', status: 429, count: 1, ok_since: 0, last_at: new Date(T0 + 1000).toISOString(), retry_after_s: 10 },
      ],
    });
    now = T0 + 1000 + 60_000;
    expect(log.report().throttles).toEqual([]);
  });

  it('any sequence of observations gives a valid, bounded report whose counts are the throttles seen', () => {
    const observation = fc.record({ model: fc.constantFrom('m1', 'm2', null), throttled: fc.boolean(), status: fc.constantFrom(200, 429, 529, 503), retryAfterS: fc.option(fc.nat(120)), advanceMs: fc.nat(5000) });
    fc.assert(
      fc.property(fc.array(observation, { maxLength: 200 }), (steps) => {
        let now = T0;
        const log = new ThrottleLog(() => now, 3600);
        let throttles = 0;
        for (const s of steps) {
          now += s.advanceMs;
          log.observe({ provider: 'openai', model: s.model, status: s.status, throttled: s.throttled, retryAfterS: s.retryAfterS });
          if (s.throttled) throttles += 1;
        }
        const report = ThrottleReport.parse(log.report());
        expect(report.throttles.length).toBeLessThanOrEqual(3);
        expect(report.throttles.reduce((n, t) => n + t.count, 0)).toBe(throttles);
      }),
    );
  });
});
