// A Run -> its runs-table row (shared/console.ts RunRow), and the slim Run a list+watch keeps for it. Pure.
import { runKey } from '../../shared/console.ts';
import type { Activity, RunRow } from '../../shared/console.ts';
import { CELL_LABEL, EVALUATION_LABEL, TEST_CASE_LABEL } from '../../shared/evaluation/slots.ts';
import type { ConsoleRun } from './sources.ts';

const iso = (t: Date | string | undefined): string | undefined => (t === undefined ? undefined : typeof t === 'string' ? t : t.toISOString());

/** The row's Kubernetes half; activity and lastEventAt come from NATS (withActivity). */
export function rowOf(run: ConsoleRun): RunRow {
  const { metadata: m, spec, status: s } = run;
  const row: RunRow = {
    key: runKey(m.namespace ?? '', m.name ?? ''),
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    harness: typeof spec.harness === 'string' ? spec.harness : '',
    model: typeof spec.model === 'string' ? spec.model : '',
    phase: s?.phase ?? 'Pending',
    createdAt: iso(m.creationTimestamp) ?? new Date(0).toISOString(),
  };
  // Only fields that are set: a row is sent to every browser, 10,000 at a time.
  if (s?.outcome) row.outcome = s.outcome;
  if (s?.startTime) row.startedAt = s.startTime;
  if (s?.completionTime) row.finishedAt = s.completionTime;
  if (s?.usage) row.tokens = s.usage;
  if (s?.actualCostUsd !== undefined) row.actualCostUsd = s.actualCostUsd;
  if (s?.comparableCostUsd !== undefined) row.comparableCostUsd = s.comparableCostUsd;
  if (s?.harnessVersion) row.harnessVersion = s.harnessVersion;
  if (s?.message) row.message = s.message;
  if (s?.egress?.profile) row.egress = s.egress.profile;
  if (s?.check) row.check = s.check;
  // A slot of an Evaluation: its labels (shared/evaluation/slots.ts), so the runs page filters by evaluation and cell.
  const labels = m.labels ?? {};
  if (labels[EVALUATION_LABEL]) row.evaluation = labels[EVALUATION_LABEL];
  if (labels[CELL_LABEL]) row.cell = labels[CELL_LABEL];
  if (labels[TEST_CASE_LABEL]) row.testCase = labels[TEST_CASE_LABEL];
  // Past its first attempt: the one it is on (or, waiting out a back-off, the one that comes next).
  const attempts = s?.attempts?.length ?? 0;
  const attempt = s?.nextAttemptTime ? attempts + 1 : attempts;
  if (attempt > 1) row.attempt = attempt;
  return row;
}

export function withActivity(row: RunRow, activity: { activity: Activity; at: string } | undefined): RunRow {
  return activity ? { ...row, activity: activity.activity, lastEventAt: activity.at } : row;
}

/**
 * What a list+watch of Runs keeps for the console when it is the console's own (`tcab console`): the row's fields
 * only. The prompt (up to 1 MB), the test case's files and the conditions are dropped as each object arrives.
 */
export function slimRun<T extends ConsoleRun & { metadata: { resourceVersion?: string } }>(run: T): T {
  const { metadata: m, spec, status } = run;
  const slim = {
    metadata: { namespace: m.namespace, name: m.name, uid: m.uid, creationTimestamp: m.creationTimestamp, resourceVersion: m.resourceVersion, labels: evaluationLabels(m.labels) },
    spec: { harness: spec.harness, model: spec.model },
    status: status && { ...status, conditions: undefined },
  };
  return slim as unknown as T;
}

/** The labels the row reads (an Evaluation's slot), undefined when the Run has none of them. */
function evaluationLabels(labels: Record<string, string> | undefined): Record<string, string> | undefined {
  const kept = Object.fromEntries([EVALUATION_LABEL, CELL_LABEL, TEST_CASE_LABEL].filter((k) => labels?.[k] !== undefined).map((k) => [k, labels![k]!]));
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/** Equal rows need not be sent again (a status write that changed only a condition's time). */
export function sameRow(a: RunRow, b: RunRow): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
