// The Evaluation controller alone, in its own process, for the evaluation benchmark (bench/evaluation.ts): its two
// caches built as dispatcher/controller/informers.ts builds them (lean informers of the namespace's Runs and
// Evaluations), the controller leading from the start (no Lease), so its RSS is the controller's and its caches'
// and not the bench client's. Run with --expose-gc: the bench asks for a collection before each memory figure.
// What it counts on the side: reconciles (and their time), the apiserver calls it makes and their failures (a
// proxy around its CustomObjectsApi), the lag the controller reports itself (onStatusWrittenLag: from the first
// Run change a status write reflects to the write done), its log lines by level, and its CPU time.
//
// IPC: the parent sends { id, type }; the child answers { id, ...reply }. Types: progress, memory, stop. It sends
// { type: 'ready' } once its caches have synced.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { makeLeanInformer } from '../kube/lean-informer.ts';
import type { ListPageFn } from '../kube/lean-informer.ts';
import { leanObject } from '../kube/lean-transforms.ts';
import { PooledKubeConfig } from '../kube/pooled-config.ts';
import { EVALUATIONS, evaluationsPath, GROUP, RUNS, runsPath, VERSION } from '../kube/resources.ts';
import type { EvaluationObject, RunObject } from '../kube/resources.ts';
import { EvaluationController } from '../dispatcher/evaluations/controller.ts';
import { Leadership } from '../dispatcher/controller/leader-aware.ts';
import type { Reconcile } from '../dispatcher/controller/leader-aware.ts';
import type { ReconcileResult } from '../dispatcher/controller/work-queue.ts';
import { createLogger } from '../shared/log.ts';
import { FINAL_PHASES } from '../shared/run-status.ts';
import type { RunPhase } from '../shared/run-status.ts';

export type EvaluationChildRequest = { type: 'progress' } | { type: 'memory' } | { type: 'loop' } | { type: 'stop' };

export interface EvaluationChildProgress {
  runs_cached: number;
  runs_indexed: number;
  reconciles: number;
  status_writes: number;
  calls: Record<string, { ok: number; failed: Record<string, number> }>;
  log_lines: Record<string, number>;
  cpu_s: number;
}

const ns = process.env.TCAB_NAMESPACE!;
const config = new PooledKubeConfig((() => {
  const c = new KubeConfig();
  c.loadFromFile(process.env.KUBECONFIG!);
  return c;
})());

// The controller's writes, counted by method and by failure status code.
const calls: EvaluationChildProgress['calls'] = {};
const realCustom = config.makeApiClient(CustomObjectsApi);
const custom = new Proxy(realCustom, {
  get(target, property, receiver) {
    const value = Reflect.get(target, property, receiver) as unknown;
    if (typeof value !== 'function' || typeof property !== 'string' || !/^(create|replace|patch|delete)/.test(property)) return value;
    return async (...args: unknown[]) => {
      const count = (calls[property] ??= { ok: 0, failed: {} });
      try {
        const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        count.ok += 1;
        return result;
      } catch (error) {
        const code = String((error as { code?: number; statusCode?: number }).code ?? (error as { statusCode?: number }).statusCode ?? 'other');
        count.failed[code] = (count.failed[code] ?? 0) + 1;
        throw error;
      }
    };
  },
});

// Lean informers as buildCaches makes them (dispatcher/controller/informers.ts), only the two the controller reads.
const lean = <T extends RunObject | EvaluationObject>(path: string, plural: string) =>
  makeLeanInformer<T>(config, path, ((page) => realCustom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural, ...page })) as ListPageFn<T>, { transform: leanObject });
const runs = lean<RunObject>(runsPath(ns), RUNS);
const evaluations = lean<EvaluationObject>(evaluationsPath(ns), EVALUATIONS);
/** When each Run's final status reached this cache (epoch ms, in order): the bench writes one status per Run. */
const finalsSeen: number[] = [];
runs.on('update', (run) => {
  if (run.status?.phase && FINAL_PHASES.has(run.status.phase as RunPhase)) finalsSeen.push(Date.now());
});

// Its log lines, counted by level; the last errors and warnings kept for the report.
const logLines: Record<string, number> = {};
const lastProblems: string[] = [];
const log = createLogger({
  component: 'evaluation-controller',
  level: 'info',
  destination: {
    write(line: string) {
      const parsed = JSON.parse(line) as { level: string; msg?: string; err?: string };
      logLines[parsed.level] = (logLines[parsed.level] ?? 0) + 1;
      if (parsed.level === 'error' || parsed.level === 'warn') {
        lastProblems.push(`${parsed.level}: ${parsed.msg ?? ''}${parsed.err ? ` (${parsed.err})` : ''}`.slice(0, 300));
        if (lastProblems.length > 5) lastProblems.shift();
      }
    },
  },
});

