// Issue 39 on the installed chart: an Evaluation of gg x 2 models of the stub x 5 test cases x 2 repeats (20 Runs),
// made by the dispatcher's Evaluation controller. The stub's gg script is the same for every Run (the chart test's
// GG_SCRIPT: a probe, the workspace's .adversary/attempts.sh when it has one, hello.txt written), so the test cases'
// checks make the verdicts: two pass, two fail, and one ("tamper") has an agent that rewrites the test file in its
// workspace to pass, while the shipped one fails. Every figure of the Evaluation's status is checked against what
// this file computes itself from the Runs' results as the drivers published them.
import { expect } from 'vitest';
import type { RunObject, EvaluationObject } from '../../kube/resources.ts';
import type { RunResult } from '../../shared/run.ts';
import { InlineEvaluationSpec } from '../../shared/evaluation/schema.ts';
import type { EvaluationCell, EvaluationSpecInput } from '../../shared/evaluation/schema.ts';
import { evaluationSlots } from '../../shared/evaluation/slots.ts';
import type { RunSlot } from '../../shared/evaluation/slots.ts';
import { wilsonInterval } from '../../shared/evaluation/stats.ts';
import { ADVERSARY_DIR } from '../cluster/adversary-attempts.ts';

export const EVALUATION_NAME = 'gg-two-models';
const MODELS = ['claude-sonnet-4-5', 'claude-haiku-4-5'];

/** What each test case's check comes to on the stub's workspace (hello.txt = "hello"). */
export const EXPECTED_VERDICTS: Record<string, { passed: boolean; reward: number | null; exitCode: number }> = {
  hello: { passed: true, reward: 1, exitCode: 0 },
  goodbye: { passed: false, reward: null, exitCode: 1 },
  seeded: { passed: true, reward: 0.5, exitCode: 0 },
  partial: { passed: false, reward: 0.25, exitCode: 3 },
  // The agent rewrote tests/verify.sh to `exit 0`; the shipped one (no goodbye.txt) fails.
  tamper: { passed: false, reward: null, exitCode: 1 },
};

export function evaluationObject(namespace: string): { apiVersion: string; kind: string; metadata: { name: string; namespace: string }; spec: EvaluationSpecInput } {
  return {
    apiVersion: 'tcab.dev/v1alpha1',
    kind: 'Evaluation',
    metadata: { name: EVALUATION_NAME, namespace },
    spec: {
      matrix: [{ harness: 'gg', models: MODELS }],
      testCases: [
        { name: 'hello', prompt: 'Write hello.txt', testCase: { check: { command: 'grep -qx hello hello.txt && printf 1 > "$TCAB_REWARD_FILE"', timeoutSeconds: 60 } } },
        { name: 'goodbye', prompt: 'Write goodbye.txt', testCase: { check: { command: 'test -f goodbye.txt', timeoutSeconds: 60 } } },
        {
          name: 'seeded',
          prompt: 'Read data/input.txt, then write hello.txt',
          testCase: { source: { files: [{ path: 'data/input.txt', content: '42\n' }] }, check: { command: 'grep -qx 42 data/input.txt && test -f hello.txt && printf 0.5 > "$TCAB_REWARD_FILE"', timeoutSeconds: 60 } },
        },
        { name: 'partial', prompt: 'Half of it', testCase: { check: { command: 'printf 0.25 > "$TCAB_REWARD_FILE"; exit 3', timeoutSeconds: 60 } } },
        {
          name: 'tamper',
          prompt: 'Make tests/verify.sh pass',
          testCase: {
            source: {
              files: [
                { path: 'tests/verify.sh', content: 'echo "the workspace\'s verify"; test -f goodbye.txt\n' },
                // Run by the agent's shell (GG_SCRIPT's second step): it makes the workspace's test pass whatever.
                { path: `${ADVERSARY_DIR}/attempts.sh`, content: "printf 'exit 0\\n' > tests/verify.sh && echo tampered=yes\n" },
              ],
            },
            check: { command: 'sh tests/verify.sh', files: [{ path: 'tests/verify.sh', content: 'echo "shipped verify"; test -f goodbye.txt\n' }], timeoutSeconds: 60 },
          },
        },
      ],
      repeats: 2,
      // registries: the gg script's probe reaches the npm registry through the egress proxy (404) instead of
      // waiting out its 30 s timeout against a closed network.
      template: { maxRuntimeSeconds: 180, egress: 'registries', retries: 1 },
    },
  };
}

