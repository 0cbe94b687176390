// An Evaluation -> its console row (shared/console.ts EvaluationRow), and the slim Evaluation a list+watch keeps for
// it. Pure.
import { evaluationKey } from '../../shared/console.ts';
import type { EvaluationRow } from '../../shared/console.ts';
import { cellKey, evaluationLabelValue } from '../../shared/evaluation/slots.ts';
import type { ConsoleEvaluation } from './sources.ts';

const iso = (t: Date | string | undefined): string | undefined => (t === undefined ? undefined : typeof t === 'string' ? t : t.toISOString());

export function evaluationRowOf(evaluation: ConsoleEvaluation): EvaluationRow {
  const { metadata: m, spec, status: s } = evaluation;
  const namespace = m.namespace ?? '';
  const name = m.name ?? '';
  const cells = (spec.matrix ?? []).reduce((n, h) => n + h.models.length, 0);
  const repeats = spec.repeats ?? 1;
  // Test cases from ConfigMaps are not in the spec: the controller's total (cells x test cases x repeats) tells them.
  const fromStatus = spec.testCasesFrom?.length && s?.runs && cells > 0 ? s.runs.total / (cells * repeats) : undefined;
  const row: EvaluationRow = {
    key: evaluationKey(namespace, name),
    namespace,
    name,
    label: evaluationLabelValue(name),
    createdAt: iso(m.creationTimestamp) ?? new Date(0).toISOString(),
    matrix: { cells, testCases: fromStatus ?? spec.testCases?.length ?? 0, repeats },
    cells: (s?.cells ?? []).map((cell) => ({ ...cell, key: cellKey(cell) })),
    comparisons: s?.comparisons ?? [],
  };
  if (m.generation !== undefined) row.generation = m.generation;
  if (s?.observedGeneration !== undefined) row.observedGeneration = s.observedGeneration;
  if (s?.phase) row.phase = s.phase;
  if (s?.message) row.message = s.message;
  if (s?.runs) row.runs = s.runs;
  return row;
}

/**
 * What a list+watch of Evaluations keeps for the console when it is the console's own (`tcab console`): the matrix,
 * the repeats and the status; each test case is reduced to its name (its prompt and files may be large).
 */
export function slimEvaluation<T extends ConsoleEvaluation & { metadata: { resourceVersion?: string } }>(evaluation: T): T {
  const { metadata: m, spec, status } = evaluation;
  const slim = {
    metadata: { namespace: m.namespace, name: m.name, uid: m.uid, creationTimestamp: m.creationTimestamp, generation: m.generation, resourceVersion: m.resourceVersion },
    spec: { matrix: spec.matrix, repeats: spec.repeats, testCases: spec.testCases?.map((t) => ({ name: (t as { name?: unknown }).name })), ...(spec.testCasesFrom ? { testCasesFrom: spec.testCasesFrom } : {}) },
    status,
  };
  return slim as unknown as T;
}
