import { describe, expect, it } from 'vitest';
import { ToolSpanBudget } from './otel-budget.ts';

describe('tool span budget', () => {
  it('admits a burst up to its capacity, then refills at its rate, never above the capacity', () => {
    const budget = new ToolSpanBudget({ capacity: 3, perSecond: 2, now: 0 });
    expect([0, 0, 0, 0].map(() => budget.take(0))).toEqual([true, true, true, false]);
    expect(budget.take(499)).toBe(false); // 0.998 of a token
    expect(budget.take(500)).toBe(true); // one token after 500 ms at 2/s
    expect(budget.take(500)).toBe(false);
    expect([1, 2, 3, 4].map(() => budget.take(60_000))).toEqual([true, true, true, false]); // a long pause refills to 3, not 120
  });

  it('a clock that goes back refills nothing', () => {
    const budget = new ToolSpanBudget({ capacity: 1, perSecond: 1000, now: 100 });
    expect(budget.take(100)).toBe(true);
    expect(budget.take(50)).toBe(false);
  });

  it('a rate of 0 admits only the first burst', () => {
    const budget = new ToolSpanBudget({ capacity: 2, perSecond: 0, now: 0 });
    expect([0, 1e6, 2e6].map((t) => budget.take(t))).toEqual([true, true, false]);
  });
});
