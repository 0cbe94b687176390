// The dispatcher alone, in its own process, for the dispatcher benchmark (bench/dispatcher.ts): built as
// dispatcher/main.ts builds it (KUBECONFIG, settings from the environment, metrics), so its RSS is the
// dispatcher's and not the bench client's. Two stand-ins, both at the dispatcher's edges: leadership is given by
// the bench (no Lease: the burst starts when the bench says so), and the driver results that the NATS consumer
// would hand to Dispatcher.onResult arrive over IPC instead. System events (kubelet, teardown) are counted, not
// published. Run with --expose-gc: the bench asks for a collection before each memory figure.
//
// IPC: the parent sends { id, type, ... }; the child answers { id, ...reply }. Types: lead, results, progress,
// memory, stop. It sends { type: 'ready' } once its informers have synced.
import { readFileSync } from 'node:fs';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import { KubeConfig } from '@kubernetes/client-node';
import { Dispatcher } from '../dispatcher/controller/dispatcher.ts';
import { dispatcherMetrics } from '../dispatcher/controller/metrics.ts';
import { dispatcherConfig } from '../dispatcher/config.ts';
import { isFinal } from '../dispatcher/status/transitions.ts';
import type { RunResult } from '../shared/run.ts';

export type ChildRequest =
  | { type: 'lead' }
  | { type: 'results'; runIds: string[] }
  | { type: 'progress' }
  | { type: 'memory' }
  | { type: 'stop' };

export interface ChildProgress {
  pod_writes: number;
  runs_cached: number;
  dispatched: number;
  final: number;
  pods_cached: number;
  results_acked: number;
}

const config = new KubeConfig();
config.loadFromFile(process.env.KUBECONFIG!);
const settings = dispatcherConfig(process.env);
const metrics = dispatcherMetrics();
const latencies: number[] = [];
const observe = metrics.claimLatency.observe.bind(metrics.claimLatency);
metrics.claimLatency.observe = ((value: number) => {
  latencies.push(value * 1000);
  observe(value);
}) as typeof metrics.claimLatency.observe;
let systemEvents = 0;
const dispatcher = new Dispatcher({
  config,
  settings,
  events: { publish: async (_runId, events) => void (systemEvents += events.length), forget: async () => undefined },
  metrics,
  log: (message) => process.stderr.write(`dispatcher: ${message}\n`),
});
let resultsAcked = 0;
/**
 * Results are handed over as the JetStream consumer (nats/result-consumer.ts) hands them over: at most
 * MAX_ACK_PENDING unacknowledged at once (the server's default for a consumer), the next one when one is acked.
 */
const MAX_ACK_PENDING = 1000;
const pendingResults: string[] = [];
let nextResult = 0;
let unacked = 0;
function deliverResults(): void {
  while (unacked < MAX_ACK_PENDING && nextResult < pendingResults.length) {
    const runId = pendingResults[nextResult++]!;
    unacked += 1;
    let acked = false;
    dispatcher.onResult(runId, result(runId), () => {
      if (acked) return;
      acked = true;
      unacked -= 1;
      resultsAcked += 1;
      deliverResults();
    });
  }
  // Every result handed over: the run ids go, or the bench's own list (100,000 strings) would count as the
  // dispatcher's memory in the after-delete figures.
  if (nextResult === pendingResults.length) [pendingResults.length, nextResult] = [0, 0];
}

/** What a driver publishes when its run succeeded: the smallest valid RunResult. */
function result(runId: string): RunResult {
  const now = new Date().toISOString();
  return {
    run_id: runId, harness_slug: 'claude', harness_version: '2.1.197', model: 'claude-sonnet-4-5', canonical_model: null, outcome: 'succeeded',
    message: 'bench', auth_mode: 'api-key', sessions: [], session_ids: [], exit_code: 0, stages: [], tokens: null, raw_usage: null,
    reported_cost_usd: null, actual_cost_usd: null, comparable_cost_usd: null, catalog_version: null, cost_warnings: [],
    started_at: now, finished_at: now, event_count: 0,
  };
}

type Listed = { list(): { status?: { phase?: string } }[] };
const isInformer = (value: unknown): value is Listed => typeof (value as Listed | undefined)?.list === 'function';

/**
 * Where the memory is: every informer cache (objects and the size of their JSON, a lower bound of their heap
 * size) and every Map/Set the dispatcher holds, found by walking its fields so the figure survives refactors.
 */
function retainers() {
  const caches: Record<string, { objects: number; json_mb: number }> = {};
  const maps: Record<string, number> = {};
  const fields = Object.entries(dispatcher as unknown as Record<string, unknown>);
  // One level down too: per-Run maps live in helper objects (the Run memory, the result inbox, the work queues).
  for (const [name, value] of fields) {
    if (value && typeof value === 'object' && !(value instanceof Map || value instanceof Set) && !isInformer(value)) {
      for (const [inner, held] of Object.entries(value)) if (held instanceof Map || held instanceof Set) maps[`${name}.${inner}`] = held.size;
    }
  }
  for (const [name, value] of fields) {
    if (value instanceof Map || value instanceof Set) maps[name] = value.size;
    else if (isInformer(value)) {
      const objects = value.list();
      let bytes = 0;
      for (const o of objects) bytes += JSON.stringify(o).length;
      caches[name] = { objects: objects.length, json_mb: Number((bytes / 2 ** 20).toFixed(1)) };
    }
  }
  return { caches, maps };
}

