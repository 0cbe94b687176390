// What an Evaluation's controller does next, decided from its spec (with the test cases of the ConfigMaps it names,
// test-case-sources.ts) and the Runs it owns (the Run cache's view), and
// what its status says: the Runs to create (a slot without its Run: first apply, a Run deleted, a test case added),
// the Runs to delete (owned, but no slot of the current spec names them: a test case edited or removed), the slots
// a Run of another owner holds, and the summary over every slot. Pure: the controller (controller.ts) does the I/O.
import { FINAL_PHASES } from '../../shared/run-status.ts';
import type { RunPhase } from '../../shared/run-status.ts';
import { formatIssues } from '../../shared/zod-issues.ts';
import { EvaluationSpec } from '../../shared/evaluation/schema.ts';
import type { EvaluationStatus, ResolvedEvaluationSpec } from '../../shared/evaluation/schema.ts';
import { resolveEvaluationSpec } from '../../shared/evaluation/test-case-sources.ts';
import type { ConfigMapLookup } from '../../shared/evaluation/test-case-sources.ts';
import { evaluationSlots } from '../../shared/evaluation/slots.ts';
import type { RunSlot } from '../../shared/evaluation/slots.ts';
import { summarizeEvaluation } from '../../shared/evaluation/summary.ts';
import type { SlotState } from '../../shared/evaluation/summary.ts';
import { GROUP, VERSION } from '../../kube/resources.ts';
import { ownerReferenceOf } from '../../kube/evaluation-owner.ts';
import type { EvaluationObject, RunObject } from '../../kube/resources.ts';

/**
 * The spec's slots, or why the spec is refused. Costly at 10,000 slots (a hash each): the controller keeps it per
 * generation and versions of the ConfigMaps the spec reads.
 */
export type EvaluationSlots = { valid: true; spec: ResolvedEvaluationSpec; slots: RunSlot[] } | { valid: false; message: string };

/**
 * `configMaps`: the ConfigMaps of test cases in the Evaluation's namespace, by name (none by default). A directory or
 * git source is never read here (the dispatcher clones nothing): the spec is Invalid, naming the field and saying to
 * apply the file with `tcab eval apply`, which puts those test cases in ConfigMaps.
 */
export function slotsOf(evaluation: EvaluationObject, configMaps: ConfigMapLookup = () => undefined): EvaluationSlots {
  const parsed = EvaluationSpec.safeParse(evaluation.spec);
  if (!parsed.success) return { valid: false, message: `spec refused, no Run made: ${formatIssues(parsed.error, 'spec')}` };
  const resolved = resolveEvaluationSpec(parsed.data, configMaps);
  if ('problem' in resolved) return { valid: false, message: `spec refused, no Run made: ${resolved.problem}` };
  return { valid: true, spec: resolved.spec, slots: evaluationSlots(evaluation.metadata!.name!, resolved.spec) };
}

export interface EvaluationPlan {
  create: RunObject[];
  /** Names of owned Runs no slot names. */
  remove: string[];
  /** Slots whose name a Run of another owner holds: never touched, reported in the status. */
  taken: string[];
  status: EvaluationStatus;
}

/** A slot's Run as the controller creates it. */
export function runOfSlot(evaluation: EvaluationObject, slot: RunSlot): RunObject {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'Run',
    metadata: { name: slot.name, namespace: evaluation.metadata!.namespace, labels: slot.labels, annotations: slot.annotations, ownerReferences: [ownerReferenceOf(evaluation)] },
    spec: slot.spec as RunObject['spec'],
  };
}

/** A slot as its Run stands: final with what its status reports, or not final (no Run yet, queued, running). */
export function slotStateOf(slot: RunSlot, run: RunObject | undefined): SlotState {
  const status = run?.status;
  const base = { cell: slot.cell, testCase: slot.testCase };
  if (!status?.phase || !FINAL_PHASES.has(status.phase as RunPhase)) return { ...base, final: false };
  // A final Run always has an outcome (the dispatcher writes both at once); without one the summary counts it apart.
  if (!status.outcome) return { ...base, final: true };
  return {
    ...base,
    final: true,
    result: {
      outcome: status.outcome,
      check: status.check ? { passed: status.check.passed, reward: status.check.reward } : null,
      tokens: status.usage ?? null,
      actual_cost_usd: status.actualCostUsd ?? null,
      comparable_cost_usd: status.comparableCostUsd ?? null,
      ...(status.startTime ? { started_at: status.startTime } : {}),
      ...(status.completionTime ? { finished_at: status.completionTime } : {}),
    },
  };
}

/**
 * `owned`: the Runs this Evaluation owns, by name; `existing(name)`: any Run of that name in its namespace (the
 * cache), to tell a slot whose Run is missing from one whose name another object holds.
 */
export function planEvaluation(evaluation: EvaluationObject, slots: Extract<EvaluationSlots, { valid: true }>, owned: ReadonlyMap<string, RunObject>, existing: (name: string) => RunObject | undefined): EvaluationPlan {
  const create: RunObject[] = [];
  const taken: string[] = [];
  const names = new Set<string>();
  const states = slots.slots.map((slot) => {
    names.add(slot.name);
    const run = owned.get(slot.name);
    if (!run) {
      if (existing(slot.name)) taken.push(slot.name);
      else create.push(runOfSlot(evaluation, slot));
    }
    return slotStateOf(slot, run);
  });
  const remove = [...owned.keys()].filter((name) => !names.has(name));
  const summary = summarizeEvaluation(slots.spec, states);
  const status: EvaluationStatus = {
    ...summary,
    ...(taken.length > 0 ? { message: `${taken.length} slot(s) not run: a Run of another owner has the name (${taken.slice(0, 3).join(', ')}${taken.length > 3 ? ', ...' : ''}); delete it to run the slot` } : {}),
    ...(evaluation.metadata?.generation !== undefined ? { observedGeneration: evaluation.metadata.generation } : {}),
  };
  return { create, remove, taken, status };
}

/** The status of a refused spec: no Run is made, and why is said once. */
export function invalidStatus(evaluation: EvaluationObject, message: string): EvaluationStatus {
  return { phase: 'Invalid', message, ...(evaluation.metadata?.generation !== undefined ? { observedGeneration: evaluation.metadata.generation } : {}) };
}
