// Statistics for evaluation summaries: pass-rate intervals, pass@k / pass^k over repeated runs, and a test for
// whether two cells' pass rates differ. Pure functions; counts are validated and a bad one throws a RangeError
// whose message starts with the argument's name.
import { errorFunction, gammaln, probit, quantile as linearQuantile } from 'simple-statistics';

export interface Interval {
  low: number;
  high: number;
}

/** Repeated runs of one test case in one cell: `n` runs, `passed` of them passed. */
export interface TestCaseCounts {
  n: number;
  passed: number;
}

export interface PassRateComparison {
  test: 'fisher-exact-two-sided';
  pValue: number;
  significant: boolean;
}

/**
 * Wilson score interval for a binomial proportion (Wilson 1927; Brown, Cai & DasGupta 2001):
 * (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n), z = Φ⁻¹(1 − (1−confidence)/2).
 * Unlike the normal (Wald) interval it stays inside [0, 1] and is not degenerate at 0/n or n/n.
 * Returns null when n = 0 (no runs, no information).
 */
export function wilsonInterval(passed: number, n: number, confidence = 0.95): Interval | null {
  assertPassedOfN(passed, n, 'passed', 'n');
  assertOpenUnit(confidence, 'confidence');
  if (n === 0) return null;
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const z2 = z * z;
  const pHat = passed / n;
  const denominator = 1 + z2 / n;
  const centre = (pHat + z2 / (2 * n)) / denominator;
  const halfWidth = (z / denominator) * Math.sqrt((pHat * (1 - pHat)) / n + z2 / (4 * n * n));
  // At 0/n and n/n the bound is exactly 0 or 1 in theory; pin it so rounding cannot leave e.g. 1e-17.
  return {
    low: passed === 0 ? 0 : Math.max(0, centre - halfWidth),
    high: passed === n ? 1 : Math.min(1, centre + halfWidth),
  };
}

/**
 * Unbiased pass@k (Chen et al. 2021, "Evaluating Large Language Models Trained on Code", eq. 1): the chance that at
 * least one of k runs drawn without replacement from a test case's n runs passes, 1 − C(n−c, k)/C(n, k), averaged
 * over test cases. Test cases with n < k cannot estimate it and are left out; null when none has n ≥ k.
 */
export function passAtK(testCases: readonly TestCaseCounts[], k: number): number | null {
  assertPositiveInteger(k, 'k');
  return meanOverEligible(testCases, k, ({ n, passed }) => {
    const failed = n - passed;
    if (failed < k) return 1; // every k-subset contains a pass
    // C(n−c, k)/C(n, k) = ∏_{i=n−c+1}^{n} (1 − k/i): the paper's stable form, no huge binomials.
    let allFail = 1;
    for (let i = failed + 1; i <= n; i++) allFail *= 1 - k / i;
    return 1 - allFail;
  });
}

/**
 * pass^k (Yao et al. 2024, "τ-bench", §5): the chance that all k runs drawn without replacement from a test case's n
 * runs pass, C(c, k)/C(n, k), averaged over test cases; it measures consistency rather than best-of-k. Test cases
 * with n < k are left out; null when none has n ≥ k.
 */
export function passHatK(testCases: readonly TestCaseCounts[], k: number): number | null {
  assertPositiveInteger(k, 'k');
  return meanOverEligible(testCases, k, ({ n, passed }) => {
    if (passed < k) return 0;
    // C(c, k)/C(n, k) = ∏_{i=0}^{k−1} (c−i)/(n−i): a product of ratios ≤ 1, so it never overflows.
    let allPass = 1;
    for (let i = 0; i < k; i++) allPass *= (passed - i) / (n - i);
    return allPass;
  });
}

/**
 * Two-sided p-value of Fisher's exact test on the 2×2 table [[a, b], [c, d]] (Fisher 1935; computed as R's
 * fisher.test does): the sum of the hypergeometric probabilities, given the margins, of every table no more likely
 * than the observed one, with a 1e-7 relative tolerance so that ties lost to rounding still count.
 * Works in log space (log-gamma) so totals in the thousands do not overflow.
 */
