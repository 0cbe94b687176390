import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { EvaluationCell, EvaluationStatus, InlineEvaluationSpec } from './schema.ts';
import { EVALUATION_CSV_COLUMNS, evaluationCsv, formatEvaluationTable } from './format.ts';
import { summarizeEvaluation } from './summary.ts';
import { finishedSlot, pendingSlot } from './slot-states.test-support.ts';

const done = finishedSlot;
const pending = pendingSlot;

const testCases = [
  { name: 't1', prompt: 'one' },
  { name: 't2', prompt: 'two' },
];
const spec = InlineEvaluationSpec.parse({
  matrix: [
    { harness: 'claude', models: ['m1', 'm2'] },
    { harness: 'gg', models: ['m1'] },
  ],
  testCases,
  repeats: 2,
});
const status = EvaluationStatus.parse(
  summarizeEvaluation(spec, [
    done('claude', 'm1', 't1', 'succeeded', { passed: true, reward: 1 }, { input: 100, cost: 0.01, seconds: 6 }),
    done('claude', 'm1', 't1', 'succeeded', { passed: true, reward: 1 }, { input: 200, cost: 0.015, seconds: 8 }),
    done('claude', 'm1', 't2', 'harness_failed', { passed: true, reward: 0.5 }, { input: 300, cost: 0.01, seconds: 8.2 }),
    done('claude', 'm1', 't2', 'timed_out', { passed: false }, { input: 400, cost: 0.015, seconds: 125 }),
    done('claude', 'm2', 't1', 'infrastructure_failed', null),
    done('claude', 'm2', 't1', 'succeeded', { passed: false }, { input: 50, cost: null }),
    done('claude', 'm2', 't2', 'succeeded', { passed: false }, { input: 60 }),
    done('claude', 'm2', 't2', 'cancelled', null),
    done('gg', 'm1', 't1', 'succeeded', { passed: true }, { seconds: 90 }),
    done('gg', 'm1', 't1', 'succeeded', { passed: true }, { seconds: 100 }),
    pending('gg', 'm1', 't2'),
    pending('gg', 'm1', 't2'),
  ]),
);

