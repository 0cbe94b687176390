import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import type { EvaluationObject, RunObject } from '../../kube/resources.ts';
import type { EvaluationSpecInput } from '../../shared/evaluation/schema.ts';
import { CELL_LABEL, EVALUATION_LABEL, cellKey } from '../../shared/evaluation/slots.ts';
import type { RunStatus } from '../../shared/run-status.ts';
import { RunSpec } from '../../shared/run.ts';
import { planEvaluation, slotStateOf, slotsOf } from './plan.ts';
import type { ConfigMapLookup } from '../../shared/evaluation/test-case-sources.ts';
import { evaluationOwnerOf } from '../../kube/evaluation-owner.ts';

const spec: EvaluationSpecInput = {
  matrix: [{ harness: 'gg', models: ['stub-a', 'stub-b'] }],
  testCases: [
    { name: 'pass', prompt: 'answer:0', testCase: { check: { command: 'true' } } },
    { name: 'fail', prompt: 'answer:1', testCase: { check: { command: 'false' } } },
  ],
  repeats: 2,
  template: { maxRuntimeSeconds: 300 },
};

const evaluation = (s: unknown = spec, generation = 3): EvaluationObject => ({
  apiVersion: 'tcab.dev/v1alpha1',
  kind: 'Evaluation',
  metadata: { name: 'cmp', namespace: 'ns', uid: 'uid-eval', generation },
  spec: s as EvaluationSpecInput,
});

const valid = (e: EvaluationObject, configMaps?: ConfigMapLookup) => {
  const slots = slotsOf(e, configMaps);
  if (!slots.valid) throw new Error(slots.message);
  return slots;
};

const final = (run: RunObject, status: RunStatus): RunObject => ({ ...run, status: { phase: 'Succeeded', ...status } });

