// The Evaluations pages' view logic, pure: progress, the cells' figures as the table shows them (the wording of
// `tcab eval run`'s table: shared/evaluation/format.ts), the significant comparisons per cell, and the links to a
// cell's Runs (the runs page filtered by the labels its Runs carry).
import type { EvaluationCellRow, EvaluationRow } from '../../shared/console.ts';
import { DASH, formatCount, formatDuration } from './format.ts';

type Comparison = EvaluationRow['comparisons'][number];
type AtK = EvaluationCellRow['passAtK'];

export interface Progress {
  final: number;
  total: number;
  /** 0..1; 0 while the total is unknown. */
  fraction: number;
}

/** Runs final of all: the status' totals, else the cells', else the spec's matrix (no status yet). */
export function progressOf(row: EvaluationRow): Progress {
  const total = row.runs?.total ?? (row.cells.length > 0 ? row.cells.reduce((n, c) => n + c.runs, 0) : row.matrix.cells * row.matrix.testCases * row.matrix.repeats);
  const final = row.runs?.final ?? row.cells.reduce((n, c) => n + c.final, 0);
  return { final, total, fraction: total > 0 ? Math.min(1, final / total) : 0 };
}

/** Passed of scored over every cell, infrastructure failures and unscored runs counted apart. */
export function tallyOf(row: EvaluationRow): { passed: number; scored: number; infrastructureFailed: number; unscored: number } {
  const sum = (pick: (c: EvaluationCellRow) => number) => row.cells.reduce((n, c) => n + pick(c), 0);
  return { passed: sum((c) => c.passed), scored: sum((c) => c.scored), infrastructureFailed: sum((c) => c.infrastructureFailed), unscored: sum((c) => c.unscored) };
}

/** Running until every Run is final; `Pending` before the controller wrote a status. */
export const phaseOf = (row: EvaluationRow): string => row.phase ?? 'Pending';

/** The status was written for an older spec (the controller has not caught up with an edit yet). */
export const statusBehind = (row: EvaluationRow): boolean => row.generation !== undefined && row.observedGeneration !== undefined && row.observedGeneration < row.generation;

export const formatPercent = (v: number | null | undefined): string => (v === null || v === undefined ? DASH : `${Math.round(v * 100)}%`);

/** "67% [42–85]": the pass rate with its Wilson 95% interval in points. */
export function formatPassRate(cell: Pick<EvaluationCellRow, 'passRate' | 'passRateInterval'>): string {
  if (cell.passRate === null) return DASH;
  const i = cell.passRateInterval;
  return `${formatPercent(cell.passRate)}${i ? ` [${Math.round(i.low * 100)}–${Math.round(i.high * 100)}]` : ''}`;
}

/** The k of the pass@k / pass^k columns: the k when every cell has the same, else `k`; null when no cell has one. */
export function kLabel(cells: readonly EvaluationCellRow[], pick: (c: EvaluationCellRow) => AtK): string | null {
  const ks = new Set(cells.map(pick).flatMap((x) => (x ? [x.k] : [])));
  if (ks.size === 0) return null;
  return ks.size === 1 ? String([...ks][0]) : 'k';
}

export const formatAtK = (v: AtK): string => (v ? formatPercent(v.value) : DASH);

export const formatReward = (v: number | null): string => (v === null ? DASH : v.toFixed(2));

/** A cost per run: 4 decimals (a cent is `$0.0100`), as `tcab eval run` prints it; unknown is a dash. */
export const formatUsdPerRun = (v: number | null): string => (v === null ? DASH : v > 0 && v < 0.00005 ? '<$0.0001' : `$${v.toFixed(4)}`);

/** Tokens moved by the cell's scored runs: every prompt class plus output (reasoning is inside output). */
export function cellTokens(cell: EvaluationCellRow): string {
  const classes = [cell.tokens.input, cell.tokens.output, cell.tokens.cache_read, cell.tokens.cache_write].filter((t) => t !== undefined);
  return classes.length === 0 ? DASH : formatCount(classes.reduce((n, t) => n + t.sum, 0));
}

/** "1m 05s / 2m 10s": median and 90th percentile wall time. */
export const formatDurations = (d: EvaluationCellRow['durationSeconds']): string => `${formatDuration(d.p50 === null ? null : d.p50 * 1000)} / ${formatDuration(d.p90 === null ? null : d.p90 * 1000)}`;

/** A p-value: 2 significant digits, 3 where 2 would round up to the 0.05 threshold. */
export function formatPValue(p: number): string {
  if (p < 0.001) return 'p < 0.001';
  const two = p.toPrecision(2);
  return `p = ${Number(two) >= 0.05 && p < 0.05 ? p.toPrecision(3) : two}`;
}

export const cellName = (c: { harness: string; model: string }): string => `${c.harness} × ${c.model}`;
const sameCell = (a: { harness: string; model: string }, b: { harness: string; model: string }) => a.harness === b.harness && a.model === b.model;

export interface CellMark {
  /** 'higher': this cell passes significantly more than `other`; 'lower': less. */
  direction: 'higher' | 'lower';
  other: string;
  fixed: Comparison['fixed'];
  pValue: number;
}

/** The significant comparisons each cell is part of, by cell key: what the table marks on the cell. */
export function marksByCell(row: EvaluationRow): Map<string, CellMark[]> {
  const marks = new Map<string, CellMark[]>();
  const add = (cell: { harness: string; model: string }, mark: CellMark) => {
    const key = row.cells.find((c) => sameCell(c, cell))?.key;
    if (key !== undefined) marks.set(key, [...(marks.get(key) ?? []), mark]);
  };
  for (const c of row.comparisons) {
    add(c.a, { direction: 'higher', other: cellName(c.b), fixed: c.fixed, pValue: c.pValue });
    add(c.b, { direction: 'lower', other: cellName(c.a), fixed: c.fixed, pValue: c.pValue });
  }
  return marks;
}

/** "claude × sonnet passes more than codex × sonnet (same model; Fisher p = 0.012)". */
export const comparisonText = (c: Comparison): string => `${cellName(c.a)} passes more than ${cellName(c.b)} (same ${c.fixed}; Fisher ${formatPValue(c.pValue)})`;

/** The runs page filtered to the evaluation's Runs, or to one cell's: by the labels the Runs carry. */
export function runsLink(row: Pick<EvaluationRow, 'namespace' | 'label'>, cell?: Pick<EvaluationCellRow, 'key'>): string {
  const q = new URLSearchParams({ evaluation: `${row.namespace}/${row.label}` });
  if (cell) q.set('cell', cell.key);
  return `/runs?${q.toString()}`;
}

/** The list page's order: newest first, then by key. */
export function sortedEvaluations(rows: Iterable<EvaluationRow>): EvaluationRow[] {
  return [...rows].sort((a, b) => b.createdAt.localeCompare(a.createdAt) || a.key.localeCompare(b.key));
}
