// The Evaluation controller (dispatcher/evaluations/controller.ts) on a real apiserver (the test control plane, no
// scheduler, no node): one Evaluation of N Runs (TCAB_BENCH_EVAL_RUNS, default 10,000: 2 harnesses x 5 models x
// N/20 test cases x 2 repeats), the controller alone and leading in a child process (evaluation-child.ts), so its
// RSS is its own. The bench plays the dispatcher: once every Run exists it writes each Run's final status (PUT of
// the status subresource, as the dispatcher does) at a steady rate (TCAB_BENCH_EVAL_RATE per second, default 200),
// checks passing and failing in a known pattern, some Runs ending on infrastructure, some unscored, and notes when
// each write was answered. It watches the Evaluation; when a status update raises runs.final from f to f', the
// Runs f+1..f' in the order their writes were answered are the ones it newly reflects, and each one's lag is the
// update's arrival minus its write's answer (the Evaluation has no per-run list, so which k Runs it counts is
// inferred from the order: an approximation at the level of the few writes in flight at once).
//
// Figures: the time until all N Runs exist; the status update lag p50/p90/p99/max (target p99 < 2 s), and the
// controller's own figure (onStatusWrittenLag: first Run change seen to status written); status writes; the
// Evaluation's size at the end (status, and the whole object the apiserver stores: limit 1.5 MiB); the final status
// checked against what the bench computes from the statuses it wrote; the child's RSS (idle, all Runs created, peak,
// all final: after two forced GCs, as the dispatcher bench takes them); the time to Completed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { up } from '../test/cluster/control-plane.ts';
import { PooledKubeConfig } from '../kube/pooled-config.ts';
import { makeLeanInformer } from '../kube/lean-informer.ts';
import type { ListPageFn } from '../kube/lean-informer.ts';
import { leanObject } from '../kube/lean-transforms.ts';
import { EVALUATIONS, evaluationsPath, GROUP, RUNS, VERSION } from '../kube/resources.ts';
import type { EvaluationObject, RunObject } from '../kube/resources.ts';
import { InlineEvaluationSpec } from '../shared/evaluation/schema.ts';
import type { EvaluationSpecInput, EvaluationStatus } from '../shared/evaluation/schema.ts';
import { evaluationSlots } from '../shared/evaluation/slots.ts';
import type { RunStatus } from '../shared/run-status.ts';
import type { Outcome } from '../shared/run.ts';
import { STATUS_WRITE_INTERVAL_MS } from '../dispatcher/evaluations/controller.ts';
import { startBenchChild } from './child-process.ts';
import type { BenchChild } from './child-process.ts';
import type { EvaluationChildProgress, EvaluationChildRequest } from './evaluation-child.ts';

const ROOT = join(import.meta.dirname, '..');
const NAMESPACE = 'bench';
const NAME = 'bench-eval';
const HARNESSES = ['claude', 'codex'];
const MODELS = ['claude-sonnet-4-5', 'claude-opus-4-1', 'gpt-5', 'gpt-5-mini', 'gemini-2.5-pro'];
const REPEATS = 2;
/** The bench's status writes in flight at most (the dispatcher's status writer is as concurrent as its reconciles). */
const WRITE_CONCURRENCY = 32;
/** What the apiserver accepts in one object (etcd's request limit): 1.5 MiB. */
const APISERVER_OBJECT_LIMIT = 1.5 * 2 ** 20;
const STALL_MS = 120_000;

const quantile = (sorted: readonly number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const round = (n: number, digits = 1) => Number(n.toFixed(digits));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentiles = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { n: sorted.length, p50: round(quantile(sorted, 0.5)), p90: round(quantile(sorted, 0.9)), p99: round(quantile(sorted, 0.99)), max: round(sorted.at(-1) ?? 0) };
};

/** The Evaluation of about `total` Runs: 10 cells, 2 repeats, total / 20 test cases (at least one). */
export function benchEvaluationSpec(total: number): EvaluationSpecInput {
  const testCases = Math.max(1, Math.round(total / (HARNESSES.length * MODELS.length * REPEATS)));
  return {
    matrix: HARNESSES.map((harness) => ({ harness, models: MODELS })),
    testCases: Array.from({ length: testCases }, (_, t) => ({
      name: `tc-${t}`,
      prompt: `Make the failing test number ${t} of the bench repository pass without changing the test itself.`,
      testCase: { check: { command: `npm test -- --grep "case ${t}"` } },
    })),
    repeats: REPEATS,
  };
}

