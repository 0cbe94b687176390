// Dispatcher throughput and memory on a real apiserver (the test control plane without a scheduler or node, so Pods
// stay Pending and only the API is measured). The dispatcher runs alone in a child process
// (dispatcher-child.ts), so its RSS is its own; the bench process does the client work: the raw Pod-create
// baseline at the dispatcher's concurrency, queueing N Runs (TCAB_BENCH_RUNS, default 10,000), the results the
// drivers would publish, and the deletion of every Run at the end.
//
// Memory figures (MB, /proc/<pid>/status of the child; each "after a settle" figure is taken after two forced
// full GCs in the child, --expose-gc, so it is the live set and not the collector's timing):
//   idle          informers synced on the empty namespace, before any Run exists: the baseline;
//   queued        every Run queued and in the dispatcher's cache, not leading yet (the figure before the burst);
//   peak          highest VmRSS sampled every 100 ms from start to end, and the kernel's VmHWM;
//   all_final     every Run's result written (the results phase's live set: final statuses, Pods being torn down);
//   after_delete  every Run final (its result delivered), its Pod torn down by the dispatcher, the Run deleted
//                 and gone from the cache. after/idle is the per-Run leak check (target <= 1.1); the Kubernetes
//                 Events on the Runs outlive them (the apiserver keeps Events an hour), so they are deleted too
//                 and the figure is taken again (after_events_deleted).
// V8 keeps the pages a collection frees in a pool, resident, until memory pressure; every figure is also given
// after a last-resort GC (which releases that pool, as V8 does under pressure): pool_released, the live set.
// The child's V8 heap is the one the Helm chart gives the dispatcher (dispatcher-process.ts: chartHeapArgs).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import pRetry from 'p-retry';
import { up } from '../test/cluster/control-plane.ts';
import { CLAIM_CONCURRENCY } from '../dispatcher/controller/dispatcher.ts';
import { PooledKubeConfig } from '../kube/pooled-config.ts';
import { dispatcherConfig } from '../dispatcher/config.ts';
import { buildDriverPod } from '../dispatcher/pods/driver-pod.ts';
import { RunSpec } from '../shared/run.ts';
import { concurrently } from '../shared/concurrently.ts';
import { startDispatcherProcess } from './dispatcher-process.ts';
import type { ChildProgress } from './dispatcher-child.ts';

const ROOT = join(import.meta.dirname, '..');
/** The bench's own writes (queueing, deleting): more than the dispatcher's 16, to keep its side from being the limit. */
const CLIENT_CONCURRENCY = 32;
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const round = (n: number, digits = 1) => Number(n.toFixed(digits));

/** The bench's time budget ran out while waiting: the report says how far it got instead of failing. */
class OutOfTime extends Error {
  readonly waitingFor: string;
  readonly done: number;
  constructor(waitingFor: string, done: number) {
    super(`out of time waiting for ${waitingFor} (${done})`);
    this.waitingFor = waitingFor;
    this.done = done;
  }
}

/**
 * `until`: how far to go ('deleted': every Run final and deleted; 'dispatched': stop once the claims are reflected).
 * `budgetS`: seconds from the start after which the bench stops waiting (from the claims on) and reports the phase
 * it was in.
 */