async function progress(): Promise<ChildProgress> {
  const runs = dispatcher.snapshot();
  let dispatched = 0;
  let final = 0;
  for (const r of runs) {
    if (r.status?.phase === 'Dispatched') dispatched += 1;
    if (isFinal(r.status ?? {})) final += 1;
  }
  const pods = (dispatcher as unknown as { pods?: Listed }).pods;
  return { pod_writes: (await metrics.podWrites.get()).values[0]?.value ?? 0, runs_cached: runs.length, dispatched, final, pods_cached: pods?.list().length ?? -1, results_acked: resultsAcked };
}

const mb = (bytes: number) => Math.round(bytes / 2 ** 20);

/**
 * Resident memory by kind of mapping (/proc/self/smaps), MB: the brk heap (malloc's main arena), anonymous
 * mappings (V8's heap pages, and malloc's per-thread arenas: 64 MB-aligned regions) and the rest (code,
 * libraries); and the largest anonymous mappings. What the JS heap statistics cannot see: memory malloc holds
 * on to after the objects in it are gone.
 */
function residentByMapping() {
  const totals: Record<string, number> = { brk_heap: 0, anonymous: 0, other: 0, lazy_free: 0 };
  const anonymous: { start: string; size_mb: number; rss_mb: number }[] = [];
  let kind = 'other';
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      kind = header[3] === '[heap]' ? 'brk_heap' : header[3] === '' ? 'anonymous' : 'other';
      if (kind === 'anonymous') anonymous.push({ start: header[1]!, size_mb: mb(parseInt(header[2]!, 16) - parseInt(header[1]!, 16)), rss_mb: 0 });
      continue;
    }
    // MADV_FREE'd pages (LazyFree): given back, but counted in RSS until the kernel needs the memory.
    const lazy = /^LazyFree:\s+(\d+) kB/.exec(line);
    if (lazy) totals.lazy_free! += Number(lazy[1]) * 1024;
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (!rss) continue;
    totals[kind]! += Number(rss[1]) * 1024;
    if (kind === 'anonymous') anonymous.at(-1)!.rss_mb = mb(Number(rss[1]) * 1024);
  }
  return { ...Object.fromEntries(Object.entries(totals).map(([k, v]) => [k, mb(v)])), largest_anonymous: anonymous.sort((x, y) => y.rss_mb - x.rss_mb).slice(0, 6) };
}

async function memory() {
  // Two full collections: the second frees what the first's finalizers let go.
  for (let i = 0; i < 2; i++) {
    globalThis.gc?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const usage = process.memoryUsage();
  const afterGc = mb(usage.rss);
  // V8 keeps the pages a collection frees in a pool for reuse, resident, until memory pressure: a last-resort
  // collection (what V8 does under pressure) hands them back, so this figure is the live set's RSS.
  (globalThis.gc as ((options: object) => void) | undefined)?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  const released = mb(process.memoryUsage().rss);
  const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, mb(s.space_used_size)]));
  const heap = getHeapStatistics();
  // V8's own view: pages it holds (physical), what it malloc'd itself (compiler zones, worklists) and that peak.
  const v8 = { total_physical_mb: mb(heap.total_physical_size), malloced_mb: mb(heap.malloced_memory), peak_malloced_mb: mb(heap.peak_malloced_memory) };
  return { gc: typeof globalThis.gc === 'function', rss_mb: afterGc, rss_pool_released_mb: released, heap_used_mb: mb(usage.heapUsed), heap_total_mb: mb(usage.heapTotal), external_mb: mb(usage.external), array_buffers_mb: mb(usage.arrayBuffers), heap_spaces_mb: spaces, v8, resident_by_mapping_mb: residentByMapping(), ...retainers() };
}

async function handle(request: ChildRequest): Promise<unknown> {
  switch (request.type) {
    case 'lead':
      dispatcher.setLeading(true);
      return {};
    case 'results':
      pendingResults.push(...request.runIds);
      deliverResults();
      return {};
    case 'progress':
      return progress();
    case 'memory':
      return memory();
    case 'stop':
      await dispatcher.stop();
      return { latencies_ms: latencies, system_events: systemEvents, status_writes: (await metrics.statusWrites.get()).values[0]?.value ?? 0, events_dropped: (await metrics.eventsDropped.get()).values[0]?.value ?? 0, conflicts: (await metrics.conflicts.get()).values[0]?.value ?? 0 };
  }
}

process.on('message', (message: ChildRequest & { id: number }) => {
  // After 'stop' the process exits once its reply is out: keep-alive sockets would hold it open otherwise.
  const then = () => message.type === 'stop' && process.exit(0);
  void handle(message).then(
    (reply) => process.send!({ id: message.id, ...(reply as object) }, then),
    (error: unknown) => process.send!({ id: message.id, error: (error as Error).stack }, then),
  );
});
await dispatcher.start();
process.send!({ type: 'ready' });
