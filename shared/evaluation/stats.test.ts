import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { comparePassRates, fisherExactTwoSided, passAtK, passHatK, quantile, wilsonInterval } from './stats.ts';

// passed ≤ n, n ≥ 0: one test case's repeated runs.
const counts = (maxN: number) => fc.integer({ min: 0, max: maxN }).chain((n) => fc.record({ n: fc.constant(n), passed: fc.integer({ min: 0, max: n }) }));

describe('wilsonInterval', () => {
  // Reference values: R prop.test(x, n, correct = FALSE)$conf.int, recomputed at 30 digits.
  it.each([
    [8, 10, 0.95, 0.4901624715, 0.9433178485],
    [0, 10, 0.95, 0, 0.2775327999],
    [10, 10, 0.95, 0.7224672001, 1],
    [1, 1, 0.95, 0.2065493144, 1],
    [50, 100, 0.95, 0.4038315304, 0.5961684696],
    [3, 20, 0.95, 0.0523687459, 0.3604188647],
    [8, 10, 0.99, 0.4008186965, 0.9598688475],
  ])('%i/%i at %f -> [%f, %f]', (passed, n, confidence, low, high) => {
    const interval = wilsonInterval(passed, n, confidence);
    expect(interval?.low).toBeCloseTo(low, 6);
    expect(interval?.high).toBeCloseTo(high, 6);
  });

  it('is exactly 0 / 1 at the extremes and null without runs', () => {
    expect(wilsonInterval(0, 7)?.low).toBe(0);
    expect(wilsonInterval(7, 7)?.high).toBe(1);
    expect(wilsonInterval(0, 0)).toBeNull();
  });

  it('contains passed/n and lies within [0, 1]', () => {
    fc.assert(
      fc.property(counts(5000), fc.double({ min: 0.5, max: 0.999, noNaN: true }), ({ n, passed }, confidence) => {
        const interval = wilsonInterval(passed, n, confidence);
        if (n === 0) return interval === null;
        const rate = passed / n;
        return interval !== null && interval.low >= 0 && interval.high <= 1 && interval.low <= rate && rate <= interval.high;
      }),
      { seed: 7, numRuns: 500 },
    );
  });

  it('narrows as confidence falls', () => {
    const wide = wilsonInterval(6, 10, 0.99)!;
    const narrow = wilsonInterval(6, 10, 0.8)!;
    expect(narrow.low).toBeGreaterThan(wide.low);
    expect(narrow.high).toBeLessThan(wide.high);
  });

  it.each([
    [() => wilsonInterval(11, 10), /^passed must be <= n/],
    [() => wilsonInterval(-1, 10), /^passed /],
    [() => wilsonInterval(1.5, 10), /^passed /],
    [() => wilsonInterval(1, Number.NaN), /^n /],
    [() => wilsonInterval(1, 10, 1), /^confidence /],
    [() => wilsonInterval(1, 10, 0), /^confidence /],
  ])('rejects bad input %#', (call, message) => {
    expect(call).toThrow(RangeError);
    expect(call).toThrow(message);
  });
});

