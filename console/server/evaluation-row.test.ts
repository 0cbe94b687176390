import { describe, expect, it } from 'vitest';
import { EvaluationRow } from '../../shared/console.ts';
import { cellKey, evaluationLabelValue } from '../../shared/evaluation/slots.ts';
import { evaluationRowOf, slimEvaluation } from './evaluation-row.ts';
import { cell, evaluation } from './evaluation-fixtures.test-support.ts';

describe('evaluationRowOf', () => {
  it('carries identity, progress, every cell with its label key, and the comparisons; valid against the wire schema', () => {
    const comparison = { fixed: 'model' as const, a: { harness: 'claude', model: 'sonnet' }, b: { harness: 'codex', model: 'sonnet' }, pValue: 0.01 };
    const e = evaluation('nightly', [cell('claude', 'sonnet', { passed: 9, passRate: 0.9 }), cell('codex', 'sonnet')], { generation: 3, status: { comparisons: [comparison], observedGeneration: 2 } });
    const row = EvaluationRow.parse(evaluationRowOf(e));
    expect(row).toMatchObject({ key: 'evals/nightly', namespace: 'evals', name: 'nightly', label: 'nightly', createdAt: '2026-12-07T10:00:00Z', generation: 3, observedGeneration: 2, phase: 'Completed' });
    expect(row.runs).toEqual({ total: 20, final: 20, scored: 20, passed: 14, byOutcome: { succeeded: 20 } });
    expect(row.matrix).toEqual({ cells: 2, testCases: 5, repeats: 2 });
    expect(row.cells.map((c) => [c.harness, c.model, c.key, c.passed])).toEqual([
      ['claude', 'sonnet', cellKey({ harness: 'claude', model: 'sonnet' }), 9],
      ['codex', 'sonnet', cellKey({ harness: 'codex', model: 'sonnet' }), 5],
    ]);
    expect(row.comparisons).toEqual([comparison]);
  });

  it('before the controller wrote a status: no phase, no cells, the matrix from the spec; a long name labels by hash', () => {
    const name = 'e'.repeat(70);
    const row = EvaluationRow.parse(evaluationRowOf({ metadata: { namespace: 'n', name, creationTimestamp: new Date('2026-12-07T10:00:00Z') }, spec: { matrix: [{ harness: 'claude', models: ['a', 'b'] }], testCases: [{}], repeats: 3 } }));
    expect(row).toEqual({ key: `n/${name}`, namespace: 'n', name, label: evaluationLabelValue(name), createdAt: '2026-12-07T10:00:00.000Z', matrix: { cells: 2, testCases: 1, repeats: 3 }, cells: [], comparisons: [] });
    expect(row.label).not.toBe(name);
  });

  it('test cases from ConfigMaps are counted from the status total (cells x test cases x repeats); before a status, the inline ones', () => {
    const e = evaluation('nightly', [cell('claude', 'sonnet'), cell('codex', 'sonnet')]);
    const fromConfigMaps = { ...e, spec: { ...e.spec, testCases: [{ name: 'inline' }], testCasesFrom: [{ configMap: { name: 'cases' } }] } };
    expect(evaluationRowOf(fromConfigMaps).matrix).toEqual({ cells: 2, testCases: 5, repeats: 2 }); // status total 20 = 2 x 5 x 2
    expect(evaluationRowOf({ ...fromConfigMaps, status: undefined }).matrix).toEqual({ cells: 2, testCases: 1, repeats: 2 });
    expect(evaluationRowOf(slimEvaluation({ ...fromConfigMaps, metadata: { ...e.metadata, resourceVersion: '1' } })).matrix.testCases).toBe(5);
  });

  it('a slim Evaluation keeps what the row shows and drops the test cases but their names', () => {
    const e = { ...evaluation('nightly', [cell('claude', 'sonnet')]), metadata: { ...evaluation('nightly', []).metadata, resourceVersion: '9', managedFields: [{}] } };
    const slim = slimEvaluation(e);
    expect(evaluationRowOf(slim)).toEqual(evaluationRowOf(e));
    expect(JSON.stringify(slim)).not.toContain('ppppp');
    expect(slim.spec.testCases).toEqual([0, 1, 2, 3, 4].map((i) => ({ name: `case-${i}` })));
    expect(slim.metadata).not.toHaveProperty('managedFields');
  });
});