type Verdict = 'passed' | 'failed' | 'infrastructure' | 'unscored';

/**
 * The final status the bench writes for a slot (cell c, test case t, repeat r): 1 in 25 ends on infrastructure, a
 * few time out (unscored: no check), the rest are checked, cell c passing 30% to 80% of them.
 */
export function finalStatusOf(c: number, t: number, r: number, at: Date): { status: RunStatus; verdict: Verdict; outcome: Outcome } {
  const started = new Date(at.getTime() - 60_000 - ((t * 13 + r) % 600) * 1000).toISOString();
  const finished = at.toISOString();
  const base = {
    pod: `pod-${c}-${t}-${r}`,
    harnessVersion: '1.0.0',
    eventsSubject: `tcab.runs.bench.${c}-${t}-${r}`,
    dispatchedTime: started,
    startTime: started,
    completionTime: finished,
    conditions: ['Dispatched', 'Starting', 'Running'].map((type) => ({ type, status: 'True' as const, reason: type, lastTransitionTime: started })),
  };
  let outcome: Outcome;
  let verdict: Verdict;
  let check: RunStatus['check'];
  if ((t * 2 + r + c) % 25 === 0) [outcome, verdict] = ['infrastructure_failed', 'infrastructure'];
  else if ((t + c) % 37 === 5) [outcome, verdict] = ['timed_out', 'unscored'];
  else {
    const passed = (t * 7 + r * 3) % 10 < 3 + (c % 6);
    outcome = passed || t % 3 !== 0 ? 'succeeded' : 'harness_failed';
    verdict = passed ? 'passed' : 'failed';
    check = { passed, exitCode: passed ? 0 : 1, reward: t % 4 === 0 ? null : passed ? 1 : 0, durationMs: 1000 + (t % 500) };
  }
  const status: RunStatus = {
    ...base,
    phase: outcome === 'succeeded' ? 'Succeeded' : 'Failed',
    outcome,
    message: `bench: ${outcome}`,
    conditions: [...base.conditions, { type: 'Finished', status: 'True', reason: outcome, lastTransitionTime: finished }],
    attempts: [{ number: 1, pod: base.pod, dispatchedTime: started, startTime: started, completionTime: finished, outcome, reason: outcome }],
    ...(outcome === 'infrastructure_failed' ? {} : { usage: { input: 1000 + t, output: 200 + r, cache_read: 5000, cache_write: null, reasoning: null }, actualCostUsd: 0.01 * (1 + c), comparableCostUsd: 0.01 * (1 + c) }),
    ...(check ? { check } : {}),
  };
  return { status, verdict, outcome };
}

/** A write order that goes through every cell and test case at once: i -> (i * stride) mod n, stride coprime to n. */
function interleaved(n: number): number[] {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  let stride = Math.max(1, Math.floor(n * 0.618));
  while (n > 1 && gcd(stride, n) !== 1) stride += 1;
  return Array.from({ length: n }, (_, i) => (i * stride) % n);
}

type ChildHandle = BenchChild<EvaluationChildRequest>;

async function startChild(env: NodeJS.ProcessEnv, log: (m: string) => void): Promise<ChildHandle> {
  const child = await startBenchChild<EvaluationChildRequest>(join(import.meta.dirname, 'evaluation-child.ts'), 'evaluation', env);
  log(`evaluation controller child ${child.pid} synced`);
  return child;
}

interface EvaluationEvent {
  at: number;
  final: number;
  phase?: string;
  statusBytes: number;
}

