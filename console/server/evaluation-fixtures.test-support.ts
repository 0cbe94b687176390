// Synthetic Evaluations for the console's tests: a status cell with the figures a test names (the rest plausible),
// an Evaluation object around cells, and an EvaluationsSource a test drives (upsert, delete) like a watch would.
import type { EvaluationCell, EvaluationStatus } from '../../shared/evaluation/schema.ts';
import { CELL_LABEL, EVALUATION_LABEL, TEST_CASE_LABEL, cellKey, evaluationLabelValue } from '../../shared/evaluation/slots.ts';
import type { ConsoleEvaluation, ConsoleRun, ConsoleSources, EvaluationChange, EvaluationsSource } from './sources.ts';

export function cell(harness: string, model: string, figures: Partial<EvaluationCell> = {}): EvaluationCell {
  return {
    harness,
    model,
    runs: 10,
    final: 10,
    scored: 10,
    passed: 5,
    infrastructureFailed: 0,
    unscored: 0,
    passRate: 0.5,
    passRateInterval: { low: 0.24, high: 0.76 },
    meanReward: null,
    tokens: { input: { sum: 1000, median: 100 }, output: { sum: 500, median: 50 } },
    actualCostUsd: { sum: 0.1, mean: 0.01 },
    comparableCostUsd: { sum: 0.2, mean: 0.02 },
    durationSeconds: { p50: 65, p90: 130 },
    ...figures,
  };
}

export function evaluation(name: string, cells: EvaluationCell[], extra: { namespace?: string; status?: Partial<EvaluationStatus>; generation?: number } = {}): ConsoleEvaluation {
  const final = cells.reduce((n, c) => n + c.final, 0);
  const total = cells.reduce((n, c) => n + c.runs, 0);
  const harnesses = [...new Set(cells.map((c) => c.harness))];
  return {
    metadata: { namespace: extra.namespace ?? 'evals', name, uid: `uid-${name}`, creationTimestamp: '2026-12-07T10:00:00Z', generation: extra.generation ?? 1 },
    spec: {
      matrix: harnesses.map((harness) => ({ harness, models: cells.filter((c) => c.harness === harness).map((c) => c.model) })),
      testCases: Array.from({ length: 5 }, (_, i) => ({ name: `case-${i}`, prompt: 'p'.repeat(1000) })),
      repeats: 2,
    },
    status: { phase: final === total ? 'Completed' : 'Running', runs: { total, final, scored: cells.reduce((n, c) => n + c.scored, 0), passed: cells.reduce((n, c) => n + c.passed, 0), byOutcome: { succeeded: final } }, cells, comparisons: [], observedGeneration: extra.generation ?? 1, ...extra.status },
  };
}

/** A source a test changes: set() upserts (an add or a status update), remove() deletes. */
export class FakeEvaluationsSource implements EvaluationsSource {
  private readonly items = new Map<string, ConsoleEvaluation>();
  private readonly listeners = new Set<(change: EvaluationChange) => void>();

  constructor(initial: ConsoleEvaluation[] = []) {
    for (const e of initial) this.items.set(keyOf(e), e);
  }

  list(): Iterable<ConsoleEvaluation> {
    return [...this.items.values()];
  }

  subscribe(onChange: (change: EvaluationChange) => void): () => void {
    this.listeners.add(onChange);
    return () => this.listeners.delete(onChange);
  }

  set(e: ConsoleEvaluation): void {
    this.items.set(keyOf(e), e);
    this.listeners.forEach((l) => l({ type: 'upsert', evaluation: e }));
  }

  remove(e: ConsoleEvaluation): void {
    this.items.delete(keyOf(e));
    this.listeners.forEach((l) => l({ type: 'delete', evaluation: e }));
  }
}

const keyOf = (e: ConsoleEvaluation) => `${e.metadata.namespace}/${e.metadata.name}`;

/** Console sources with no Runs' details, no NATS, the given Runs and (when given) Evaluations. */
export function sourcesWith(runs: ConsoleRun[], evaluations?: EvaluationsSource): ConsoleSources {
  return {
    runs: { list: () => runs, subscribe: () => () => undefined },
    runDetail: { watch: (_ns, _name, cb) => (cb(undefined), () => undefined) },
    kubeEvents: { watch: () => () => undefined },
    writer: { cancel: async () => 'not-found' },
    harnesses: { list: () => [], readiness: () => ({ ready: true, missing: [] }) },
    configs: { list: () => new Map(), subscribe: () => () => undefined },
    ...(evaluations ? { evaluations } : {}),
  };
}

/** A Run of an Evaluation's slot: the labels shared/evaluation/slots.ts gives it, finished with the given outcome. */
export function slotRun(evaluationName: string, harness: string, model: string, testCase: string, outcome: 'succeeded' | 'harness_failed', namespace = 'evals'): ConsoleRun {
  const name = `${evaluationName}-${harness}-${model}-${testCase}`.replace(/[^a-z0-9-]/g, '-');
  return {
    metadata: {
      namespace, name, uid: `uid-${name}`, creationTimestamp: '2026-12-07T10:00:00Z',
      labels: { [EVALUATION_LABEL]: evaluationLabelValue(evaluationName), [CELL_LABEL]: cellKey({ harness, model }), [TEST_CASE_LABEL]: testCase },
    },
    spec: { harness, model },
    status: { phase: outcome === 'succeeded' ? 'Succeeded' : 'Failed', outcome, startTime: '2026-12-07T10:00:05Z', completionTime: '2026-12-07T10:01:10Z' },
  };
}
