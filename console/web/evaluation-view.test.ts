import { describe, expect, it } from 'vitest';
import type { EvaluationCellRow, EvaluationRow } from '../../shared/console.ts';
import { cellTokens, comparisonText, formatAtK, formatDurations, formatPassRate, formatPValue, formatUsdPerRun, kLabel, marksByCell, phaseOf, progressOf, runsLink, sortedEvaluations, statusBehind, tallyOf } from './evaluation-view.ts';

function cell(harness: string, model: string, patch: Partial<EvaluationCellRow> = {}): EvaluationCellRow {
  return {
    key: `k-${harness}-${model}`, harness, model, runs: 4, final: 4, scored: 3, passed: 2, infrastructureFailed: 1, unscored: 0, passRate: 2 / 3, passRateInterval: { low: 0.2077, high: 0.9385 },
    meanReward: null, tokens: {}, actualCostUsd: { sum: null, mean: null }, comparableCostUsd: { sum: 0.3, mean: 0.1 }, durationSeconds: { p50: 65, p90: null }, ...patch,
  };
}

function row(name: string, patch: Partial<EvaluationRow> = {}): EvaluationRow {
  return { key: `ns/${name}`, namespace: 'ns', name, label: name, createdAt: '2026-12-07T10:00:00Z', matrix: { cells: 2, testCases: 2, repeats: 2 }, cells: [cell('claude', 'sonnet'), cell('codex', 'sonnet')], comparisons: [], ...patch };
}

describe('evaluation progress and tallies', () => {
  it('progress from the status totals, else the cells, else the spec (no status yet)', () => {
    expect(progressOf(row('a', { runs: { total: 10, final: 4, scored: 3, passed: 2, byOutcome: {} } }))).toEqual({ final: 4, total: 10, fraction: 0.4 });
    expect(progressOf(row('a'))).toEqual({ final: 8, total: 8, fraction: 1 });
    expect(progressOf(row('a', { cells: [], matrix: { cells: 3, testCases: 5, repeats: 2 } }))).toEqual({ final: 0, total: 30, fraction: 0 });
    expect(progressOf(row('a', { cells: [], matrix: { cells: 0, testCases: 0, repeats: 1 } })).fraction).toBe(0);
  });

  it('passed of scored over the cells, infrastructure failures apart; phase Pending before a status; behind an edit', () => {
    expect(tallyOf(row('a'))).toEqual({ passed: 4, scored: 6, infrastructureFailed: 2, unscored: 0 });
    expect(phaseOf(row('a'))).toBe('Pending');
    expect(phaseOf(row('a', { phase: 'Completed' }))).toBe('Completed');
    expect(statusBehind(row('a', { generation: 3, observedGeneration: 2 }))).toBe(true);
    expect(statusBehind(row('a', { generation: 3, observedGeneration: 3 }))).toBe(false);
    expect(statusBehind(row('a'))).toBe(false);
  });

  it('lists newest first', () => {
    const rows = [row('old', { createdAt: '2026-12-01T00:00:00Z' }), row('new', { createdAt: '2026-12-07T00:00:00Z' })];
    expect(sortedEvaluations(rows).map((r) => r.name)).toEqual(['new', 'old']);
  });
});

describe('cell figures', () => {
  it('pass rate with its Wilson interval in points, a dash before any run is scored', () => {
    expect(formatPassRate(cell('a', 'b'))).toBe('67% [21–94]');
    expect(formatPassRate(cell('a', 'b', { passRate: null, passRateInterval: null }))).toBe('—');
  });

  it('pass@k columns only when a cell has one; k shared or "k"', () => {
    expect(kLabel([cell('a', 'b')], (c) => c.passAtK)).toBeNull();
    expect(kLabel([cell('a', 'b', { passAtK: { k: 3, value: 0.5 } }), cell('a', 'c')], (c) => c.passAtK)).toBe('3');
    expect(kLabel([cell('a', 'b', { passAtK: { k: 3, value: 0.5 } }), cell('a', 'c', { passAtK: { k: 2, value: null } })], (c) => c.passAtK)).toBe('k');
    expect(formatAtK({ k: 3, value: 0.504 })).toBe('50%');
    expect(formatAtK({ k: 3, value: null })).toBe('—');
    expect(formatAtK(undefined)).toBe('—');
  });

  it('cost per run to 4 decimals, tokens summed over the classes, wall time p50 / p90', () => {
    expect(formatUsdPerRun(0.01)).toBe('$0.0100');
    expect(formatUsdPerRun(0.00001)).toBe('<$0.0001');
    expect(formatUsdPerRun(null)).toBe('—');
    expect(cellTokens(cell('a', 'b', { tokens: { input: { sum: 12_000, median: 1 }, output: { sum: 345, median: 1 }, reasoning: { sum: 99, median: 1 } } }))).toBe('12.3k');
    expect(cellTokens(cell('a', 'b'))).toBe('—');
    expect(formatDurations({ p50: 65, p90: null })).toBe('1m 05s / —');
  });

  it('p-values as the CLI prints them', () => {
    expect(formatPValue(0.0004)).toBe('p < 0.001');
    expect(formatPValue(0.012)).toBe('p = 0.012');
    expect(formatPValue(0.0496)).toBe('p = 0.0496');
  });
});

describe('comparisons and links', () => {
  const comparison = { fixed: 'model' as const, a: { harness: 'claude', model: 'sonnet' }, b: { harness: 'codex', model: 'sonnet' }, pValue: 0.012 };

  it('marks both cells of a significant comparison, the winner higher', () => {
    const marks = marksByCell(row('a', { comparisons: [comparison] }));
    expect(marks.get('k-claude-sonnet')).toEqual([{ direction: 'higher', other: 'codex × sonnet', fixed: 'model', pValue: 0.012 }]);
    expect(marks.get('k-codex-sonnet')).toEqual([{ direction: 'lower', other: 'claude × sonnet', fixed: 'model', pValue: 0.012 }]);
    expect(comparisonText(comparison)).toBe('claude × sonnet passes more than codex × sonnet (same model; Fisher p = 0.012)');
  });

  it("links to the runs page filtered by the evaluation's label and a cell's", () => {
    expect(runsLink({ namespace: 'team a', label: 'nightly' })).toBe('/runs?evaluation=team+a%2Fnightly');
    expect(runsLink({ namespace: 'ns', label: 'nightly' }, { key: 'abc' })).toBe('/runs?evaluation=ns%2Fnightly&cell=abc');
  });
});
