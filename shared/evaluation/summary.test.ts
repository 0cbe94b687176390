import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { EvaluationStatus, InlineEvaluationSpec } from './schema.ts';
import { summarizeEvaluation } from './summary.ts';
import type { SlotState } from './summary.ts';
import { finishedSlot, pendingSlot } from './slot-states.test-support.ts';

const done = finishedSlot;
const pending = pendingSlot;

const spec = InlineEvaluationSpec.parse({
  matrix: [
    { harness: 'claude', models: ['m1', 'm2'] },
    { harness: 'gg', models: ['m1'] },
  ],
  testCases: [
    { name: 't1', prompt: 'one' },
    { name: 't2', prompt: 'two' },
  ],
  repeats: 2,
});

describe('summarizeEvaluation', () => {
  const slots: SlotState[] = [
    done('claude', 'm1', 't1', 'succeeded', { passed: true, reward: 1 }, { input: 100, cost: 0.1, seconds: 10 }),
    done('claude', 'm1', 't1', 'succeeded', { passed: true, reward: 1 }, { input: 200, cost: 0.2, seconds: 20 }),
    done('claude', 'm1', 't2', 'harness_failed', { passed: true, reward: 0.5 }, { input: 300, cost: 0.3, seconds: 30 }),
    done('claude', 'm1', 't2', 'timed_out', { passed: false }, { input: 400, cost: 0.4, seconds: 40 }),
    done('claude', 'm2', 't1', 'infrastructure_failed', null),
    done('claude', 'm2', 't1', 'succeeded', { passed: false }, { input: 50, cost: null }),
    done('claude', 'm2', 't2', 'succeeded', { passed: false }, { input: 60 }),
    done('claude', 'm2', 't2', 'cancelled', null),
    done('gg', 'm1', 't1', 'succeeded', { passed: true }),
    done('gg', 'm1', 't1', 'succeeded', { passed: true }),
    pending('gg', 'm1', 't2'),
    pending('gg', 'm1', 't2'),
  ];
  const status = summarizeEvaluation(spec, slots);

  it('is a valid status: progress over the matrix and final runs by outcome', () => {
    expect(EvaluationStatus.parse(status)).toEqual(status);
    expect(status.phase).toBe('Running');
    expect(status.runs).toEqual({ total: 12, final: 10, scored: 8, passed: 5, byOutcome: { succeeded: 6, harness_failed: 1, timed_out: 1, infrastructure_failed: 1, cancelled: 1 } });
    expect(status.cells!.map((c) => `${c.harness}/${c.model}`)).toEqual(['claude/m1', 'claude/m2', 'gg/m1']);
  });

  it("scores every run whose check ran, whatever the agent's outcome: pass rate, its Wilson interval, pass@k and pass^k, mean reward", () => {
    const cell = status.cells![0]!;
    expect(cell).toMatchObject({ runs: 4, final: 4, scored: 4, passed: 3, infrastructureFailed: 0, unscored: 0, passRate: 0.75 });
    expect(cell.passRateInterval!.low).toBeCloseTo(0.3006, 3);
    expect(cell.passRateInterval!.high).toBeCloseTo(0.9544, 3);
    // t1 2/2, t2 1/2: pass@2 = mean(1, 1 - C(1,2)/C(2,2)) = 1; pass^2 = mean(1, 0) = 0.5.
    expect(cell.passAtK).toEqual({ k: 2, value: 1 });
    expect(cell.passHatK).toEqual({ k: 2, value: 0.5 });
    expect(cell.meanReward).toBeCloseTo(2.5 / 3, 10); // the run that wrote no reward is not a 0
  });

  it('tokens by class (sum and median of the runs reporting it; a class none reports is absent), costs, durations', () => {
    const cell = status.cells![0]!;
    expect(cell.tokens).toEqual({ input: { sum: 1000, median: 250 }, output: { sum: 40, median: 10 }, cache_read: { sum: 0, median: 0 } });
    expect(cell.actualCostUsd.sum).toBeCloseTo(1, 10);
    expect(cell.actualCostUsd.mean).toBeCloseTo(0.25, 10);
    expect(cell.comparableCostUsd).toEqual({ sum: 0.08, mean: 0.02 });
    expect(cell.durationSeconds).toEqual({ p50: 25, p90: 37 }); // type 7 (R, numpy): 30 + 0.7 x 10
  });

  it('infrastructure failures are counted apart and never as failed tasks; cancelled runs are unscored; a missing cost makes the sum unknown', () => {
    const cell = status.cells![1]!;
    expect(cell).toMatchObject({ runs: 4, final: 4, scored: 2, passed: 0, infrastructureFailed: 1, unscored: 1, passRate: 0 });
    expect(cell.actualCostUsd).toEqual({ sum: null, mean: null });
    expect(cell.meanReward).toBeNull();
  });

  it('a cell still running counts what has ended; pass@k has no value before a test case has k scored runs of... any', () => {
    const cell = status.cells![2]!;
    expect(cell).toMatchObject({ final: 2, scored: 2, passed: 2, passRate: 1 });
    expect(cell.passAtK).toEqual({ k: 2, value: 1 });
    const none = summarizeEvaluation(spec, [pending('gg', 'm1', 't1')]);
    expect(none.cells![2]).toMatchObject({ final: 0, scored: 0, passRate: null, passRateInterval: null, passAtK: { k: 2, value: null }, meanReward: null, tokens: {}, durationSeconds: { p50: null, p90: null } });
    expect(none.runs).toEqual({ total: 12, final: 0, scored: 0, passed: 0, byOutcome: {} });
  });

  it('marks pairs of cells sharing a model or a harness whose pass rates differ significantly, higher first; not others', () => {
    const wide = InlineEvaluationSpec.parse({ matrix: [{ harness: 'a', models: ['m', 'n'] }, { harness: 'b', models: ['m'] }], testCases: Array.from({ length: 20 }, (_, i) => ({ name: `t${i}`, prompt: 'x' })) });
    const runs = (harness: string, model: string, passes: number) => Array.from({ length: 20 }, (_, i) => done(harness, model, `t${i}`, 'succeeded', { passed: i < passes }));
    const s = summarizeEvaluation(wide, [...runs('a', 'm', 4), ...runs('a', 'n', 19), ...runs('b', 'm', 18)]);
    expect(s.phase).toBe('Completed');
    expect(s.comparisons!.map((c) => [c.fixed, `${c.a.harness}/${c.a.model}`, `${c.b.harness}/${c.b.model}`])).toEqual([
      ['harness', 'a/n', 'a/m'],
      ['model', 'b/m', 'a/m'],
    ]);
    expect(s.comparisons![0]!.pValue).toBeLessThan(s.comparisons![1]!.pValue);
    expect(s.comparisons!.every((c) => c.pValue < 0.05)).toBe(true);
    // a/n and b/m share nothing: never compared. The small difference of the first table is not significant.
    expect(status.comparisons).toEqual([]);
  });

  test.prop([fc.array(fc.record({ cell: fc.integer({ min: 0, max: 2 }), testCase: fc.constantFrom('t1', 't2'), state: fc.constantFrom('pending', 'passed', 'failed', 'infra', 'cancelled', 'no-result') }), { maxLength: 40 })])(
    'for any slots: a valid status whose counts add up',
    (raw) => {
      const cells = [['claude', 'm1'], ['claude', 'm2'], ['gg', 'm1']] as const;
      const slots = raw.map(({ cell, testCase, state }): SlotState => {
        const [harness, model] = cells[cell]!;
        if (state === 'pending') return pending(harness, model, testCase);
        if (state === 'no-result') return { cell: { harness, model }, testCase, final: true };
        if (state === 'infra') return done(harness, model, testCase, 'infrastructure_failed', null);
        if (state === 'cancelled') return done(harness, model, testCase, 'cancelled', null);
        return done(harness, model, testCase, 'succeeded', { passed: state === 'passed' });
      });
      const s = EvaluationStatus.parse(summarizeEvaluation(spec, slots));
      expect(s.runs!.final).toBe(slots.filter((x) => x.final).length);
      expect(Object.values(s.runs!.byOutcome).reduce((a, b) => a + b, 0)).toBe(s.runs!.final);
      for (const cell of s.cells!) {
        expect(cell.scored + cell.infrastructureFailed + cell.unscored).toBe(cell.final);
        if (cell.passRate !== null) expect(cell.passRate).toBe(cell.passed / cell.scored);
      }
    },
  );
});
