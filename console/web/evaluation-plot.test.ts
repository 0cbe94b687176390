import { describe, expect, it } from 'vitest';
import type { EvaluationCellRow, EvaluationRow } from '../../shared/console.ts';
import { plotData } from './evaluation-plot.ts';

const cell = (harness: string, model: string, patch: Partial<EvaluationCellRow>): EvaluationCellRow => ({
  key: `k-${harness}-${model}`, harness, model, runs: 4, final: 4, scored: 4, passed: 2, infrastructureFailed: 0, unscored: 0, passRate: 0.5, passRateInterval: { low: 0.15, high: 0.85 },
  meanReward: null, tokens: {}, actualCostUsd: { sum: null, mean: null }, comparableCostUsd: { sum: 0.4, mean: 0.1 }, durationSeconds: { p50: null, p90: null }, ...patch,
});

describe('plotData', () => {
  it('a point per cell at (mean comparable cost, pass rate) with its interval and its Runs link; the rest listed with why', () => {
    const row: EvaluationRow = {
      key: 'ns/e', namespace: 'ns', name: 'e', label: 'e', createdAt: '2026-12-07T10:00:00Z', matrix: { cells: 4, testCases: 1, repeats: 4 }, comparisons: [],
      cells: [
        cell('claude', 'sonnet', { passRate: 0.75, passRateInterval: { low: 0.3, high: 0.95 }, comparableCostUsd: { sum: 0.8, mean: 0.2 } }),
        cell('codex', 'gpt-5', {}),
        cell('gemini', 'pro', { passRate: null, passRateInterval: null }),
        cell('aider', 'local', { comparableCostUsd: { sum: null, mean: null } }),
      ],
    };
    const { points, notPlotted } = plotData(row);
    expect(points).toEqual([
      { key: 'k-claude-sonnet', label: 'claude/sonnet', harness: 'claude', cost: 0.2, passRate: 0.75, low: 0.3, high: 0.95, href: '/runs?evaluation=ns%2Fe&cell=k-claude-sonnet' },
      { key: 'k-codex-gpt-5', label: 'codex/gpt-5', harness: 'codex', cost: 0.1, passRate: 0.5, low: 0.15, high: 0.85, href: '/runs?evaluation=ns%2Fe&cell=k-codex-gpt-5' },
    ]);
    expect(notPlotted).toEqual(['gemini/pro: no run scored yet', 'aider/local: no comparable cost']);
  });
});
