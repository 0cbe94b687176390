import { describe, expect, it } from 'vitest';
import { formatCheck, formatClock, formatClockShort, formatCost, formatCount, formatDuration, formatIdle, formatOffset, lineRange, totalTokens } from './format.ts';

describe('console formatters', () => {
  it("a check's verdict, with its reward when it wrote one", () => {
    expect(formatCheck({ passed: true, reward: 0.75 })).toBe('passed · 0.75');
    expect(formatCheck({ passed: false, reward: 0 })).toBe('failed · 0.00');
    expect(formatCheck({ passed: true, reward: null })).toBe('passed');
    expect(formatCheck(undefined)).toBe('—');
  });

  it.each([
    [undefined, '—'],
    [-5, '—'],
    [850, '850 ms'],
    [1_234, '1.2 s'],
    [12_300, '12 s'],
    [245_000, '4m 05s'],
    [7_380_000, '2h 03m'],
    [273_600_000, '3d 04h'],
  ])('duration %s ms -> %s', (ms, text) => expect(formatDuration(ms)).toBe(text));

  it('idle counts whole seconds, then minutes', () => {
    expect(formatIdle(7.9)).toBe('7s');
    expect(formatIdle(305)).toBe('5m 05s');
    expect(formatIdle(undefined)).toBe('—');
  });

  it.each([
    [undefined, '—'],
    [null, '—'],
    [0, '$0'],
    [0.0042, '$0.0042'],
    [0.37, '$0.37'],
    [12.4, '$12.40'],
  ])('cost %s -> %s', (usd, text) => expect(formatCost(usd)).toBe(text));

  it.each([
    [null, '—'],
    [9_999, '9,999'],
    [12_345, '12.3k'],
    [456_789, '457k'],
    [4_560_000, '4.56M'],
  ])('count %s -> %s', (n, text) => expect(formatCount(n)).toBe(text));

  it('total tokens: every prompt class plus output, reasoning never added again; unknown when nothing is reported', () => {
    expect(totalTokens({ input: 100, output: 50, cache_read: 1000, cache_write: 10, reasoning: 40 })).toBe(1160);
    expect(totalTokens({ input: 100, output: 50, cache_read: null, cache_write: null, reasoning: null })).toBe(150);
    expect(totalTokens({ input: null, output: null, cache_read: null, cache_write: null, reasoning: null })).toBeUndefined();
    expect(totalTokens(undefined)).toBeUndefined();
  });

  it.each([
    [undefined, undefined, ''],
    [12, undefined, ':12'],
    [12, 12, ':12'],
    [12, 40, ':12-40'],
    [undefined, 40, ':1-40'],
  ])('line range %s..%s -> %s', (a, b, text) => expect(lineRange(a, b)).toBe(text));

  it('event offsets from the run start', () => {
    const start = Date.parse('2026-12-05T10:00:00Z');
    expect(formatOffset('2026-12-05T10:00:07.25Z', start)).toBe('+0:07.3');
    expect(formatOffset('2026-12-05T10:12:01Z', start)).toBe('+12:01.0');
    expect(formatOffset('2026-12-05T11:02:03Z', start)).toBe('+1:02:03');
    expect(formatOffset('2026-12-05T10:00:01Z', undefined)).toBe('');
  });

  it('clock times carry the date only when it is not today', () => {
    const now = Date.parse('2026-12-05T12:00:00Z');
    expect(formatClock(new Date(now - 60_000).toISOString(), now)).not.toContain('2026');
    expect(formatClock('2026-11-30T12:00:00Z', now)).toMatch(/^2026-11-30 /);
    expect(formatClock(undefined, now)).toBe('—');
    // The runs table's narrow Started cell: today's time as is, another day as month-day and minutes.
    expect(formatClockShort(new Date(now - 60_000).toISOString(), now)).toBe(formatClock(new Date(now - 60_000).toISOString(), now));
    const noonDaysAgo = new Date(now - 5 * 86_400_000);
    noonDaysAgo.setHours(9, 7, 0, 0);
    expect(formatClockShort(noonDaysAgo.toISOString(), now)).toBe(`${String(noonDaysAgo.getMonth() + 1).padStart(2, '0')}-${String(noonDaysAgo.getDate()).padStart(2, '0')} 09:07`);
    expect(formatClockShort(undefined, now)).toBe('—');
  });
});