describe('passAtK', () => {
  it('pass@1 is the mean per-test-case pass rate', () => {
    expect(passAtK([{ n: 10, passed: 3 }, { n: 4, passed: 4 }, { n: 5, passed: 0 }], 1)).toBeCloseTo((0.3 + 1 + 0) / 3, 12);
  });

  it('matches 1 - C(n-c, k)/C(n, k)', () => {
    expect(passAtK([{ n: 10, passed: 3 }], 5)).toBeCloseTo(1 - 21 / 252, 12);
    expect(passAtK([{ n: 5, passed: 1 }], 2)).toBeCloseTo(1 - 6 / 10, 12);
    expect(passAtK([{ n: 10, passed: 6 }], 5)).toBe(1); // only 4 failures: any 5 include a pass
    expect(passAtK([{ n: 10, passed: 0 }], 5)).toBe(0);
  });

  it('stays finite and exact-ish with many runs (no huge binomials)', () => {
    // C(990, 100)/C(1000, 100) = ∏_{i=991}^{1000} (1 - 100/i)
    let expected = 1;
    for (let i = 991; i <= 1000; i++) expected *= 1 - 100 / i;
    expect(passAtK([{ n: 1000, passed: 10 }], 100)).toBeCloseTo(1 - expected, 12);
  });

  it('skips test cases with n < k and is null when none is left', () => {
    expect(passAtK([{ n: 10, passed: 3 }, { n: 2, passed: 2 }], 5)).toBeCloseTo(1 - 21 / 252, 12);
    expect(passAtK([{ n: 2, passed: 2 }], 5)).toBeNull();
    expect(passAtK([], 1)).toBeNull();
  });

  it('is non-decreasing in k', () => {
    fc.assert(
      fc.property(fc.array(counts(30), { minLength: 1, maxLength: 8 }), fc.integer({ min: 1, max: 29 }), (testCases, k) => {
        // Fix the eligible set so only k varies: every test case has n ≥ k + 1.
        const eligible = testCases.filter((t) => t.n >= k + 1);
        if (eligible.length === 0) return true;
        return passAtK(eligible, k + 1)! >= passAtK(eligible, k)! - 1e-12;
      }),
      { seed: 11, numRuns: 500 },
    );
  });

  it.each([
    [() => passAtK([{ n: 3, passed: 1 }], 0), /^k /],
    [() => passAtK([{ n: 3, passed: 1 }], 1.5), /^k /],
    [() => passAtK([{ n: 3, passed: 1 }, { n: 3, passed: 4 }], 1), /^testCases\[1\]\.passed must be <= testCases\[1\]\.n/],
  ])('rejects bad input %#', (call, message) => {
    expect(call).toThrow(RangeError);
    expect(call).toThrow(message);
  });
});

describe('passHatK', () => {
  it('matches C(c, k)/C(n, k)', () => {
    expect(passHatK([{ n: 10, passed: 7 }], 5)).toBeCloseTo(21 / 252, 12);
    expect(passHatK([{ n: 10, passed: 3 }], 1)).toBeCloseTo(0.3, 12);
    expect(passHatK([{ n: 10, passed: 7 }, { n: 4, passed: 2 }], 2)).toBeCloseTo((21 / 45 + 1 / 6) / 2, 12);
  });

  it('is 1 when every run passed and 0 when fewer than k passed', () => {
    expect(passHatK([{ n: 8, passed: 8 }], 8)).toBe(1);
    expect(passHatK([{ n: 8, passed: 8 }], 3)).toBe(1);
    expect(passHatK([{ n: 8, passed: 2 }], 3)).toBe(0);
  });

  it('skips test cases with n < k and is null when none is left', () => {
    expect(passHatK([{ n: 8, passed: 8 }, { n: 2, passed: 0 }], 3)).toBe(1);
    expect(passHatK([{ n: 2, passed: 2 }], 3)).toBeNull();
  });

  it('is non-increasing in k, and never above pass@k', () => {
    fc.assert(
      fc.property(fc.array(counts(30), { minLength: 1, maxLength: 8 }), fc.integer({ min: 1, max: 29 }), (testCases, k) => {
        const eligible = testCases.filter((t) => t.n >= k + 1);
        if (eligible.length === 0) return true;
        return passHatK(eligible, k + 1)! <= passHatK(eligible, k)! + 1e-12 && passHatK(eligible, k)! <= passAtK(eligible, k)! + 1e-12;
      }),
      { seed: 13, numRuns: 500 },
    );
  });
});

describe('fisherExactTwoSided', () => {
  // Reference values: R fisher.test(matrix(c(a, c, b, d), 2))$p.value, recomputed with exact rationals.
  it.each([
    [3, 1, 1, 3, 0.4857142857], // Fisher's lady tasting tea
    [1, 9, 11, 3, 0.0027594562],
    [5, 0, 0, 5, 0.0079365079],
    [30, 0, 20, 10, 0.0007970131],
    [480, 520, 430, 570, 0.0277615531],
    [1200, 800, 1130, 870, 0.026932561],
    [2500, 2500, 2400, 2600, 0.0476536136],
  ])('[[%i, %i], [%i, %i]] -> %f', (a, b, c, d, p) => {
    expect(fisherExactTwoSided(a, b, c, d)).toBeCloseTo(p, 9);
  });

  it('is 1 for a table with no information', () => {
    expect(fisherExactTwoSided(0, 0, 0, 0)).toBe(1);
    expect(fisherExactTwoSided(4, 6, 0, 0)).toBe(1);
  });

  it('lies in [0, 1] and is symmetric under swapping rows, columns and transposing', () => {
    const cell = fc.integer({ min: 0, max: 300 });
    fc.assert(
      fc.property(cell, cell, cell, cell, (a, b, c, d) => {
        const p = fisherExactTwoSided(a, b, c, d);
        expect(p).toBeGreaterThanOrEqual(0);
        expect(p).toBeLessThanOrEqual(1);
        expect(fisherExactTwoSided(c, d, a, b)).toBeCloseTo(p, 10);
        expect(fisherExactTwoSided(b, a, d, c)).toBeCloseTo(p, 10);
        expect(fisherExactTwoSided(a, c, b, d)).toBeCloseTo(p, 10);
      }),
      { seed: 17, numRuns: 300 },
    );
  });

  it('rejects a negative or fractional cell, naming it', () => {
    expect(() => fisherExactTwoSided(1, -1, 1, 1)).toThrow(/^b /);
    expect(() => fisherExactTwoSided(1, 1, 0.5, 1)).toThrow(RangeError);
  });
});

