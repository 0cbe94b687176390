// An Evaluation's Runs, one per slot (cell x test case x repeat), each with a name that follows from the slot alone:
// applying the same Evaluation again names the same Runs, so creating what is missing is the whole of "resume", and
// a slot whose Run was deleted is run again. The name hashes the slot's whole Run spec too: a test case or template
// edited names new Runs (its old ones ran something else and are no longer the evaluation's), the others stay. Pure.
import { createHash } from 'node:crypto';
import { stringify as stableStringify } from 'safe-stable-stringify';
import type { RunSpecInput } from '../run.ts';
import { GROUP } from '../api-group.ts';
import type { ResolvedEvaluationSpec } from './schema.ts';

export const EVALUATION_LABEL = `${GROUP}/evaluation`;
export const CELL_LABEL = `${GROUP}/cell`;
export const HARNESS_LABEL = `${GROUP}/harness`;
export const TEST_CASE_LABEL = `${GROUP}/test-case`;
export const REPEAT_LABEL = `${GROUP}/repeat`;
/** Model ids hold characters a label value may not ("/", ":"), so the model is an annotation; its cell is a label. */
export const MODEL_ANNOTATION = `${GROUP}/model`;

export interface Cell {
  harness: string;
  model: string;
}

export interface RunSlot {
  cell: Cell;
  testCase: string;
  /** 1-based. */
  repeat: number;
  /** The Run's metadata.name: `<evaluation, cut to 40>-<hash of the slot>`, a DNS label. */
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  spec: RunSpecInput;
}

const digest = (...parts: string[]) => createHash('sha256').update(parts.join('\u0000')).digest('hex');

/** The label value naming a cell: a hash of harness and model (the model itself may not be a label value). */
export function cellKey(cell: Cell): string {
  return digest('cell', cell.harness, cell.model).slice(0, 16);
}

/** A label value for the evaluation's name: the name when it fits (63), else a hash of it. */
export function evaluationLabelValue(evaluation: string): string {
  return evaluation.length <= 63 ? evaluation : `h-${digest('evaluation', evaluation).slice(0, 24)}`;
}

/** The cells in matrix order: each harness with each of its models. */
export function evaluationCells(spec: Pick<ResolvedEvaluationSpec, 'matrix'>): Cell[] {
  return spec.matrix.flatMap(({ harness, models }) => models.map((model) => ({ harness, model })));
}

/**
 * Every slot of the matrix, cell by cell, test case by test case, repeat by repeat. A test case's slots are the same
 * wherever it comes from (inline or a ConfigMap, test-case-sources.ts): the name hashes what its Run runs.
 */
export function evaluationSlots(evaluation: string, spec: ResolvedEvaluationSpec): RunSlot[] {
  const prefix = evaluation.slice(0, 40).replaceAll('.', '-').replace(/[^a-z0-9]+$/, '');
  return evaluationCells(spec).flatMap((cell) =>
    spec.testCases.flatMap((testCase) =>
      Array.from({ length: spec.repeats }, (_, i): RunSlot => {
        const repeat = i + 1;
        const runSpec: RunSpecInput = {
          ...spec.template,
          harness: cell.harness,
          model: cell.model,
          prompt: testCase.prompt,
          ...(testCase.testCase ? { testCase: testCase.testCase } : {}),
        };
        return {
          cell,
          testCase: testCase.name,
          repeat,
          // The evaluation's whole name is hashed: two names sharing the 40-character prefix name different Runs.
          name: `${prefix}-${digest('slot', evaluation, cell.harness, cell.model, testCase.name, String(repeat), stableStringify(runSpec)!).slice(0, 16)}`,
          labels: {
            [EVALUATION_LABEL]: evaluationLabelValue(evaluation),
            [CELL_LABEL]: cellKey(cell),
            [HARNESS_LABEL]: cell.harness,
            [TEST_CASE_LABEL]: testCase.name,
            [REPEAT_LABEL]: String(repeat),
          },
          annotations: { [MODEL_ANNOTATION]: cell.model },
          spec: runSpec,
        };
      }),
    ),
  );
}
