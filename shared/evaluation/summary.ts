// What an Evaluation's Runs came to, per cell, from each slot's state: the figures of its status, `tcab eval` and the
// console. A final run is scored when its check ran (passed or failed, whatever the agent's outcome); one that ended
// on infrastructure (or whose harness was unavailable) is counted apart and never as a failed task; the rest
// (cancelled, over budget, no check) are final but unscored. Pure.
import type { CheckResult, Outcome } from '../run.ts';
import type { TokenUsage } from '../usage.ts';
import type { EvaluationCell, EvaluationStatus, ResolvedEvaluationSpec } from './schema.ts';
import { evaluationCells } from './slots.ts';
import type { Cell } from './slots.ts';
import { comparePassRates, passAtK, passHatK, quantile, wilsonInterval } from './stats.ts';

/**
 * What the summary needs of a Run's result: a RunResult (on a workstation) or what a Run's status says (in a cluster,
 * which has no start time when the run never started).
 */
export interface SlotResult {
  outcome: Outcome;
  check?: Pick<CheckResult, 'passed' | 'reward'> | null;
  tokens: TokenUsage | null;
  actual_cost_usd: number | null;
  comparable_cost_usd: number | null;
  started_at?: string;
  finished_at?: string;
}

/** One slot as it stands: not final yet, or final with the result its Run reported (none when it ended without). */
export interface SlotState {
  cell: Cell;
  testCase: string;
  final: boolean;
  result?: SlotResult;
}

const TOKEN_CLASSES = ['input', 'output', 'cache_read', 'cache_write', 'reasoning'] as const;

type Verdict = 'pending' | 'passed' | 'failed' | 'infrastructure' | 'unscored';

function verdictOf(slot: SlotState): Verdict {
  if (!slot.final) return 'pending';
  if (!slot.result || slot.result.outcome === 'infrastructure_failed') return 'infrastructure';
  if (!slot.result.check) return 'unscored';
  return slot.result.check.passed ? 'passed' : 'failed';
}

/** Groups items by a key, keeping their order. */
function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

const cellId = (cell: Cell) => `${cell.harness}\u0000${cell.model}`;

export function summarizeEvaluation(spec: ResolvedEvaluationSpec, slots: readonly SlotState[]): EvaluationStatus {
  const byCell = groupBy(slots, (s) => cellId(s.cell));
  const cells = evaluationCells(spec).map((cell) => summarizeCell(cell, spec, byCell.get(cellId(cell)) ?? []));
  const byOutcome: Record<string, number> = {};
  for (const slot of slots) {
    // A Run that ended with no result of its own (its Pod lost before it reported) ended on infrastructure.
    const outcome = slot.result?.outcome ?? 'infrastructure_failed';
    if (slot.final) byOutcome[outcome] = (byOutcome[outcome] ?? 0) + 1;
  }
  const total = cells.reduce((n, c) => n + c.runs, 0);
  const final = cells.reduce((n, c) => n + c.final, 0);
  return {
    phase: final === total ? 'Completed' : 'Running',
    runs: { total, final, scored: cells.reduce((n, c) => n + c.scored, 0), passed: cells.reduce((n, c) => n + c.passed, 0), byOutcome },
    cells,
    comparisons: significantDifferences(cells),
  };
}

function summarizeCell(cell: Cell, spec: ResolvedEvaluationSpec, slots: readonly SlotState[]): EvaluationCell {
  const verdicts = slots.map(verdictOf);
  const count = (v: Verdict) => verdicts.filter((x) => x === v).length;
  const passed = count('passed');
  const scored = passed + count('failed');
  const scoredResults = slots.filter((_, i) => verdicts[i] === 'passed' || verdicts[i] === 'failed').map((s) => s.result!);
  const rewards = scoredResults.map((r) => r.check!.reward).filter((r): r is number => r !== null);
  const scoredByTestCase = groupBy(
    slots.filter((_, i) => verdicts[i] === 'passed' || verdicts[i] === 'failed'),
    (s) => s.testCase,
  );
  const perTestCase = [...scoredByTestCase.values()].map((mine) => ({ n: mine.length, passed: mine.filter((s) => s.result!.check!.passed).length }));
  const k = spec.repeats;
  const durations = slots
    .filter((s) => s.final && s.result)
    .map((s) => (Date.parse(s.result!.finished_at ?? '') - Date.parse(s.result!.started_at ?? '')) / 1000)
    .filter((seconds) => Number.isFinite(seconds));
  return {
    harness: cell.harness,
    model: cell.model,
    runs: spec.testCases.length * spec.repeats,
    final: slots.filter((s) => s.final).length,
    scored,
    passed,
    infrastructureFailed: count('infrastructure'),
    unscored: count('unscored'),
    passRate: scored === 0 ? null : passed / scored,
    passRateInterval: wilsonInterval(passed, scored),
    ...(k > 1 ? { passAtK: { k, value: passAtK(perTestCase, k) }, passHatK: { k, value: passHatK(perTestCase, k) } } : {}),
    meanReward: rewards.length === 0 ? null : rewards.reduce((a, b) => a + b, 0) / rewards.length,
    tokens: tokenFigures(scoredResults),
    actualCostUsd: sumMean(scoredResults.map((r) => r.actual_cost_usd)),
    comparableCostUsd: sumMean(scoredResults.map((r) => r.comparable_cost_usd)),
    durationSeconds: { p50: quantile(durations, 0.5), p90: quantile(durations, 0.9) },
  };
}

/** Sum and median per token class over the runs that report it (a class none reports is left out, never 0). */
function tokenFigures(results: readonly SlotResult[]): EvaluationCell['tokens'] {
  const out: EvaluationCell['tokens'] = {};
  for (const cls of TOKEN_CLASSES) {
    const values = results.map((r) => r.tokens?.[cls] ?? null).filter((v): v is number => v !== null);
    if (values.length > 0) out[cls] = { sum: values.reduce((a, b) => a + b, 0), median: quantile(values, 0.5)! };
  }
  return out;
}

/** Sum and mean of a cost over runs; null when a run has none (a partial sum would compare as cheaper). */
function sumMean(values: readonly (number | null)[]): { sum: number | null; mean: number | null } {
  if (values.length === 0 || values.some((v) => v === null)) return { sum: null, mean: null };
  const sum = (values as number[]).reduce((a, b) => a + b, 0);
  return { sum, mean: sum / values.length };
}

/** Cells sharing a model (harnesses compared) or a harness (models compared) whose pass rates differ significantly. */
function significantDifferences(cells: readonly EvaluationCell[]): NonNullable<EvaluationStatus['comparisons']> {
  const out: NonNullable<EvaluationStatus['comparisons']> = [];
  for (let i = 0; i < cells.length; i++) {
    for (let j = i + 1; j < cells.length; j++) {
      const [x, y] = [cells[i]!, cells[j]!];
      const fixed = x.model === y.model ? 'model' : x.harness === y.harness ? 'harness' : undefined;
      if (!fixed) continue;
      const compared = comparePassRates({ passed: x.passed, n: x.scored }, { passed: y.passed, n: y.scored });
      if (!compared?.significant) continue;
      const [a, b] = x.passed / x.scored >= y.passed / y.scored ? [x, y] : [y, x];
      out.push({ fixed, a: { harness: a.harness, model: a.model }, b: { harness: b.harness, model: b.model }, pValue: compared.pValue });
    }
  }
  return out.sort((p, q) => p.pValue - q.pValue);
}