describe('formatEvaluationTable', () => {
  it('prints progress, one row per cell in matrix order with every column, and that no difference is significant', () => {
    expect(formatEvaluationTable(status, { color: false })).toBe(
      [
        '── evaluation: 10/12 runs final · 5 passed of 8 scored · 1 infrastructure failure · 1 unscored',
        '  HARNESS  MODEL  FINAL  PASSED      PASS RATE  PASS@2  PASS^2  REWARD  COST/RUN  P50 TIME  INFRA',
        '  claude   m1       4/4     3/4    75% [30–95]    100%     50%    0.83   $0.0125      8.1s      0',
        '  claude   m2       4/4     0/2      0% [0–66]       –       –       –         –      1.0s      1',
        '  gg       m1       2/4     2/2  100% [34–100]    100%    100%       –   $0.0100     1m35s      0',
        '',
        "  no pair of cells differs significantly (Fisher's exact test, p < 0.05)",
      ].join('\n'),
    );
  });

  it('keeps the columns aligned in color: the colored text without its escapes is the plain text', () => {
    const colored = formatEvaluationTable(status, { color: true });
    expect(colored).toContain('\u001b[');
    expect(stripVTControlCharacters(colored)).toBe(formatEvaluationTable(status, { color: false }));
  });

  it('has no trailing spaces, whatever the widths', () => {
    const wide = EvaluationStatus.parse({ ...status, cells: status.cells!.map((c, i) => ({ ...c, model: 'x'.repeat(i * 7) || 'm' })) });
    for (const line of formatEvaluationTable(wide, { color: false }).split('\n')) expect(line).toBe(line.trimEnd());
  });

  it('has no PASS@K or PASS^K column when each test case runs once', () => {
    const once = InlineEvaluationSpec.parse({ matrix: [{ harness: 'claude', models: ['m1'] }], testCases, repeats: 1 });
    const s = EvaluationStatus.parse(summarizeEvaluation(once, [done('claude', 'm1', 't1', 'succeeded', { passed: true }, { seconds: 4 }), done('claude', 'm1', 't2', 'succeeded', { passed: false }, { seconds: 12 })]));
    expect(formatEvaluationTable(s, { color: false })).toBe(
      [
        '── evaluation: 2/2 runs final · 1 passed of 2 scored',
        '  HARNESS  MODEL  FINAL  PASSED   PASS RATE  REWARD  COST/RUN  P50 TIME  INFRA',
        '  claude   m1       2/2     1/2  50% [9–91]       –   $0.0100      8.0s      0',
        '',
        "  no pair of cells differs significantly (Fisher's exact test, p < 0.05)",
      ].join('\n'),
    );
  });

  it('names each significant difference: the better cell, the other, what they share and the p-value', () => {
    const wide = InlineEvaluationSpec.parse({ matrix: [{ harness: 'claude', models: ['m1', 'm2'] }, { harness: 'gg', models: ['m1'] }], testCases: Array.from({ length: 20 }, (_, i) => ({ name: `t${i}`, prompt: 'x' })) });
    const runs = (harness: string, model: string, passes: number) => Array.from({ length: 20 }, (_, i) => done(harness, model, `t${i}`, 'succeeded', { passed: i < passes }));
    const s = EvaluationStatus.parse(summarizeEvaluation(wide, [...runs('claude', 'm1', 4), ...runs('claude', 'm2', 19), ...runs('gg', 'm1', 18)]));
    const lines = formatEvaluationTable(s, { color: false }).split('\n');
    expect(lines.slice(-2)).toEqual([
      `  significant: claude × m2 passes more than claude × m1 (same harness; Fisher p < 0.001)`,
      `  significant: gg × m1 passes more than claude × m1 (same model; Fisher p < 0.001)`,
    ]);
    expect(lines.some((l) => l.includes('no pair of cells'))).toBe(false);
    // A p-value of 0.001 or more is printed with 2 significant digits, 3 where 2 would read as 0.05.
    const pick = (pValue: number) =>
      formatEvaluationTable({ ...s, comparisons: [{ fixed: 'model', a: { harness: 'gg', model: 'm1' }, b: { harness: 'claude', model: 'm1' }, pValue }] }, { color: false }).split('\n').at(-1);
    expect(pick(0.0031)).toBe('  significant: gg × m1 passes more than claude × m1 (same model; Fisher p = 0.0031)');
    expect(pick(0.0496)).toContain('(same model; Fisher p = 0.0496)');
  });

  it('shows – for every figure not known yet, and a status with no cells', () => {
    const empty = EvaluationStatus.parse({
      runs: { total: 3, final: 0, scored: 0, passed: 0, byOutcome: {} },
      cells: [
        EvaluationCell.parse({
          harness: 'claude',
          model: 'm1',
          runs: 3,
          final: 0,
          scored: 0,
          passed: 0,
          infrastructureFailed: 0,
          unscored: 0,
          passRate: null,
          passRateInterval: null,
          passAtK: { k: 3, value: null },
          passHatK: { k: 3, value: null },
          meanReward: null,
          tokens: {},
          actualCostUsd: { sum: null, mean: null },
          comparableCostUsd: { sum: null, mean: null },
          durationSeconds: { p50: null, p90: null },
        }),
      ],
      comparisons: [],
    });
    expect(formatEvaluationTable(empty, { color: false }).split('\n').slice(0, 3)).toEqual([
      '── evaluation: 0/3 runs final · 0 passed of 0 scored',
      '  HARNESS  MODEL  FINAL  PASSED  PASS RATE  PASS@3  PASS^3  REWARD  COST/RUN  P50 TIME  INFRA',
      '  claude   m1       0/3     0/0          –       –       –       –         –         –      0',
    ]);
    expect(formatEvaluationTable({}, { color: false })).toBe('── evaluation: 0/0 runs final · 0 passed of 0 scored\n  no cells yet');
  });
});

