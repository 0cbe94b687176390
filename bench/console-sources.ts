// In-memory sources for the console bench (console/server/sources.ts): N synthetic Runs spread over the registry's
// harnesses and every phase, each started one with a latest event (its activity), no HarnessConfig, no Kubernetes Events. Only the Runs are synthetic: the console server,
// its NATS activity and feed, the page and the browser are the real ones.
import type { ConsoleRun, ConsoleSources, RunChange, Unsubscribe } from '../console/server/sources.ts';
import { RUN_PHASES } from '../shared/run-status.ts';
import type { Outcome } from '../shared/run.ts';
import type { HarnessConfigSpec } from '../shared/harness-config.ts';
import { listHarnesses } from '../harnesses/registry.ts';

const MODELS = ['claude-sonnet-4-5', 'gpt-5-codex', 'gemini-2.5-pro', 'qwen3-coder'];
const OUTCOME_OF: Record<string, Outcome | undefined> = { Succeeded: 'succeeded', Failed: 'harness_failed', Cancelled: 'cancelled' };

/** The i-th synthetic Run: deterministic, so two bench runs render the same table. */
export function syntheticRun(i: number, namespace: string, slugs: readonly string[], now = Date.now()): ConsoleRun {
  const phase = RUN_PHASES[i % RUN_PHASES.length]!;
  const created = new Date(now - (i + 1) * 7_000);
  const started = phase === 'Pending' || phase === 'Dispatched' ? undefined : new Date(created.getTime() + 3_000).toISOString();
  const final = OUTCOME_OF[phase];
  return {
    metadata: { namespace, name: `run-${String(i).padStart(5, '0')}`, uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, creationTimestamp: created.toISOString() },
    spec: { harness: slugs[i % slugs.length]!, model: MODELS[i % MODELS.length]!, prompt: `synthetic task ${i}` },
    status: {
      phase,
      ...(final ? { outcome: final, completionTime: new Date(created.getTime() + 60_000).toISOString(), message: final === 'harness_failed' ? 'the harness exited 1' : undefined } : {}),
      ...(started ? { startTime: started, harnessVersion: '1.2.3', usage: { input: 1000 + i, output: 200 + (i % 50), cache_read: 300, cache_write: 40, reasoning: 12 }, actualCostUsd: 0.01 * (i % 9), comparableCostUsd: 0.012 * (i % 9) } : {}),
    },
  };
}

export interface MemorySources extends ConsoleSources {
  /** Replaces (or adds) a Run and tells the subscribers, as a watch would. */
  upsert(run: ConsoleRun): void;
}

export function memorySources(count: number, namespace = 'bench'): MemorySources {
  const slugs = listHarnesses().map((h) => h.manifest.slug);
  const now = Date.now();
  const runs = new Map<string, ConsoleRun>();
  const keyOf = (run: ConsoleRun) => `${run.metadata.namespace}/${run.metadata.name}`;
  for (let i = 0; i < count; i++) {
    const run = syntheticRun(i, namespace, slugs, now);
    runs.set(keyOf(run), run);
  }
  const listeners = new Set<(change: RunChange) => void>();
  const detailListeners = new Map<string, Set<(run: ConsoleRun | undefined) => void>>();
  const subscribe = <T>(set: Set<T>, fn: T): Unsubscribe => {
    set.add(fn);
    return () => void set.delete(fn);
  };
  return {
    upsert(run) {
      runs.set(keyOf(run), run);
      for (const fn of listeners) fn({ type: 'upsert', run });
      for (const fn of detailListeners.get(keyOf(run)) ?? []) fn(run);
    },
    runs: { list: () => runs.values(), subscribe: (fn) => subscribe(listeners, fn) },
    runDetail: {
      watch(ns, name, onChange) {
        const key = `${ns}/${name}`;
        const set = detailListeners.get(key) ?? new Set();
        detailListeners.set(key, set);
        queueMicrotask(() => onChange(runs.get(key)));
        return subscribe(set, onChange);
      },
    },
    kubeEvents: { watch: (_target, onChange) => (queueMicrotask(() => onChange([])), () => undefined) },
    writer: { cancel: async (ns, name) => (runs.has(`${ns}/${name}`) ? 'cancelled' : 'not-found') },
    harnesses: {
      list: () => listHarnesses().map((h) => ({ slug: h.manifest.slug, displayName: h.manifest.name })),
      readiness: () => ({ ready: true, mode: 'api-key', missing: [] }),
    },
    configs: { list: () => new Map<string, HarnessConfigSpec>(), subscribe: () => () => undefined },
    // Each started Run's latest event, delivered once at start as the last-per-subject replay would: rows carry an
    // activity as in a live cluster. (The feed bench replaces this with the real NATS activity consumer.)
    activity: {
      async start(onEvents) {
        const started = [...runs.values()].filter((r) => r.status?.startTime);
        // Two seconds after its start: the older live ones are idle past the stalled threshold, as a stuck run is.
        const lastAt = (r: ConsoleRun) => new Date(Date.parse(r.status!.startTime!) + 2_000).toISOString();
        onEvents(started.map((r, i) => ({ runId: `${r.metadata.namespace}_${r.metadata.name}`, seq: i + 1, runSeq: 7, at: lastAt(r), event: { type: 'command', timestamp: lastAt(r), command: `npm test -- --run shard-${i % 16}`, exit_code: 0, is_success: true } })));
        return { stop: async () => undefined };
      },
    },
  };
}