describe('planEvaluation', () => {
  const e = evaluation();
  const slots = valid(e);

  it('first look: a Run per slot, owned by the Evaluation (controller reference), labelled, with the template', () => {
    const plan = planEvaluation(e, slots, new Map(), () => undefined);
    expect(plan.create).toHaveLength(8);
    expect(plan.remove).toEqual([]);
    for (const run of plan.create) {
      expect(run.metadata!.ownerReferences).toEqual([{ apiVersion: 'tcab.dev/v1alpha1', kind: 'Evaluation', name: 'cmp', uid: 'uid-eval', controller: true, blockOwnerDeletion: true }]);
      expect(evaluationOwnerOf(run)).toEqual({ name: 'cmp', uid: 'uid-eval' });
      expect(run.metadata!.labels![EVALUATION_LABEL]).toBe('cmp');
      expect(run.metadata!.namespace).toBe('ns');
      expect(RunSpec.parse(run.spec)).toMatchObject({ harness: 'gg', maxRuntimeSeconds: 300 });
    }
    expect(plan.create.filter((r) => r.metadata!.labels![CELL_LABEL] === cellKey({ harness: 'gg', model: 'stub-b' }))).toHaveLength(4);
    expect(plan.status).toMatchObject({ phase: 'Running', observedGeneration: 3, runs: { total: 8, final: 0, scored: 0, passed: 0 } });
  });

  it('a deleted Run is made again, and only it; Runs no slot names are deleted; a name another owner holds is reported, never touched', () => {
    const all = planEvaluation(e, slots, new Map(), () => undefined).create;
    const owned = new Map(all.map((r) => [r.metadata!.name!, r]));
    const [gone, foreign] = [all[2]!, all[5]!];
    owned.delete(gone.metadata!.name!);
    owned.delete(foreign.metadata!.name!);
    const stale = { ...all[0]!, metadata: { ...all[0]!.metadata, name: 'cmp-0000000000000000' } };
    owned.set('cmp-0000000000000000', stale);
    const plan = planEvaluation(e, slots, owned, (name) => (name === foreign.metadata!.name ? { ...foreign, metadata: { name, ownerReferences: [] } } : undefined));
    expect(plan.create.map((r) => r.metadata!.name)).toEqual([gone.metadata!.name]);
    expect(plan.remove).toEqual(['cmp-0000000000000000']);
    expect(plan.taken).toEqual([foreign.metadata!.name]);
    expect(plan.status.message).toContain(`1 slot(s) not run: a Run of another owner has the name (${foreign.metadata!.name})`);
  });

  it('the status counts what the Runs say: passes, failures, infrastructure apart, and Completed once every Run is final', () => {
    const all = planEvaluation(e, slots, new Map(), () => undefined).create;
    const outcomeOf = (run: RunObject): RunStatus => {
      const passes = run.metadata!.labels!['tcab.dev/test-case'] === 'pass';
      if (run === all[7]) return { phase: 'Failed', outcome: 'infrastructure_failed' };
      return { outcome: 'succeeded', check: { passed: passes, exitCode: passes ? 0 : 1, reward: passes ? 1 : null, durationMs: 3 }, usage: { input: 10, output: 2, cache_read: null, cache_write: null, reasoning: null }, actualCostUsd: 0.5, comparableCostUsd: 0.25, startTime: '2026-12-07T10:00:00Z', completionTime: '2026-12-07T10:00:04Z' };
    };
    const owned = new Map(all.map((r) => [r.metadata!.name!, final(r, outcomeOf(r))]));
    const plan = planEvaluation(e, slots, owned, () => undefined);
    expect(plan.create).toEqual([]);
    expect(plan.status.phase).toBe('Completed');
    expect(plan.status.runs).toEqual({ total: 8, final: 8, scored: 7, passed: 4, byOutcome: { succeeded: 7, infrastructure_failed: 1 } });
    const [a, b] = plan.status.cells!;
    expect(a).toMatchObject({ model: 'stub-a', scored: 4, passed: 2, passRate: 0.5, infrastructureFailed: 0, meanReward: 1, tokens: { input: { sum: 40, median: 10 } }, actualCostUsd: { sum: 2, mean: 0.5 }, durationSeconds: { p50: 4 } });
    expect(b).toMatchObject({ model: 'stub-b', scored: 3, passed: 2, infrastructureFailed: 1 });
  });

  it('an unchanged view plans nothing and the same status (the controller writes nothing)', () => {
    const all = planEvaluation(e, slots, new Map(), () => undefined).create;
    const owned = new Map(all.map((r) => [r.metadata!.name!, r]));
    const once = planEvaluation(e, slots, owned, () => undefined);
    expect(planEvaluation(e, slots, owned, () => undefined)).toEqual(once);
    expect(once.create).toEqual([]);
  });
});

