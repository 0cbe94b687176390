// The runs table's view logic, pure: idle time and stalled marking, filters, sorting. The page keeps 10k rows in a
// Map and derives the visible list with these on every batch (sorting 10k rows by a plain comparison takes a few ms).
import type { RunRow } from '../../shared/console.ts';
import type { Outcome } from '../../shared/run.ts';
import type { RunPhase } from '../../shared/run-status.ts';
import { FINAL, OUTCOME_LIST as OUTCOMES, PHASES as RUN_PHASES } from './wire.ts';
import { toMs, totalTokens } from './format.ts';
import { shownActivity } from './run-activity.ts';

export interface RunFilter {
  /** '' any, 'active' any non-final phase, or one phase. */
  phase: '' | 'active' | RunPhase;
  harness: string;
  model: string;
  /** '' any, 'none' still without an outcome, or one outcome. */
  outcome: '' | 'none' | Outcome;
  text: string;
  stalledOnly: boolean;
  /** '' any, or `<namespace>/<tcab.dev/evaluation label>`: the Runs of one Evaluation (its page links here). */
  evaluation: string;
  /** '' any, or a tcab.dev/cell label: the Runs of one cell of it. */
  cell: string;
}

export const EMPTY_FILTER: RunFilter = { phase: '', harness: '', model: '', outcome: '', text: '', stalledOnly: false, evaluation: '', cell: '' };

export const SORT_KEYS = ['name', 'harness', 'model', 'phase', 'outcome', 'started', 'duration', 'idle', 'tokens', 'actualCost', 'comparableCost', 'check'] as const;
export type SortKey = (typeof SORT_KEYS)[number];
export interface RunSort {
  key: SortKey;
  dir: 'asc' | 'desc';
}
export const DEFAULT_SORT: RunSort = { key: 'started', dir: 'desc' };

/** Clock of the view: the server's "now" (browser clock + the offset measured at the snapshot) and the threshold. */
export interface ViewClock {
  nowMs: number;
  stalledAfterSeconds: number;
}

export const isFinal = (row: Pick<RunRow, 'phase'>) => FINAL.has(row.phase);

/**
 * Seconds since the run last showed life, for a run still going: since its last event, else since it started.
 * Undefined for a finished run and for a queued one (Pending waits for a slot: waiting is not idling).
 */
export function idleSeconds(row: RunRow, nowMs: number): number | undefined {
  if (isFinal(row) || row.phase === 'Pending') return undefined;
  const since = toMs(row.lastEventAt) ?? toMs(row.startedAt);
  return since === undefined ? undefined : Math.max(0, (nowMs - since) / 1000);
}

/** No event for a while, except while the check runs: a check prints no events, its silence is no stall. */
export function isStalled(row: RunRow, clock: ViewClock): boolean {
  if (row.phase === 'Checking') return false;
  const idle = idleSeconds(row, clock.nowMs);
  return idle !== undefined && idle >= clock.stalledAfterSeconds;
}

/** Wall time of the run so far (or in all, once finished); undefined before it started. */
export function runDurationMs(row: RunRow, nowMs: number): number | undefined {
  const start = toMs(row.startedAt);
  if (start === undefined) return undefined;
  const end = toMs(row.finishedAt) ?? (isFinal(row) ? undefined : nowMs);
  return end === undefined ? undefined : Math.max(0, end - start);
}

export function matchesFilter(row: RunRow, filter: RunFilter, clock: ViewClock): boolean {
  if (filter.phase === 'active' ? isFinal(row) : filter.phase && row.phase !== filter.phase) return false;
  if (filter.harness && row.harness !== filter.harness) return false;
  if (filter.model && row.model !== filter.model) return false;
  if (filter.outcome === 'none' ? row.outcome !== undefined : filter.outcome && row.outcome !== filter.outcome) return false;
  if (filter.stalledOnly && !isStalled(row, clock)) return false;
  if (filter.evaluation && (row.evaluation === undefined || `${row.namespace}/${row.evaluation}` !== filter.evaluation)) return false;
  if (filter.cell && row.cell !== filter.cell) return false;
  const text = filter.text.trim().toLowerCase();
  if (text) {
    const hay = `${row.namespace}/${row.name} ${row.harness} ${row.model} ${row.testCase ?? ''} ${shownActivity(row)?.text ?? ''} ${row.message ?? ''}`.toLowerCase();
    if (!text.split(/\s+/).every((word) => hay.includes(word))) return false;
  }
  return true;
}

type SortValue = string | number | undefined;

