import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ProviderThrottle, ThrottleReport } from '../../shared/gateway.ts';
import { applyThrottle, BASE_MS, CAP_MS, DECAY_MS, heldFor, holdMs, levelAt, MAX_LEVEL, STALE_MS, ThrottleBook } from './throttle.ts';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
const row = (over: Partial<ProviderThrottle> & { at: number }): ProviderThrottle => {
  const { at, ...rest } = over;
  return { provider: 'anthropic', model: 'claude-x', status: 429, count: 1, ok_since: 0, retry_after_s: null, last_at: iso(at), ...rest };
};
const report = (now: number, throttles: ProviderThrottle[]): ThrottleReport => ({ now: iso(now), window_s: 600, throttles });

describe('holdMs', () => {
  it.each([
    ['level 1 without retry-after: the base', 1, null, BASE_MS],
    ['level 1, a shorter retry-after: the base', 1, 2, BASE_MS],
    ['level 1, a longer retry-after: the retry-after', 1, 30, 30_000],
    ['level 2 doubles', 2, null, 2 * BASE_MS],
    ['level 3 doubles again', 3, 1, 4 * BASE_MS],
    ['the top level is capped', MAX_LEVEL, null, CAP_MS],
    ['a retry-after past the cap is capped', 1, 3600, CAP_MS],
    ['a level past the top is the top', MAX_LEVEL + 5, null, CAP_MS],
  ])('%s', (_name, level, retryAfter, expected) => {
    expect(holdMs(level, retryAfter)).toBe(expected);
  });

  it('MAX_LEVEL is the first level whose back-off reaches the cap', () => {
    expect(BASE_MS * 2 ** (MAX_LEVEL - 1)).toBeGreaterThanOrEqual(CAP_MS);
    expect(BASE_MS * 2 ** (MAX_LEVEL - 2)).toBeLessThan(CAP_MS);
  });
});

describe('applyThrottle', () => {
  it.each([
    { name: 'first throttle: level 1, held base from last_at', before: undefined, r: row({ at: T0 }), now: T0 + 1000, level: 1, until: T0 + BASE_MS, started: true },
    { name: 'first throttle with retry-after 20 s: held 20 s', before: undefined, r: row({ at: T0, retry_after_s: 20 }), now: T0 + 1000, level: 1, until: T0 + 20_000, started: true },
    { name: 'an old throttle seen late: its hold is already over, nothing started', before: undefined, r: row({ at: T0 }), now: T0 + BASE_MS + 1, level: 1, until: T0 + BASE_MS, started: false },
    {
      name: 'a new throttle while held doubles (not a new hold)',
      before: { provider: 'anthropic', model: 'claude-x', level: 1, lastThrottleMs: T0, heldUntilMs: T0 + BASE_MS, holdStartMs: T0, status: 429, retryAfterS: null, count: 1 },
      r: row({ at: T0 + 3000, count: 2 }),
      now: T0 + 3500,
      level: 2,
      until: T0 + 3000 + 2 * BASE_MS,
      started: false,
    },
    {
      name: 'the same last_at again is no new evidence',
      before: { provider: 'anthropic', model: 'claude-x', level: 2, lastThrottleMs: T0, heldUntilMs: T0 + 2 * BASE_MS, holdStartMs: T0, status: 429, retryAfterS: null, count: 1 },
      r: row({ at: T0, count: 1 }),
      now: T0 + 8000,
      level: 2,
      until: T0 + 2 * BASE_MS,
      started: false,
    },
    {
      name: 'a throttle soon after the hold ended (level not decayed) doubles and starts a hold',
      before: { provider: 'anthropic', model: 'claude-x', level: 1, lastThrottleMs: T0, heldUntilMs: T0 + BASE_MS, holdStartMs: T0, status: 429, retryAfterS: null, count: 1 },
      r: row({ at: T0 + BASE_MS + 10_000, count: 2 }),
      now: T0 + BASE_MS + 10_001,
      level: 2,
      until: T0 + BASE_MS + 10_000 + 2 * BASE_MS,
      started: true,
    },
    {
      name: 'a throttle after a decay period per level: back at level 1',
      before: { provider: 'anthropic', model: 'claude-x', level: 1, lastThrottleMs: T0, heldUntilMs: T0 + BASE_MS, holdStartMs: T0, status: 429, retryAfterS: null, count: 1 },
      r: row({ at: T0 + BASE_MS + DECAY_MS, count: 2 }),
      now: T0 + BASE_MS + DECAY_MS + 1,
      level: 1,
      until: T0 + BASE_MS + DECAY_MS + BASE_MS,
      started: true,
    },
    {
      name: 'level 4, two decay periods quiet, then a throttle: level 3',
      before: { provider: 'anthropic', model: 'claude-x', level: 4, lastThrottleMs: T0, heldUntilMs: T0 + 8 * BASE_MS, holdStartMs: T0, status: 429, retryAfterS: null, count: 4 },
      r: row({ at: T0 + 8 * BASE_MS + 2 * DECAY_MS + 1 }),
      now: T0 + 8 * BASE_MS + 2 * DECAY_MS + 2,
      level: 3,
      until: T0 + 8 * BASE_MS + 2 * DECAY_MS + 1 + 4 * BASE_MS,
      started: true,
    },
    {
      name: 'good answers since the last throttle end the hold now; the level stays',
      before: { provider: 'anthropic', model: 'claude-x', level: 3, lastThrottleMs: T0, heldUntilMs: T0 + 4 * BASE_MS, holdStartMs: T0, status: 429, retryAfterS: null, count: 3 },
      r: row({ at: T0, count: 3, ok_since: 2 }),
      now: T0 + 6000,
      level: 3,
      until: T0 + 6000,
      started: false,
    },
    { name: 'a first sight with good answers since: no hold', before: undefined, r: row({ at: T0, ok_since: 1 }), now: T0 + 1000, level: 1, until: T0 + 1000, started: false },
  ])('$name', ({ before, r, now, level, until, started }) => {
    const out = applyThrottle(before, r, now);
    expect(out.state).toMatchObject({ level, heldUntilMs: until });
    expect(out.started).toBe(started);
  });
});