export function fisherExactTwoSided(a: number, b: number, c: number, d: number): number {
  assertCount(a, 'a');
  assertCount(b, 'b');
  assertCount(c, 'c');
  assertCount(d, 'd');
  const row1 = a + b;
  const row2 = c + d;
  const col1 = a + c;
  // The top-left cell x fixes the table; with all margins fixed it ranges over [lo, hi].
  const lo = Math.max(0, col1 - row2);
  const hi = Math.min(row1, col1);
  // log P(x) up to a constant: log C(row1, x) + log C(row2, col1 − x); the constant cancels when normalising.
  const logWeights: number[] = [];
  for (let x = lo; x <= hi; x++) logWeights.push(logChoose(row1, x) + logChoose(row2, col1 - x));
  const maxLog = logWeights.reduce((max, w) => Math.max(max, w), -Infinity); // no spread: the support can be long
  const weights = logWeights.map((w) => Math.exp(w - maxLog));
  const total = weights.reduce((sum, w) => sum + w, 0);
  const observed = (weights[a - lo] ?? 0) * (1 + 1e-7);
  let atMostObserved = 0;
  for (const w of weights) if (w <= observed) atMostObserved += w;
  return Math.min(1, atMostObserved / total);
}

/**
 * Whether two pass rates differ: Fisher's exact two-sided test on [[x.passed, x.n − x.passed], [y.passed,
 * y.n − y.passed]], significant when p < alpha. Exact rather than a z-test because cells are small (tens of runs).
 * Returns null when either side has no runs.
 */
export function comparePassRates(x: TestCaseCounts, y: TestCaseCounts, alpha = 0.05): PassRateComparison | null {
  assertPassedOfN(x.passed, x.n, 'x.passed', 'x.n');
  assertPassedOfN(y.passed, y.n, 'y.passed', 'y.n');
  assertOpenUnit(alpha, 'alpha');
  if (x.n === 0 || y.n === 0) return null;
  const pValue = fisherExactTwoSided(x.passed, x.n - x.passed, y.passed, y.n - y.passed);
  return { test: 'fisher-exact-two-sided', pValue, significant: pValue < alpha };
}

/**
 * The q-quantile of `values` (0 ≤ q ≤ 1) by linear interpolation between order statistics at position (len − 1)·q:
 * Hyndman & Fan 1996 type 7, the default of R's quantile() and numpy.percentile (simple-statistics' `quantile`).
 * Does not reorder `values`. Returns null for an empty list.
 */
export function quantile(values: readonly number[], q: number): number | null {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`q must be between 0 and 1, got ${q}`);
  if (values.some((v) => !Number.isFinite(v))) throw new RangeError('values must all be finite numbers');
  if (values.length === 0) return null;
  return linearQuantile(values, q);
}

/**
 * Standard normal quantile Φ⁻¹(p). simple-statistics' probit uses a closed-form inverse-erf approximation that is off
 * by ~3e-3 at p = 0.975 (1.9572 instead of 1.95996), enough to move Wilson bounds in the 4th decimal; Newton steps
 * against its errorFunction (relative error < 1.2e-7) bring it to ~1e-7.
 */
function normalQuantile(p: number): number {
  let z = probit(p);
  for (let step = 0; step < 3; step++) {
    const cdf = 0.5 * (1 + errorFunction(z / Math.SQRT2));
    const density = Math.exp((-z * z) / 2) / Math.sqrt(2 * Math.PI);
    z -= (cdf - p) / density;
  }
  return z;
}

/** log C(n, k) = lnΓ(n+1) − lnΓ(k+1) − lnΓ(n−k+1). */
function logChoose(n: number, k: number): number {
  return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1);
}

function meanOverEligible(testCases: readonly TestCaseCounts[], k: number, estimate: (counts: TestCaseCounts) => number): number | null {
  let sum = 0;
  let eligible = 0;
  testCases.forEach((testCase, i) => {
    assertPassedOfN(testCase.passed, testCase.n, `testCases[${i}].passed`, `testCases[${i}].n`);
    if (testCase.n < k) return;
    sum += estimate(testCase);
    eligible++;
  });
  return eligible === 0 ? null : sum / eligible;
}

function assertCount(value: number, name: string): void {
  if (!Number.isInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
}

function assertPositiveInteger(value: number, name: string): void {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be an integer >= 1, got ${value}`);
}

function assertPassedOfN(passed: number, n: number, passedName: string, nName: string): void {
  assertCount(n, nName);
  assertCount(passed, passedName);
  if (passed > n) throw new RangeError(`${passedName} must be <= ${nName} (${n}), got ${passed}`);
}

function assertOpenUnit(value: number, name: string): void {
  if (!(value > 0 && value < 1)) throw new RangeError(`${name} must be strictly between 0 and 1, got ${value}`);
}