describe('slotsOf', () => {
  it.each([
    [{ ...spec, repeats: 0 }, 'spec.repeats'],
    [{ ...spec, testCases: [{ name: 'Bad Name', prompt: 'x' }] }, 'spec.testCases[0].name'],
    [{ ...spec, matrix: [{ harness: 'gg', models: ['m', 'm'] }] }, 'spec.matrix[0].models[1]'],
    [{ matrix: 'x' }, 'spec.matrix'],
  ])('a refused spec makes no Run and says which field (%#)', (bad, field) => {
    const slots = slotsOf(evaluation(bad));
    expect(slots.valid).toBe(false);
    expect((slots as { message: string }).message).toMatch(new RegExp(`^spec refused, no Run made: .*${field.replace(/[[\].]/g, '\\$&')}: `));
  });

  describe('test cases from ConfigMaps', () => {
    const fromMap = { ...spec, testCases: [spec.testCases![0]!], testCasesFrom: [{ configMap: { name: 'cases' } }] };
    const cases = { 'fail.yaml': 'prompt: "answer:1"\ntestCase: { check: { command: "false" } }\n' };

    it('make the slots they would make inline (inline first): the same Runs', () => {
      const slots = valid(evaluation(fromMap), (name) => (name === 'cases' ? { data: cases } : undefined));
      expect(slots.slots.map((s) => s.testCase)).toEqual(['pass', 'pass', 'fail', 'fail', 'pass', 'pass', 'fail', 'fail']);
      expect(slots.slots.map((s) => s.name)).toEqual(valid(evaluation()).slots.map((s) => s.name));
      const plan = planEvaluation(evaluation(fromMap), slots, new Map(), () => undefined);
      expect(plan.create.filter((r) => r.metadata!.labels!['tcab.dev/test-case'] === 'fail').map((r) => RunSpec.parse(r.spec).testCase?.check?.command)).toEqual(['false', 'false', 'false', 'false']);
      expect(plan.status.runs!.total).toBe(8);
    });

    it('a missing ConfigMap: Invalid, naming the field and the ConfigMap, no slot', () => {
      const slots = slotsOf(evaluation(fromMap), () => undefined);
      expect(slots).toEqual({ valid: false, message: 'spec refused, no Run made: spec.testCasesFrom[0].configMap "cases": not found (or not labelled tcab.dev/test-cases)' });
    });

    it('a bad key: Invalid, naming the field, the ConfigMap and the key', () => {
      const slots = slotsOf(evaluation(fromMap), () => ({ data: { 'fail.yaml': 'prompt: x\ntestCase: { check: { command: "" } }' } }));
      expect(slots.valid).toBe(false);
      expect((slots as { message: string }).message).toMatch(/^spec refused, no Run made: spec\.testCasesFrom\[0\]\.configMap "cases" key "fail\.yaml": testCase\.check\.command: /);
    });
  });

  describe('test cases from a directory or git (read by tcab eval apply, never by the dispatcher)', () => {
    it.each([
      [{ directory: 'cases' }, 'spec.testCasesFrom[1].directory "cases": a directory is read by tcab'],
      [{ git: { url: 'https://example.com/evals.git', ref: 'main', path: 'cases' } }, 'spec.testCasesFrom[1].git "https://example.com/evals.git" path "cases": a git repository is read by tcab'],
    ])('applied with kubectl: Invalid, naming the field and saying to use tcab eval apply, no slot (%#)', (source, start) => {
      // A ConfigMap before it that is there and right: the refusal is for the source, not a missing neighbour.
      const slots = slotsOf(evaluation({ ...spec, testCasesFrom: [{ configMap: { name: 'cases' } }, source] }), () => ({ data: { 'extra.yaml': 'prompt: x' } }));
      expect(slots.valid).toBe(false);
      const { message } = slots as { message: string };
      expect(message.startsWith(`spec refused, no Run made: ${start}`)).toBe(true);
      expect(message).toContain('never by the cluster: apply the file with `tcab eval apply FILE`');
      const plan = planEvaluation(evaluation(), valid(evaluation()), new Map(), () => undefined);
      expect(plan.create).toHaveLength(8); // the same spec without the source is fine: only the source is refused
    });
  });

  test.prop([fc.jsonValue()])('any spec the apiserver could hold is either slots or a refusal, never a throw', (value) => {
    const slots = slotsOf(evaluation(value));
    if (slots.valid) expect(slots.slots.length).toBeGreaterThan(0);
    else expect(slots.message).toMatch(/^spec refused/);
  });
});

describe('slotStateOf', () => {
  const slot = valid(evaluation()).slots[0]!;
  it.each<[string, RunStatus | undefined, object]>([
    ['no Run yet', undefined, { final: false }],
    ['queued', { phase: 'Pending' }, { final: false }],
    ['running', { phase: 'Running' }, { final: false }],
    ['final without an outcome (counted as infrastructure by the summary)', { phase: 'Failed' }, { final: true }],
    ['final with no check', { phase: 'Cancelled', outcome: 'cancelled' }, { final: true, result: { outcome: 'cancelled', check: null, tokens: null, actual_cost_usd: null, comparable_cost_usd: null } }],
  ])('%s', (_, status, expected) => {
    const run = status && ({ metadata: { name: slot.name }, spec: {}, status } as RunObject);
    expect(slotStateOf(slot, run)).toEqual({ cell: slot.cell, testCase: slot.testCase, ...expected });
  });
});