describe('levelAt', () => {
  it.each([
    ['held: no decay', 3, T0 + BASE_MS - 1, 3],
    ['just after the hold: none yet', 3, T0 + 4 * BASE_MS + DECAY_MS - 1, 3],
    ['one period after the hold: one less', 3, T0 + 4 * BASE_MS + DECAY_MS, 2],
    ['long after: 0, never below', 3, T0 + 100 * DECAY_MS, 0],
  ])('%s', (_name, level, now, expected) => {
    expect(levelAt({ level, lastThrottleMs: T0, heldUntilMs: T0 + 4 * BASE_MS }, now)).toBe(expected);
  });
});

describe('ThrottleBook', () => {
  it('holds a throttled provider+model, not others, and resumes it when the hold ends', () => {
    const book = new ThrottleBook();
    const started = book.observe(report(T0 + 1000, [row({ at: T0, retry_after_s: 10 })]), T0 + 1000);
    expect(started).toHaveLength(1);
    expect(book.holdOf('anthropic', ['claude-x'], T0 + 1000)).toMatchObject({ heldUntilMs: T0 + 10_000, level: 1, retryAfterS: 10 });
    expect(book.holdOf('anthropic', ['claude-y'], T0 + 1000)).toBeUndefined();
    expect(book.holdOf('openai', ['claude-x'], T0 + 1000)).toBeUndefined();
    expect(book.holdOf('anthropic', ['claude-x'], T0 + 10_000)).toBeUndefined();
  });

  it('reads the report against its own now: a reader clock 1 h behind still holds for the same span', () => {
    const book = new ThrottleBook();
    const local = T0 - 3_600_000;
    book.observe(report(T0 + 1000, [row({ at: T0, retry_after_s: 10 })]), local);
    expect(book.holds(local)[0]!.heldUntilMs).toBe(local + 9000);
    expect(book.holdOf('anthropic', ['claude-x'], local + 8999)).toMatchObject({ provider: 'anthropic', model: 'claude-x', heldUntilMs: local + 9000 });
    expect(book.holdOf('anthropic', ['claude-x'], local + 9000)).toBeUndefined();
  });

  it('a report polled again with nothing new does not raise the level', () => {
    const book = new ThrottleBook();
    for (let i = 0; i < 10; i++) book.observe(report(T0 + i * 500, [row({ at: T0, count: 7 })]), T0 + i * 500);
    expect(book.state('anthropic', 'claude-x')).toMatchObject({ level: 1, count: 7 });
  });

  it('a model null throttle holds every model of the provider', () => {
    const book = new ThrottleBook();
    book.observe(report(T0, [row({ at: T0, model: null })]), T0);
    expect(book.holdOf('anthropic', ['claude-anything'], T0)).toMatchObject({ model: null });
    expect(book.holdOf('openai', ['gpt-5'], T0)).toBeUndefined();
  });

  it('stale data holds nothing: no report for STALE_MS', () => {
    const book = new ThrottleBook();
    book.observe(report(T0, [row({ at: T0, retry_after_s: 200 })]), T0);
    expect(book.holds(T0 + STALE_MS)).toHaveLength(1);
    expect(book.holds(T0 + STALE_MS + 1)).toEqual([]);
    expect(book.stale(T0 + STALE_MS + 1)).toBe(true);
    expect(new ThrottleBook().holds(T0)).toEqual([]);
  });

  it('forgets a key once its hold is over and its level decayed to 0', () => {
    const book = new ThrottleBook();
    book.observe(report(T0, [row({ at: T0 })]), T0);
    book.observe(report(T0 + BASE_MS + DECAY_MS, []), T0 + BASE_MS + DECAY_MS);
    expect(book.state('anthropic', 'claude-x')).toBeUndefined();
  });

  it('a storm of throttles escalates step by step to the cap and no further', () => {
    const book = new ThrottleBook();
    let now = T0;
    for (let i = 1; i <= MAX_LEVEL + 3; i++) {
      now += 1000;
      book.observe(report(now, [row({ at: now, count: i })]), now);
    }
    const s = book.state('anthropic', 'claude-x')!;
    expect(s.level).toBe(MAX_LEVEL);
    expect(s.heldUntilMs).toBe(now + CAP_MS);
  });
});