export async function benchEvaluation(total = 10_000, ratePerS = 200, log: (m: string) => void = () => undefined): Promise<Record<string, unknown>> {
  const phases: Record<string, number> = {};
  let phaseStart = performance.now();
  const phase = (name: string) => {
    phases[`${name}_s`] = round((performance.now() - phaseStart) / 1000);
    phaseStart = performance.now();
  };
  const specInput = benchEvaluationSpec(total);
  const spec = InlineEvaluationSpec.parse(specInput);
  const slots = evaluationSlots(NAME, spec);
  const runs = slots.length;
  const dir = mkdtempSync(join(tmpdir(), 'tcab-bench-eval-'));
  const plane = await up({ dir, dieWithParent: true, withScheduler: false });
  let child: ChildHandle | undefined;
  let watcher: ReturnType<typeof makeLeanInformer<EvaluationObject>> | undefined;
  try {
    const kubectl = (...args: string[]) => execFileSync(join(plane.binDir, 'kubectl'), ['--kubeconfig', plane.kubeconfig, ...args], { encoding: 'utf8' });
    kubectl('apply', '-f', join(ROOT, 'deploy', 'crds'));
    kubectl('wait', '--for=condition=Established', 'crd/runs.tcab.dev', 'crd/evaluations.tcab.dev', '--timeout=30s');
    kubectl('create', 'namespace', NAMESPACE);
    phase('control_plane');
    const base = new KubeConfig();
    base.loadFromFile(plane.kubeconfig);
    const config = new PooledKubeConfig(base);
    const custom = config.makeApiClient(CustomObjectsApi);

    child = await startChild({ KUBECONFIG: plane.kubeconfig, TCAB_NAMESPACE: NAMESPACE, TCAB_LOG_LEVEL: 'info' }, log);
    const proc = child;
    const memory = () => proc.ask<Record<string, unknown> & { rss_mb: number; rss_pool_released_mb: number }>({ type: 'memory' });
    const progress = () => proc.ask<EvaluationChildProgress>({ type: 'progress' });
    const idle = await memory();
    await proc.ask({ type: 'loop' }); // the event loop's delay from here on (the forced GCs above held it up)
    phase('controller_start');

    // The bench's own watch of the Evaluation: each update's arrival, its runs.final and phase.
    const events: EvaluationEvent[] = [];
    let onEvent: (() => void) | undefined;
    const record = (e: EvaluationObject) => {
      const status = e.status as EvaluationStatus | undefined;
      if (!status?.runs) return;
      events.push({ at: Date.now(), final: status.runs.final, phase: status.phase, statusBytes: Buffer.byteLength(JSON.stringify(status)) });
      onEvent?.();
    };
    watcher = makeLeanInformer<EvaluationObject>(config, evaluationsPath(NAMESPACE), ((page) => custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NAMESPACE, plural: EVALUATIONS, ...page })) as ListPageFn<EvaluationObject>, { transform: leanObject });
    watcher.on('add', record);
    watcher.on('update', record);
    await watcher.start();
    /** Resolves once an Evaluation update satisfies `done`; fails when none came for STALL_MS. */
    const eventWhere = (what: string, done: (e: EvaluationEvent) => boolean) =>
      new Promise<EvaluationEvent>((resolve, reject) => {
        let timer: NodeJS.Timeout;
        const check = () => {
          const hit = events.find(done);
          clearTimeout(timer);
          if (hit) {
            onEvent = undefined;
            return resolve(hit);
          }
          timer = setTimeout(() => reject(new Error(`bench stalled: no Evaluation update for ${STALL_MS / 1000} s waiting for ${what} (last: ${JSON.stringify(events.at(-1))})`)), STALL_MS);
        };
        onEvent = check;
        check();
      });

    // Every Run made: the child's Run cache holds them all (polled 4 times a second), and the status says so.
    log(`applying an Evaluation of ${runs} Runs (${spec.matrix.length} harnesses x ${MODELS.length} models x ${spec.testCases.length} test cases x ${spec.repeats} repeats)`);
    const createdAt = Date.now();
    await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NAMESPACE, plural: EVALUATIONS, body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Evaluation', metadata: { name: NAME }, spec: specInput } });
    const step = Math.max(1000, Math.round(runs / 10));
    let last = -1;
    let movedAt = performance.now();
    for (let p = await progress(); p.runs_indexed < runs; p = await progress()) {
      if (p.runs_indexed !== last) {
        if (Math.floor(p.runs_indexed / step) !== Math.floor(last / step)) log(`${p.runs_indexed}/${runs} Runs made`);
        [last, movedAt] = [p.runs_indexed, performance.now()];
      } else if (performance.now() - movedAt > STALL_MS) throw new Error(`bench stalled: ${p.runs_indexed}/${runs} Runs made for ${STALL_MS / 1000} s`);
      await sleep(250);
    }
    const allCreatedS = (Date.now() - createdAt) / 1000;
    const firstStatus = await eventWhere('a status counting every Run', (e) => e.phase === 'Running' && e.final === 0);
    phase('create_runs');
    const loopWhileCreating = await proc.ask<Record<string, number>>({ type: 'loop' });
    const created = await memory();
    const afterCreate = await progress();

    // The Runs as they stand (their resourceVersions: a status PUT of a custom resource must carry one).
    const current = new Map<string, RunObject>();
    for (let cont: string | undefined; ; ) {
      const page = (await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NAMESPACE, plural: RUNS, limit: 500, _continue: cont })) as { items: RunObject[]; metadata?: { continue?: string } };
      for (const run of page.items) current.set(run.metadata!.name!, run);
      cont = page.metadata?.continue || undefined;
      if (!cont) break;
    }
    if (current.size !== runs) throw new Error(`${current.size} Runs listed, ${runs} expected`);

    // What the status should say at the end, from the statuses written.
    const cellIndex = new Map(spec.matrix.flatMap((h) => h.models.map((m) => `${h.harness}/${m}`)).map((k, i) => [k, i]));
    const testCaseIndex = new Map(spec.testCases.map((t, i) => [t.name, i]));
    const expected = { final: runs, scored: 0, passed: 0, byOutcome: {} as Record<string, number>, cells: Array.from({ length: cellIndex.size }, () => ({ final: 0, scored: 0, passed: 0, infrastructureFailed: 0, unscored: 0 })) };

    await proc.ask({ type: 'loop' });
    log(`writing ${runs} final Run statuses at ${ratePerS}/s (at most ${WRITE_CONCURRENCY} in flight)`);
    const answered: number[] = []; // when each write was answered, in the order they were
    const writeMs: number[] = [];
    let writeRetries = 0;
    let inFlight = 0;
    let slotFree: (() => void) | undefined;
    const writesStart = Date.now();
    const writeOne = async (j: number) => {
      const slot = slots[j]!;
      const c = cellIndex.get(`${slot.cell.harness}/${slot.cell.model}`)!;
      const { status, verdict, outcome } = finalStatusOf(c, testCaseIndex.get(slot.testCase)!, slot.repeat, new Date());
      const cell = expected.cells[c]!;
      cell.final += 1;
      if (verdict === 'passed' || verdict === 'failed') [cell.scored, expected.scored] = [cell.scored + 1, expected.scored + 1];
      if (verdict === 'passed') [cell.passed, expected.passed] = [cell.passed + 1, expected.passed + 1];
      if (verdict === 'infrastructure') cell.infrastructureFailed += 1;
      if (verdict === 'unscored') cell.unscored += 1;
      expected.byOutcome[outcome] = (expected.byOutcome[outcome] ?? 0) + 1;
      const start = performance.now();
      for (let attempt = 1; ; attempt++) {
        try {
          await custom.replaceNamespacedCustomObjectStatus({ group: GROUP, version: VERSION, namespace: NAMESPACE, plural: RUNS, name: slot.name, body: { ...current.get(slot.name)!, status } });
          break;
        } catch (error) {
          if (attempt >= 5) throw error;
          writeRetries += 1;
          current.set(slot.name, (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NAMESPACE, plural: RUNS, name: slot.name })) as RunObject);
        }
      }
      answered.push(Date.now());
      writeMs.push(performance.now() - start);
    };
    const writes: Promise<void>[] = [];
    const order = interleaved(runs);
    for (let i = 0; i < runs; i++) {
      const due = writesStart + (i * 1000) / ratePerS - Date.now();
      if (due > 0) await sleep(due);
      while (inFlight >= WRITE_CONCURRENCY) await new Promise<void>((resolve) => (slotFree = resolve));
      inFlight += 1;
      writes.push(writeOne(order[i]!).finally(() => {
        inFlight -= 1;
        slotFree?.();
        slotFree = undefined;
      }));
      if ((i + 1) % step === 0) log(`${i + 1}/${runs} final statuses written`);
    }
    await Promise.all(writes);
    const lastWriteAt = answered.at(-1)!;
    const writesSeconds = (lastWriteAt - writesStart) / 1000;
    phase('final_statuses_written');
    const completed = await eventWhere('Completed', (e) => e.phase === 'Completed' && e.final === runs);
    phase('completed');
    const loopWhileFinal = await proc.ask<Record<string, number>>({ type: 'loop' });
    const allFinal = await memory();
    await watcher.stop();
    watcher = undefined;

    // Lag: the k-th answered write is reflected by the first update counting k final Runs.
    const lags: number[] = [];
    const during = events.filter((e) => e.at >= writesStart);
    let e = 0;
    let negative = 0;
    for (let k = 1; k <= answered.length; k++) {
      while (e < during.length && during[e]!.final < k) e++;
      if (e === during.length) break;
      const lag = during[e]!.at - answered[k - 1]!;
      if (lag < 0) negative += 1;
      lags.push(Math.max(0, lag));
    }
    const finalRaised = during.filter((x, i) => x.final > (i === 0 ? 0 : during[i - 1]!.final)).length;

    const evaluation = (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NAMESPACE, plural: EVALUATIONS, name: NAME })) as EvaluationObject;
    const status = evaluation.status as EvaluationStatus;
    const statusBytes = Buffer.byteLength(JSON.stringify(status));
    const objectBytes = Buffer.byteLength(JSON.stringify(evaluation));
    const cellsFound = (status.cells ?? []).map((cell) => ({ final: cell.final, scored: cell.scored, passed: cell.passed, infrastructureFailed: cell.infrastructureFailed, unscored: cell.unscored }));
    const mismatches: string[] = [];
    const compare = (what: string, got: unknown, want: unknown) => JSON.stringify(got) !== JSON.stringify(want) && mismatches.push(`${what}: status ${JSON.stringify(got)}, written ${JSON.stringify(want)}`);
    compare('runs.total', status.runs?.total, runs);
    compare('runs.final', status.runs?.final, expected.final);
    compare('runs.scored', status.runs?.scored, expected.scored);
    compare('runs.passed', status.runs?.passed, expected.passed);
    compare('runs.byOutcome', Object.fromEntries(Object.entries(status.runs?.byOutcome ?? {}).sort()), Object.fromEntries(Object.entries(expected.byOutcome).sort()));
    expected.cells.forEach((want, i) => compare(`cells[${i}]`, cellsFound[i], want));

    const stopped = await child.ask<EvaluationChildProgress & { lags_ms: [number, number][]; finals_seen: number[]; reconcile_ms: number[]; last_problems: string[] }>({ type: 'stop' });
    await child.exited;
    const peak = child.peak();
    const timeline = child.timeline();
    child = undefined;

    const lagFigures = percentiles(lags);
    // The lag in two parts: the k-th answered write -> the k-th final Run in the controller's cache (the watch), and
    // that -> the first Evaluation update counting k final Runs at the bench's watch (the controller and its write).
    const toCache: number[] = [];
    const cacheToUpdate: number[] = [];
    e = 0;
    for (let k = 1; k <= Math.min(answered.length, stopped.finals_seen.length); k++) {
      const seen = stopped.finals_seen[k - 1]!;
      toCache.push(Math.max(0, seen - answered[k - 1]!));
      while (e < during.length && during[e]!.final < k) e++;
      if (e < during.length) cacheToUpdate.push(Math.max(0, during[e]!.at - seen));
    }
    return {
      runs,
      matrix: { harnesses: spec.matrix.length, models_per_harness: MODELS.length, test_cases: spec.testCases.length, repeats: spec.repeats },
      runs_created_s: round(allCreatedS),
      runs_created_per_s: Math.round(runs / allCreatedS),
      first_status_after_s: round((firstStatus.at - createdAt) / 1000),
      final_statuses: { rate_per_s: ratePerS, written_in_s: round(writesSeconds), achieved_per_s: Math.round(runs / writesSeconds), write_ms: percentiles(writeMs), retries: writeRetries, what: 'the bench as the dispatcher: one status PUT per Run, its final status' },
      status_lag_ms: { ...lagFigures, target_p99: 2000, meets_target: lagFigures.p99 < 2000, answered_after_update: negative, what: "a Run's final status write answered -> the Evaluation update counting it arrives at a watch (runs.final; the k-th answered write is taken as the k-th Run counted)" },
      status_lag_parts_ms: { write_answered_to_controller_cache: percentiles(toCache), controller_cache_to_evaluation_update: percentiles(cacheToUpdate), what: 'the same lag in two parts, the k-th Run matched by order again: the Run watch to the controller, then the controller to the Evaluation update at the bench' },
      controller_lag_ms: {
        ...percentiles(stopped.lags_ms.filter(([at]) => at >= writesStart).map(([, lag]) => lag)),
        while_creating: percentiles(stopped.lags_ms.filter(([at]) => at < writesStart).map(([, lag]) => lag)),
        what: "the controller's own figure (onStatusWrittenLag): the first Run change a status write reflects, seen in its cache -> that write done; over its writes from the first final status on (while_creating: the writes before)",
      },
      status_writes: {
        total: stopped.status_writes,
        during_final_statuses: finalRaised,
        min_interval_ms: STATUS_WRITE_INTERVAL_MS,
        per_s_while_writing: round(finalRaised / Math.max(1, (completed.at - writesStart) / 1000), 2),
        evaluation_updates_seen: events.length,
        what: 'status PUTs by the controller (total), and updates that raised runs.final while the bench wrote final statuses',
      },
      completed: { after_evaluation_created_s: round((completed.at - createdAt) / 1000), after_last_final_status_ms: completed.at - lastWriteAt },
      status_size: {
        status_bytes: statusBytes,
        largest_status_bytes: Math.max(...events.map((x) => x.statusBytes)),
        object_bytes: objectBytes,
        apiserver_limit_bytes: APISERVER_OBJECT_LIMIT,
        object_share_of_limit: round(objectBytes / APISERVER_OBJECT_LIMIT, 3),
        meets_target: objectBytes < APISERVER_OBJECT_LIMIT / 2,
        cells: status.cells?.length ?? 0,
        what: 'the Evaluation as the apiserver stores it (spec with every test case, and the status: per-cell aggregates)',
      },
      status_check: { matches: mismatches.length === 0, mismatches, expected: { final: expected.final, scored: expected.scored, passed: expected.passed, by_outcome: expected.byOutcome }, what: "the final status against what the bench computes from the statuses it wrote: runs.total/final/scored/passed/byOutcome and each cell's final/scored/passed/infrastructureFailed/unscored" },
      controller: {
        reconciles: stopped.reconciles,
        reconcile_ms: percentiles(stopped.reconcile_ms),
        calls: stopped.calls,
        log_lines: stopped.log_lines,
        last_problems: stopped.last_problems,
        event_loop_delay_ms: { while_creating: loopWhileCreating, final_statuses_to_completed: loopWhileFinal, what: "the child's event loop held up (monitorEventLoopDelay): in the dispatcher, its claims and Run reconciles wait that long" },
        cpu_s: { total: stopped.cpu_s, creating_runs: afterCreate.cpu_s, final_statuses_to_completed: round(stopped.cpu_s - afterCreate.cpu_s, 2) },
      },
      controller_rss_mb: {
        idle: idle.rss_mb,
        all_runs_created: created.rss_mb,
        all_final: allFinal.rss_mb,
        peak: peak.sampled,
        peak_vm_hwm: peak.vm_hwm,
        pool_released: { idle: idle.rss_pool_released_mb, all_runs_created: created.rss_pool_released_mb, all_final: allFinal.rss_pool_released_mb },
        what: 'the child alone (/proc/<pid>/status): the controller, its Run and Evaluation caches and their watches; idle and all_* after two forced GCs (pool_released: after a last-resort GC too, the live set); peak sampled every 100 ms; the chart\'s dispatcher heap size',
        timeline_s_mb: timeline.filter((_, i) => i % Math.max(1, Math.ceil(timeline.length / 60)) === 0),
      },
      controller_memory: { idle, all_runs_created: created, all_final: allFinal },
      phases_s: phases,
      control_plane_ready_ms: plane.timings.ready_ms,
    };
  } finally {
    await watcher?.stop();
    child?.kill();
    await plane.down();
    rmSync(dir, { recursive: true, force: true });
  }
}