export async function benchDispatcher(runs = 10_000, rawPods = 2_000, log: (m: string) => void = () => undefined, until: 'dispatched' | 'deleted' = 'deleted', budgetS = Infinity): Promise<Record<string, unknown>> {
  const outOfTimeAt = performance.now() + budgetS * 1000;
  const phases: Record<string, number> = {};
  let phaseStart = performance.now();
  const phase = (name: string) => {
    phases[`${name}_s`] = round((performance.now() - phaseStart) / 1000);
    phaseStart = performance.now();
  };
  const dir = mkdtempSync(join(tmpdir(), 'tcab-bench-cluster-'));
  const plane = await up({ dir, dieWithParent: true, withScheduler: false });
  let child: Awaited<ReturnType<typeof startDispatcherProcess>> | undefined;
  try {
    const kubectl = (...args: string[]) => execFileSync(join(plane.binDir, 'kubectl'), ['--kubeconfig', plane.kubeconfig, ...args], { encoding: 'utf8' });
    kubectl('apply', '-f', join(ROOT, 'deploy', 'crds'));
    kubectl('wait', '--for=condition=Established', 'crd/runs.tcab.dev', '--timeout=30s');
    kubectl('create', 'namespace', 'bench-raw');
    kubectl('create', 'namespace', 'bench');
    kubectl('create', 'secret', 'generic', 'keys', '-n', 'bench', '--from-literal=anthropic=sk-fake-bench');
    phase('control_plane');
    const config = new KubeConfig();
    config.loadFromFile(plane.kubeconfig);
    // The bench's requests go over the same kind of client as the dispatcher's: keep-alive connections.
    const pooled = new PooledKubeConfig(config);
    const core = pooled.makeApiClient(CoreV1Api);
    const custom = pooled.makeApiClient(CustomObjectsApi);
    const env = { KUBECONFIG: plane.kubeconfig, TCAB_NAMESPACE: 'bench', TCAB_DRIVER_IMAGE: 'ghcr.io/tcab/driver:bench', TCAB_NATS_URL: 'nats://127.0.0.1:4222', TCAB_API_KEY_SECRETS: JSON.stringify([{ env: 'ANTHROPIC_API_KEY', secret: 'keys', key: 'anthropic' }]) };
    const settings = dispatcherConfig(env);
    const spec = RunSpec.parse({ harness: 'claude', model: 'claude-sonnet-4-5', prompt: 'bench' });

    // The same Pod the dispatcher makes, created directly: the apiserver's own rate for this work.
    log(`raw Pod creates: ${rawPods} at concurrency ${CLAIM_CONCURRENCY}`);
    const rawStart = performance.now();
    await concurrently(Array.from({ length: rawPods }, (_, i) => i), CLAIM_CONCURRENCY, (i) => {
      const pod = buildDriverPod({ namespace: 'bench-raw', name: `raw-${i}`, uid: '00000000-0000-0000-0000-000000000000' }, spec, settings, ['ANTHROPIC_API_KEY']);
      pod.metadata!.ownerReferences = undefined;
      return core.createNamespacedPod({ namespace: 'bench-raw', body: pod });
    });
    const rawPerSecond = rawPods / ((performance.now() - rawStart) / 1000);
    phase('raw_pod_creates');

    const dispatcher = await startDispatcherProcess(env, log);
    child = dispatcher;
    const memory = () => dispatcher.ask<Record<string, unknown> & { rss_mb: number; rss_pool_released_mb: number }>({ type: 'memory' });
    const progress = () => dispatcher.ask<ChildProgress>({ type: 'progress' });
    const idle = await memory();
    phase('dispatcher_start');
    // Polls the child (4 per second); a bench that stops moving for two minutes (the apiserver died, say) fails
    // with what it was waiting for instead of hanging.
    const step = Math.max(1000, Math.round(runs / 10));
    let budgeted = false; // the budget applies from the claims on: queueing must finish for any figure
    const waitFor = async (what: string, done: (p: ChildProgress) => boolean, count: (p: ChildProgress) => number) => {
      let last = -1;
      let movedAt = performance.now();
      for (let p = await progress(); !done(p); p = await progress()) {
        const n = count(p);
        if (n !== last) {
          if (Math.floor(n / step) !== Math.floor(last / step)) log(`${n}/${runs} ${what}`);
          [last, movedAt] = [n, performance.now()];
        } else if (performance.now() - movedAt > 120_000) throw new Error(`bench stalled: ${n}/${runs} ${what} for 120 s`);
        if (budgeted && performance.now() > outOfTimeAt) throw new OutOfTime(what, n);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    };

    log(`queueing ${runs} Runs`);
    const names = Array.from({ length: runs }, (_, i) => `r-${i}`);
    await concurrently(names, CLIENT_CONCURRENCY, (name) => custom.createNamespacedCustomObject({ group: 'tcab.dev', version: 'v1alpha1', namespace: 'bench', plural: 'runs', body: { apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name }, spec: { harness: 'claude', model: 'claude-sonnet-4-5', prompt: 'bench' } } }));
    await waitFor('Runs in the dispatcher cache', (p) => p.runs_cached >= runs, (p) => p.runs_cached);
    phase('queue_runs');
    const queued = await memory();

    const finalizeAndDelete = async () => {
      log('delivering every Run\'s result (as the NATS consumer does: at most 1,000 unacked)');
      await dispatcher.ask({ type: 'results', runIds: names.map((name) => `bench_${name}`) });
      await waitFor('Runs final', (p) => p.final >= runs, (p) => p.final);
      phase('results_to_final');
      const allFinal = await memory(); // every result written: the results phase's live set
      // The dispatcher tears down each finished Run's Pod (a delete each, then the watch shows it gone).
      await waitFor('driver Pods torn down', (p) => p.pods_cached === 0 && p.pod_writes >= 2 * runs, (p) => p.pod_writes - runs);
      phase('pods_torn_down');

      log(`deleting ${runs} Runs`);
      await concurrently(names, CLIENT_CONCURRENCY, (name) => custom.deleteNamespacedCustomObject({ group: 'tcab.dev', version: 'v1alpha1', namespace: 'bench', plural: 'runs', name }));
      await waitFor('Runs gone from the cache', (p) => p.runs_cached === 0, (p) => runs - p.runs_cached);
      phase('delete_runs');
      const afterDelete = await memory();
      // Logged as well as returned: a later step failing must not lose the figure a 30-minute run was for.
      log(`after delete: rss ${afterDelete.rss_mb} MB (pool released ${afterDelete.rss_pool_released_mb} MB)`);
      // At 100,000 Runs one deletecollection of their Events outlives the apiserver's request timeout (the stream
      // is reset: NGHTTP2_INTERNAL_ERROR) while the deletion goes on server-side: retry until it completes.
      await pRetry(() => core.deleteCollectionNamespacedEvent({ namespace: 'bench' }), { retries: 10, minTimeout: 1000, onFailedAttempt: ({ error, attemptNumber }) => log(`deleting Events, attempt ${attemptNumber}: ${error.message}`) });
      // The Events' deletions reach the dispatcher's Event informer through its watch; wait until the cache is empty.
      for (let m = await memory(); ; m = await memory()) {
        const events = (m.caches as Record<string, { objects: number }> | undefined)?.kubeEvents?.objects ?? 0;
        if (events === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const afterEvents = await memory();
      phase('delete_events');
      return { allFinal, afterDelete, afterEvents };
    };

    log(`claiming ${runs} Runs`);
    const claimStart = performance.now();
    budgeted = true;
    let claimSeconds: number | undefined;
    let reflectedSeconds: number | undefined;
    let busiest: Awaited<ReturnType<typeof memory>> | undefined;
    let tail: Awaited<ReturnType<typeof finalizeAndDelete>> | undefined;
    let incomplete: Record<string, unknown> | undefined;
    let claimedInTime = runs;
    try {
      await dispatcher.ask({ type: 'lead' });
      await waitFor('Pods created', (p) => p.pod_writes >= runs, (p) => p.pod_writes);
      claimSeconds = (performance.now() - claimStart) / 1000;
      phase('claims');
      // Claims come first; the Runs' statuses (Dispatched) follow: how long until all show it.
      await waitFor('Runs showing Dispatched', (p) => p.dispatched >= runs, (p) => p.dispatched);
      reflectedSeconds = (performance.now() - claimStart) / 1000;
      phase('statuses_dispatched');
      busiest = await memory(); // every Run, its Pod and its Events cached
      // The rest (results, teardown, deletion) only when asked to go that far (the default): at 100,000 Runs the
      // claims and the peak can be measured on their own (until = 'dispatched').
      if (until === 'deleted') tail = await finalizeAndDelete();
    } catch (error) {
      if (!(error instanceof OutOfTime)) throw error;
      const p = await progress();
      incomplete = { waiting_for: error.waitingFor, done: error.done, of: runs, budget_s: budgetS, progress: p };
      log(`out of time: ${error.message}`);
      if (claimSeconds === undefined) [claimSeconds, claimedInTime] = [(performance.now() - claimStart) / 1000, p.pod_writes];
      busiest ??= await memory();
    }
    const peak = dispatcher.peak();
    const timeline = dispatcher.timeline();
    const final = await dispatcher.stop();
    child = undefined;

    const latencies = (final.latencies_ms as number[]).sort((a, b) => a - b);
    const statusWrites = final.status_writes as number;
    const claimsPerSecond = claimedInTime / claimSeconds;
    return {
      runs,
      claims_per_s: Math.round(claimsPerSecond),
      raw_pod_creates: rawPods,
      raw_pod_creates_per_s: Math.round(rawPerSecond),
      ratio_to_raw_pod_create: round(claimsPerSecond / rawPerSecond, 2),
      target_ratio: 0.8,
      meets_target: claimsPerSecond / rawPerSecond >= 0.8,
      claim_concurrency: CLAIM_CONCURRENCY,
      claim_latency_ms: { p50: round(quantile(latencies, 0.5)), p99: round(quantile(latencies, 0.99)), max: round(latencies.at(-1) ?? 0), target_p99: 1000, what: 'one claim: spec and availability checks, then the Pod create (the claim)' },
      all_statuses_dispatched_after_s: reflectedSeconds === undefined ? null : round(reflectedSeconds),
      ...(incomplete && { incomplete }),
      claim_seconds: round(claimSeconds),
      phases_s: phases,
      apiserver_writes_per_run: { status: round(statusWrites / runs, 2), pod: until === 'deleted' ? 2 : 1, conflicts: final.conflicts, run_events_dropped: final.events_dropped, what: 'status writes up to final per Run, Pod create + delete; Kubernetes Events on the Run go out behind them (beyond a queue of 5,000 dropped and counted)' },
      dispatcher_rss_mb: {
        idle: idle.rss_mb,
        queued: queued.rss_mb,
        all_dispatched: busiest.rss_mb,
        peak: peak.sampled,
        peak_vm_hwm: peak.vm_hwm,
        ...(tail && {
          all_final: tail.allFinal.rss_mb,
          after_delete: tail.afterDelete.rss_mb,
          after_events_deleted: tail.afterEvents.rss_mb,
          after_delete_to_idle: round(tail.afterDelete.rss_mb / idle.rss_mb, 2),
          after_events_deleted_to_idle: round(tail.afterEvents.rss_mb / idle.rss_mb, 2),
        }),
        pool_released: { idle: idle.rss_pool_released_mb, queued: queued.rss_pool_released_mb, all_dispatched: busiest.rss_pool_released_mb, ...(tail && { all_final: tail.allFinal.rss_pool_released_mb, after_delete: tail.afterDelete.rss_pool_released_mb, after_events_deleted: tail.afterEvents.rss_pool_released_mb, after_delete_to_idle: round(tail.afterDelete.rss_pool_released_mb / idle.rss_pool_released_mb, 2) }), what: 'the same after a last-resort GC, which releases the pages V8 pools for reuse (it does so itself under memory pressure): the live set' },
        target_peak: 1024,
        target_after_to_idle: 1.1,
        what: 'the dispatcher child alone (/proc/<pid>/status); idle, queued and after_* are taken after two forced GCs (V8 keeps the freed pages resident in its pool: see pool_released)',
        timeline_s_mb: timeline.filter((_, i) => i % Math.max(1, Math.ceil(timeline.length / 60)) === 0),
      },
      dispatcher_memory: { idle, queued, all_dispatched: busiest, ...(tail && { all_final: tail.allFinal, after_delete: tail.afterDelete, after_events_deleted: tail.afterEvents }) },
      until,
      control_plane_ready_ms: plane.timings.ready_ms,
    };
  } finally {
    child?.kill();
    await plane.down();
    rmSync(dir, { recursive: true, force: true });
  }
}