describe('heldFor', () => {
  const h = (model: string | null, until: number) => ({ provider: 'p', model, heldUntilMs: until, level: 1, status: 429, retryAfterS: null, count: 1 });
  it('matches any of the ids, or the whole provider, and returns the longest', () => {
    expect(heldFor([h('a', 5), h(null, 9), h('b', 20)], 'p', ['a'])).toMatchObject({ model: null, heldUntilMs: 9 });
    expect(heldFor([h('a', 5), h('b', 20)], 'p', ['x', 'b'])).toMatchObject({ model: 'b' });
    expect(heldFor([h('a', 5)], 'q', ['a'])).toBeUndefined();
  });
});

describe('ThrottleBook (properties)', () => {
  const event = fc.record({
    dt: fc.integer({ min: 0, max: 120_000 }),
    model: fc.constantFrom('m1', 'm2', null),
    throttled: fc.boolean(),
    retryAfter: fc.option(fc.integer({ min: 0, max: 4000 }), { nil: null }),
    ok: fc.nat(3),
  });

  it('every hold is bounded by CAP_MS from the reader clock, the level stays in 1..MAX_LEVEL, and a quiet provider recovers', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), fc.integer({ min: -10_000_000, max: 10_000_000 }), (events, skew) => {
        const book = new ThrottleBook();
        const rows = new Map<string, ProviderThrottle>();
        let now = T0;
        for (const e of events) {
          now += e.dt;
          const key = e.model ?? '';
          const prev = rows.get(key);
          if (e.throttled) rows.set(key, row({ at: now, model: e.model, count: (prev?.count ?? 0) + 1, retry_after_s: e.retryAfter }));
          else if (prev) rows.set(key, { ...prev, ok_since: prev.ok_since + e.ok });
          book.observe(report(now, [...rows.values()]), now + skew);
          for (const hold of book.holds(now + skew)) {
            expect(hold.heldUntilMs - (now + skew)).toBeLessThanOrEqual(CAP_MS);
            expect(hold.level).toBeGreaterThanOrEqual(1);
            expect(hold.level).toBeLessThanOrEqual(MAX_LEVEL);
          }
        }
        // Nothing new for as long as the cap plus the decay of every level: nothing held, nothing remembered.
        const later = now + CAP_MS + MAX_LEVEL * DECAY_MS + 1;
        book.observe(report(later, [...rows.values()]), later + skew);
        expect(book.holds(later + skew)).toEqual([]);
        for (const m of ['m1', 'm2', null]) expect(book.state('anthropic', m)).toBeUndefined();
      }),
    );
  });

  it('deterministic: the same reports give the same holds', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 20 }), (events) => {
        const run = () => {
          const book = new ThrottleBook();
          let now = T0;
          const out: unknown[] = [];
          for (const e of events) {
            now += e.dt;
            if (e.throttled) book.observe(report(now, [row({ at: now, model: e.model, retry_after_s: e.retryAfter, ok_since: 0 })]), now);
            out.push(book.holds(now));
          }
          return out;
        };
        expect(run()).toEqual(run());
      }),
    );
  });
});