describe('evaluationCsv', () => {
  const header = EVALUATION_CSV_COLUMNS.join(',');

  it('has one header row and one row per cell, numbers unrounded, an empty field for every unknown figure', () => {
    const lines = evaluationCsv(status).split('\n');
    expect(lines[0]).toBe(
      'harness,model,runs,final,scored,passed,infrastructure_failed,unscored,pass_rate,pass_rate_low,pass_rate_high,pass_at_k,pass_hat_k,k,mean_reward,actual_cost_usd_sum,actual_cost_usd_mean,comparable_cost_usd_sum,comparable_cost_usd_mean,duration_p50_s,duration_p90_s,tokens_input_sum,tokens_output_sum,tokens_cache_read_sum,tokens_cache_write_sum,tokens_reasoning_sum',
    );
    expect(lines).toHaveLength(5); // header, 3 cells, and the newline ending the last
    expect(lines[4]).toBe('');
    const [m1, m2, gg] = status.cells!;
    const nums = (...v: (number | null | undefined)[]) => v.map((x) => (x === null || x === undefined ? '' : String(x))).join(',');
    expect(lines[1]).toBe(
      `claude,m1,4,4,4,3,0,0,0.75,${nums(m1!.passRateInterval!.low, m1!.passRateInterval!.high)},1,0.5,2,${String(m1!.meanReward)},${nums(m1!.actualCostUsd.sum, m1!.actualCostUsd.mean)},0.08,0.02,8.1,${String(m1!.durationSeconds.p90)},1000,40,0,,`,
    );
    expect(m1!.meanReward).toBeCloseTo(2.5 / 3, 12);
    expect(lines[1]).toContain(`,${String(2.5 / 3)},`); // full precision, as JS prints it
    // No pass@2 (no test case has 2 scored runs), no reward, an unknown actual cost (one run without one), no cache-write or reasoning tokens: empty, never 0.
    expect(lines[2]).toBe(`claude,m2,4,4,2,0,1,1,0,0,${String(m2!.passRateInterval!.high)},,,2,,,,0.04,0.02,1,1,110,20,0,,`);
    expect(lines[3]).toBe(`gg,m1,4,2,2,2,0,0,1,${String(gg!.passRateInterval!.low)},1,1,1,2,,0.02,0.01,0.04,0.02,95,99,,,,,`);
  });

  it('quotes a model id holding a comma or a quote, and leaves the pass@k fields empty without repeats', () => {
    const { passAtK: _atK, passHatK: _hatK, ...rest } = status.cells![1]!;
    const cell = { ...rest, model: 'vendor/model,"fast"' };
    const s = EvaluationStatus.parse({ cells: [cell] });
    const [head, row, end] = evaluationCsv(s).split('\n');
    expect(head).toBe(header);
    expect(end).toBe('');
    expect(row).toBe(`claude,"vendor/model,""fast""",4,4,2,0,1,1,0,0,${String(cell.passRateInterval!.high)},,,,,,,0.04,0.02,1,1,110,20,0,,`);
    // Read back: the quoted field is the model id, and every other field is where its column says.
    const fields = row!.match(/("(?:[^"]|"")*"|[^,]*)(,|$)/g)!.slice(0, EVALUATION_CSV_COLUMNS.length).map((f) => f.replace(/,$/, ''));
    const record = Object.fromEntries(EVALUATION_CSV_COLUMNS.map((col, i) => [col, fields[i]!]));
    expect(record.model!.slice(1, -1).replaceAll('""', '"')).toBe('vendor/model,"fast"');
    expect(record).toMatchObject({ harness: 'claude', runs: '4', infrastructure_failed: '1', pass_at_k: '', k: '', tokens_input_sum: '110', tokens_reasoning_sum: '' });
  });

  it('is the header alone with no cells', () => {
    expect(evaluationCsv({})).toBe(`${header}\n`);
  });
});