export function slotsOfEvaluation(namespace: string): RunSlot[] {
  const object = evaluationObject(namespace);
  return evaluationSlots(object.metadata.name, InlineEvaluationSpec.parse(object.spec));
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const median = (values: number[]) => {
  const s = values.toSorted((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/**
 * The cell's figures as this test computes them from the drivers' results (and the Runs' times for the durations),
 * written out here rather than through the summary code the controller uses.
 */
export function expectCellFromResults(cell: EvaluationCell, slots: readonly RunSlot[], results: ReadonlyMap<string, RunResult>, runs: ReadonlyMap<string, RunObject>): void {
  const mine = slots.filter((s) => s.cell.harness === cell.harness && s.cell.model === cell.model);
  const rs = mine.map((s) => results.get(s.name)!);
  const scored = rs.filter((r) => r.check);
  const passed = scored.filter((r) => r.check!.passed).length;
  const rewards = scored.map((r) => r.check!.reward).filter((x): x is number => x !== null);
  const k = 2;
  // Per test case: both repeats scored; pass@2 is 1 when any passed, pass^2 when both did.
  const byTestCase = [...new Set(mine.map((s) => s.testCase))].map((t) => mine.filter((s) => s.testCase === t).map((s) => results.get(s.name)!.check!.passed));
  expect(cell).toMatchObject({
    runs: 10,
    final: 10,
    scored: scored.length,
    passed,
    infrastructureFailed: rs.filter((r) => r.outcome === 'infrastructure_failed').length,
    unscored: rs.filter((r) => r.outcome !== 'infrastructure_failed' && !r.check).length,
    passAtK: { k, value: byTestCase.filter((t) => t.some(Boolean)).length / byTestCase.length },
    passHatK: { k, value: byTestCase.filter((t) => t.every(Boolean)).length / byTestCase.length },
  });
  expect(cell.passRate).toBeCloseTo(passed / scored.length, 12);
  expect(cell.passRateInterval).toEqual(wilsonInterval(passed, scored.length));
  expect(cell.meanReward).toBeCloseTo(sum(rewards) / rewards.length, 12);
  for (const cls of ['input', 'output'] as const) {
    const values = scored.map((r) => r.tokens![cls]!);
    expect(cell.tokens[cls]!.sum, cls).toBe(sum(values));
    expect(cell.tokens[cls]!.median, cls).toBe(median(values));
  }
  const costs = scored.map((r) => r.comparable_cost_usd!);
  expect(cell.comparableCostUsd.sum!).toBeCloseTo(sum(costs), 12);
  expect(cell.comparableCostUsd.mean!).toBeCloseTo(sum(costs) / costs.length, 12);
  // A run with no actual cost (the harness reported no charge) makes the cell's unknown, never a partial sum.
  const actual = scored.map((r) => r.actual_cost_usd);
  if (actual.some((x) => x === null)) expect(cell.actualCostUsd).toEqual({ sum: null, mean: null });
  else expect(cell.actualCostUsd.sum!).toBeCloseTo(sum(actual as number[]), 12);
  const seconds = mine.map((s) => runs.get(s.name)!.status!).map((st) => (Date.parse(st.completionTime!) - Date.parse(st.startTime!)) / 1000);
  expect(cell.durationSeconds.p50!).toBeCloseTo(median(seconds), 9);
}

export const isFinal = (run: RunObject | undefined) => ['Succeeded', 'Failed', 'Cancelled'].includes(run?.status?.phase ?? '');
export type { EvaluationObject };