/** Leadership that also counts the reconciles it hands to the controller and how long each took. */
let reconciles = 0;
const reconcileMs: number[] = [];
class CountingLeadership extends Leadership {
  override wrap(lead: Reconcile, follow?: (key: string) => ReconcileResult): Reconcile {
    return super.wrap(async (key) => {
      reconciles += 1;
      const start = performance.now();
      try {
        return await lead(key);
      } finally {
        reconcileMs.push(performance.now() - start);
      }
    }, follow);
  }
}

/** [when (epoch ms), lag (ms)] per status write, as the controller reports it. */
const lags: [number, number][] = [];
let stopping = false;
// eslint-disable-next-line prefer-const -- the Leadership callback needs the controller, built after it
let controller: EvaluationController;
const leadership = new CountingLeadership(() => controller.enqueueAll());
controller = new EvaluationController({ custom, runs, evaluations, leadership, log, onStatusWrittenLag: (_key, lagMs) => lags.push([Date.now(), lagMs]) });
const cpuStart = process.cpuUsage();
const cpuSeconds = () => {
  const { user, system } = process.cpuUsage(cpuStart);
  return Number(((user + system) / 1e6).toFixed(2));
};

// How long the event loop was blocked (the dispatcher's claims and reconciles share this loop in production).
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
/** The event loop's delay since the last call (ms), then reset. */
function loop() {
  const ms = (ns: number) => Number((ns / 1e6).toFixed(1));
  const figures = { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) };
  loopDelay.reset();
  return figures;
}

function progress(): EvaluationChildProgress {
  return { runs_cached: runs.list().length, runs_indexed: controller.indexedRuns, reconciles, status_writes: lags.length, calls, log_lines: logLines, cpu_s: cpuSeconds() };
}

const mb = (bytes: number) => Math.round(bytes / 2 ** 20);

async function memory() {
  // Two full collections: the second frees what the first's finalizers let go.
  for (let i = 0; i < 2; i++) {
    globalThis.gc?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const usage = process.memoryUsage();
  // A last-resort collection hands back the pages V8 pools for reuse: the live set's RSS.
  (globalThis.gc as ((options: object) => void) | undefined)?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  const released = process.memoryUsage().rss;
  let runsJson = 0;
  for (const run of runs.list()) runsJson += JSON.stringify(run).length;
  let evaluationsJson = 0;
  for (const e of evaluations.list()) evaluationsJson += JSON.stringify(e).length;
  return {
    gc: typeof globalThis.gc === 'function',
    rss_mb: mb(usage.rss),
    rss_pool_released_mb: mb(released),
    heap_used_mb: mb(usage.heapUsed),
    heap_total_mb: mb(usage.heapTotal),
    external_mb: mb(usage.external),
    v8_total_physical_mb: mb(getHeapStatistics().total_physical_size),
    caches: { runs: { objects: runs.list().length, json_mb: Number((runsJson / 2 ** 20).toFixed(1)) }, evaluations: { objects: evaluations.list().length, json_mb: Number((evaluationsJson / 2 ** 20).toFixed(2)) } },
    runs_indexed: controller.indexedRuns,
  };
}

async function handle(request: EvaluationChildRequest): Promise<unknown> {
  switch (request.type) {
    case 'progress':
      return progress();
    case 'memory':
      return memory();
    case 'loop':
      return loop();
    case 'stop':
      stopping = true;
      await controller.shutDown();
      await Promise.all([runs.stop(), evaluations.stop()]);
      return { ...progress(), lags_ms: lags, finals_seen: finalsSeen, reconcile_ms: reconcileMs, last_problems: lastProblems };
  }
}

process.on('message', (message: EvaluationChildRequest & { id: number }) => {
  // After 'stop' the process exits once its reply is out: keep-alive sockets would hold it open otherwise.
  const then = () => message.type === 'stop' && process.exit(0);
  void handle(message).then(
    (reply) => process.send!({ id: message.id, ...(reply as object) }, then),
    (error: unknown) => process.send!({ id: message.id, error: (error as Error).stack }, then),
  );
});
// A watch that fails is restarted after a second, as CacheSet does (the informer stops on an error).
for (const informer of [runs, evaluations]) {
  informer.on('error', (error: unknown) => {
    if (stopping) return; // stopping closes the watches
    log.error({ err: String(error) }, 'watch failed; restarting');
    setTimeout(() => void informer.start(), 1000).unref();
  });
}
await Promise.all([runs.start(), evaluations.start()]);
leadership.set(true);
process.send!({ type: 'ready' });
