// Human and CSV views of an Evaluation's status: the table `tcab eval run` prints at the end, and one CSV row per cell
// (harness x model) for a spreadsheet. Pure.
import pc from 'picocolors';
import { stringify } from 'csv-stringify/sync';
import type { EvaluationCell, EvaluationStatus } from './schema.ts';

type Colors = ReturnType<typeof pc.createColors>;

const DASH = '–';
const percent = (v: number) => `${Math.round(v * 100)}%`;
const orDash = <T>(v: T | null | undefined, f: (v: NonNullable<T>) => string) => (v === null || v === undefined ? DASH : f(v));
const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** Seconds as `8.1s`, `2m05s` or `1h02m`. */
function duration(s: number): string {
  if (s < 59.95) return `${s.toFixed(1)}s`;
  const whole = Math.round(s);
  if (whole < 3600) return `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, '0')}s`;
  const minutes = Math.round(s / 60);
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/** A cost per run: 4 decimals (a cent is `$0.0100`); a positive cost below that is not shown as nothing. */
const usd = (v: number) => (v > 0 && v < 0.00005 ? '<$0.0001' : `$${v.toFixed(4)}`);

/** A p-value: 2 significant digits, 3 where 2 would round up to the 0.05 threshold. */
function pValue(p: number): string {
  if (p < 0.001) return 'p < 0.001';
  const two = p.toPrecision(2);
  return `p = ${Number(two) >= 0.05 && p < 0.05 ? p.toPrecision(3) : two}`;
}

/** The k of pass@k / pass^k columns: the k when every cell has the same, else `K`. */
function kLabel(cells: readonly EvaluationCell[], pick: (c: EvaluationCell) => { k: number } | undefined): string | null {
  const ks = new Set(cells.map(pick).filter((x) => x !== undefined).map((x) => x.k));
  if (ks.size === 0) return null;
  return ks.size === 1 ? String([...ks][0]) : 'K';
}

interface Column {
  header: string;
  align: 'left' | 'right';
  value: (c: EvaluationCell) => string;
  /** Colors a padded value (padding first keeps the columns aligned whatever the escapes). */
  paint?: (text: string, c: EvaluationCell, colors: Colors) => string;
}

function columns(cells: readonly EvaluationCell[]): Column[] {
  const atK = kLabel(cells, (c) => c.passAtK);
  const hatK = kLabel(cells, (c) => c.passHatK);
  return [
    { header: 'HARNESS', align: 'left', value: (c) => c.harness },
    { header: 'MODEL', align: 'left', value: (c) => c.model },
    { header: 'FINAL', align: 'right', value: (c) => `${c.final}/${c.runs}` },
    { header: 'PASSED', align: 'right', value: (c) => `${c.passed}/${c.scored}` },
    {
      header: 'PASS RATE',
      align: 'right',
      value: (c) => (c.passRate === null ? DASH : `${percent(c.passRate)}${c.passRateInterval ? ` [${Math.round(c.passRateInterval.low * 100)}–${Math.round(c.passRateInterval.high * 100)}]` : ''}`),
      paint: (text, c, colors) => (c.passRate === null ? colors.dim(text) : colors.bold(text)),
    },
    ...(atK === null ? [] : [{ header: `PASS@${atK}`, align: 'right' as const, value: (c: EvaluationCell) => orDash(c.passAtK?.value, percent) }]),
    ...(hatK === null ? [] : [{ header: `PASS^${hatK}`, align: 'right' as const, value: (c: EvaluationCell) => orDash(c.passHatK?.value, percent) }]),
    { header: 'REWARD', align: 'right', value: (c) => orDash(c.meanReward, (v) => v.toFixed(2)) },
    { header: 'COST/RUN', align: 'right', value: (c) => orDash(c.actualCostUsd.mean, usd) },
    { header: 'P50 TIME', align: 'right', value: (c) => orDash(c.durationSeconds.p50, duration) },
    { header: 'INFRA', align: 'right', value: (c) => String(c.infrastructureFailed), paint: (text, c, colors) => (c.infrastructureFailed > 0 ? colors.yellow(text) : text) },
  ];
}

const pad = (text: string, width: number, align: 'left' | 'right') => (align === 'left' ? text.padEnd(width) : text.padStart(width));

/** The header line: how far the matrix is, what passed of what was scored, and what ended on infrastructure. */
function headline(status: EvaluationStatus, cells: readonly EvaluationCell[], c: Colors): string {
  const total = status.runs?.total ?? cells.reduce((n, x) => n + x.runs, 0);
  const final = status.runs?.final ?? cells.reduce((n, x) => n + x.final, 0);
  const passed = cells.reduce((n, x) => n + x.passed, 0);
  const scored = cells.reduce((n, x) => n + x.scored, 0);
  const infra = cells.reduce((n, x) => n + x.infrastructureFailed, 0);
  const unscored = cells.reduce((n, x) => n + x.unscored, 0);
  const parts = [`${final}/${total} runs final`, `${passed} passed of ${scored} scored`];
  if (infra > 0) parts.push(c.yellow(plural(infra, 'infrastructure failure', 'infrastructure failures')));
  if (unscored > 0) parts.push(`${unscored} unscored`);
  return `${c.bold('── evaluation:')} ${parts.join(' · ')}`;
}

const cellName = (x: { harness: string; model: string }) => `${x.harness} × ${x.model}`;

/** The summary `tcab eval run` prints at the end: progress, one row per cell, and the significant differences. */
export function formatEvaluationTable(status: EvaluationStatus, options: { color: boolean }): string {
  const c = pc.createColors(options.color);
  const cells = status.cells ?? [];
  const lines = [headline(status, cells, c)];
  if (cells.length === 0) {
    lines.push(c.dim('  no cells yet'));
    return lines.join('\n');
  }
  const cols = columns(cells);
  const values = cells.map((cell) => cols.map((col) => col.value(cell)));
  const widths = cols.map((col, i) => Math.max(col.header.length, ...values.map((row) => row[i]!.length)));
  // The last column is right-aligned, so no line ends in padding.
  lines.push(c.dim('  ' + cols.map((col, i) => pad(col.header, widths[i]!, col.align)).join('  ')));
  cells.forEach((cell, r) => {
    const row = cols.map((col, i) => {
      const text = pad(values[r]![i]!, widths[i]!, col.align);
      return col.paint ? col.paint(text, cell, c) : text;
    });
    lines.push(('  ' + row.join('  ')).trimEnd());
  });
  lines.push('');
  const comparisons = status.comparisons ?? [];
  if (comparisons.length > 0) {
    for (const cmp of comparisons) {
      lines.push(`  ${c.green('significant:')} ${cellName(cmp.a)} passes more than ${cellName(cmp.b)} (same ${cmp.fixed}; Fisher ${pValue(cmp.pValue)})`);
    }
  } else {
    lines.push(c.dim("  no pair of cells differs significantly (Fisher's exact test, p < 0.05)"));
  }
  return lines.join('\n');
}

export const EVALUATION_CSV_COLUMNS = [
  'harness',
  'model',
  'runs',
  'final',
  'scored',
  'passed',
  'infrastructure_failed',
  'unscored',
  'pass_rate',
  'pass_rate_low',
  'pass_rate_high',
  'pass_at_k',
  'pass_hat_k',
  'k',
  'mean_reward',
  'actual_cost_usd_sum',
  'actual_cost_usd_mean',
  'comparable_cost_usd_sum',
  'comparable_cost_usd_mean',
  'duration_p50_s',
  'duration_p90_s',
  'tokens_input_sum',
  'tokens_output_sum',
  'tokens_cache_read_sum',
  'tokens_cache_write_sum',
  'tokens_reasoning_sum',
] as const;

type CsvRow = Record<(typeof EVALUATION_CSV_COLUMNS)[number], string | number | null | undefined>;

function csvRow(c: EvaluationCell): CsvRow {
  return {
    harness: c.harness,
    model: c.model,
    runs: c.runs,
    final: c.final,
    scored: c.scored,
    passed: c.passed,
    infrastructure_failed: c.infrastructureFailed,
    unscored: c.unscored,
    pass_rate: c.passRate,
    pass_rate_low: c.passRateInterval?.low,
    pass_rate_high: c.passRateInterval?.high,
    pass_at_k: c.passAtK?.value,
    pass_hat_k: c.passHatK?.value,
    k: c.passAtK?.k ?? c.passHatK?.k,
    mean_reward: c.meanReward,
    actual_cost_usd_sum: c.actualCostUsd.sum,
    actual_cost_usd_mean: c.actualCostUsd.mean,
    comparable_cost_usd_sum: c.comparableCostUsd.sum,
    comparable_cost_usd_mean: c.comparableCostUsd.mean,
    duration_p50_s: c.durationSeconds.p50,
    duration_p90_s: c.durationSeconds.p90,
    tokens_input_sum: c.tokens.input?.sum,
    tokens_output_sum: c.tokens.output?.sum,
    tokens_cache_read_sum: c.tokens.cache_read?.sum,
    tokens_cache_write_sum: c.tokens.cache_write?.sum,
    tokens_reasoning_sum: c.tokens.reasoning?.sum,
  };
}

/** One header row and one row per cell; an unknown figure is an empty field (never 0), numbers unrounded. */
export function evaluationCsv(status: EvaluationStatus): string {
  return stringify((status.cells ?? []).map(csvRow), {
    header: true,
    columns: [...EVALUATION_CSV_COLUMNS],
    cast: { number: (v) => String(v) },
  });
}