function sortValue(row: RunRow, key: SortKey, nowMs: number): SortValue {
  switch (key) {
    case 'name':
      return row.key;
    case 'harness':
      return row.harness;
    case 'model':
      return row.model;
    case 'phase':
      return RUN_PHASES.indexOf(row.phase);
    case 'outcome':
      return row.outcome === undefined ? undefined : OUTCOMES.indexOf(row.outcome);
    case 'started':
      return toMs(row.startedAt) ?? toMs(row.createdAt);
    case 'duration':
      return runDurationMs(row, nowMs);
    case 'idle':
      return idleSeconds(row, nowMs);
    case 'tokens':
      return totalTokens(row.tokens);
    case 'actualCost':
      return row.actualCostUsd ?? undefined;
    case 'comparableCost':
      return row.comparableCostUsd ?? undefined;
    case 'check':
      return checkRank(row.check);
  }
}

/**
 * Passed above failed, by reward within each (a reward is 0..1, so it never lifts a failed check past a passed one);
 * no check: undefined, last either way.
 */
function checkRank(check: RunRow['check']): number | undefined {
  return check && (check.passed ? 2 : 0) + (check.reward ?? 0);
}

/** Sorted copy; rows without a value sort last in either direction, ties by key so the order is stable. */
export function sortRows(rows: readonly RunRow[], sort: RunSort, nowMs: number): RunRow[] {
  const sign = sort.dir === 'asc' ? 1 : -1;
  const keyed = rows.map((row) => ({ row, v: sortValue(row, sort.key, nowMs) }));
  keyed.sort((a, b) => {
    if (a.v === undefined || b.v === undefined) {
      if (a.v !== b.v) return a.v === undefined ? 1 : -1;
    } else if (a.v !== b.v) return a.v < b.v ? -sign : sign;
    return a.row.key < b.row.key ? -1 : a.row.key > b.row.key ? 1 : 0;
  });
  return keyed.map((k) => k.row);
}

export function visibleRows(rows: Iterable<RunRow>, filter: RunFilter, sort: RunSort, clock: ViewClock): RunRow[] {
  const kept: RunRow[] = [];
  for (const row of rows) if (matchesFilter(row, filter, clock)) kept.push(row);
  return sortRows(kept, sort, clock.nowMs);
}

/**
 * The distinct harnesses and models present, sorted: the options of the filter selects; and whether any run has a
 * check verdict (the table shows its Check column only then: runs-columns.ts).
 */
export function facets(rows: Iterable<RunRow>): { harnesses: string[]; models: string[]; checks: boolean } {
  const harnesses = new Set<string>();
  const models = new Set<string>();
  let checks = false;
  for (const row of rows) {
    harnesses.add(row.harness);
    models.add(row.model);
    if (row.check) checks = true;
  }
  return { harnesses: [...harnesses].sort(), models: [...models].sort(), checks };
}

/** Runs per phase and how many are stalled: the summary line above the table. */
export function phaseCounts(rows: Iterable<RunRow>, clock: ViewClock): { byPhase: Partial<Record<RunPhase, number>>; stalled: number; total: number } {
  const byPhase: Partial<Record<RunPhase, number>> = {};
  let stalled = 0;
  let total = 0;
  for (const row of rows) {
    total++;
    byPhase[row.phase] = (byPhase[row.phase] ?? 0) + 1;
    if (isStalled(row, clock)) stalled++;
  }
  return { byPhase, stalled, total };
}

/** The filter and sort as URL query parameters (shareable links), and back. Unknown values are dropped. */
export function viewToQuery(filter: RunFilter, sort: RunSort): string {
  const q = new URLSearchParams();
  for (const k of ['phase', 'harness', 'model', 'outcome', 'text', 'evaluation', 'cell'] as const) if (filter[k]) q.set(k, filter[k]);
  if (filter.stalledOnly) q.set('stalled', '1');
  if (sort.key !== DEFAULT_SORT.key || sort.dir !== DEFAULT_SORT.dir) q.set('sort', `${sort.key}:${sort.dir}`);
  return q.toString();
}

export function viewFromQuery(search: string): { filter: RunFilter; sort: RunSort } {
  const q = new URLSearchParams(search);
  const phase = q.get('phase') ?? '';
  const outcome = q.get('outcome') ?? '';
  const [key, dir] = (q.get('sort') ?? '').split(':');
  return {
    filter: {
      phase: phase === 'active' || (RUN_PHASES as readonly string[]).includes(phase) ? (phase as RunFilter['phase']) : '',
      harness: q.get('harness') ?? '',
      model: q.get('model') ?? '',
      outcome: outcome === 'none' || (OUTCOMES as readonly string[]).includes(outcome) ? (outcome as RunFilter['outcome']) : '',
      text: q.get('text') ?? '',
      stalledOnly: q.get('stalled') === '1',
      evaluation: q.get('evaluation') ?? '',
      cell: q.get('cell') ?? '',
    },
    sort: (SORT_KEYS as readonly string[]).includes(key ?? '') && (dir === 'asc' || dir === 'desc') ? { key: key as SortKey, dir } : DEFAULT_SORT,
  };
}