describe('comparePassRates', () => {
  it('runs Fisher on passed/failed per side', () => {
    expect(comparePassRates({ passed: 1, n: 12 }, { passed: 9, n: 12 })).toEqual({ test: 'fisher-exact-two-sided', pValue: fisherExactTwoSided(1, 11, 9, 3), significant: true });
    expect(comparePassRates({ passed: 3, n: 4 }, { passed: 1, n: 4 })).toMatchObject({ pValue: expect.closeTo(0.4857142857, 9), significant: false });
  });

  it('respects alpha', () => {
    // p ≈ 0.0278: significant at 0.05, not at 0.01.
    expect(comparePassRates({ passed: 480, n: 1000 }, { passed: 430, n: 1000 })?.significant).toBe(true);
    expect(comparePassRates({ passed: 480, n: 1000 }, { passed: 430, n: 1000 }, 0.01)?.significant).toBe(false);
  });

  it('is null when either side has no runs', () => {
    expect(comparePassRates({ passed: 0, n: 0 }, { passed: 3, n: 5 })).toBeNull();
    expect(comparePassRates({ passed: 3, n: 5 }, { passed: 0, n: 0 })).toBeNull();
  });

  it('never calls identical pass rates significant', () => {
    fc.assert(
      fc.property(counts(20), fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 50 }), ({ n, passed }, scaleX, scaleY) => {
        if (n === 0) return true;
        const result = comparePassRates({ passed: passed * scaleX, n: n * scaleX }, { passed: passed * scaleY, n: n * scaleY });
        return result !== null && !result.significant && result.pValue > 0.999;
      }),
      { seed: 19, numRuns: 500 },
    );
  });

  it('rejects bad counts and alpha, naming them', () => {
    expect(() => comparePassRates({ passed: 6, n: 5 }, { passed: 1, n: 5 })).toThrow(/^x\.passed must be <= x\.n/);
    expect(() => comparePassRates({ passed: 1, n: 5 }, { passed: 1, n: -5 })).toThrow(/^y\.n /);
    expect(() => comparePassRates({ passed: 1, n: 5 }, { passed: 1, n: 5 }, 0)).toThrow(/^alpha /);
  });
});

describe('quantile', () => {
  it('interpolates linearly like R type 7 / numpy', () => {
    expect(quantile([3, 6, 7, 8, 8, 9, 10, 13, 15, 16, 20], 0.5)).toBe(9);
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([10, 20, 30, 40, 50], 0.9)).toBeCloseTo(46, 12); // (5 − 1)·0.9 = 3.6 → 40 + 0.6·10
    expect(quantile([4, 1, 3, 2], 0)).toBe(1);
    expect(quantile([4, 1, 3, 2], 1)).toBe(4);
    expect(quantile([42], 0.3)).toBe(42);
  });

  it('is null for an empty list and leaves the input order alone', () => {
    expect(quantile([], 0.5)).toBeNull();
    const values = [5, 3, 9, 1];
    quantile(values, 0.5);
    expect(values).toEqual([5, 3, 9, 1]);
  });

  it('rejects q outside [0, 1] and non-finite values', () => {
    expect(() => quantile([1, 2], 1.1)).toThrow(/^q /);
    expect(() => quantile([1, 2], Number.NaN)).toThrow(RangeError);
    expect(() => quantile([1, Number.NaN], 0.5)).toThrow(/^values /);
  });
});
