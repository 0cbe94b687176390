// The dispatcher's controller manager: the only writer of Run status. It builds the caches (informers.ts), the
// per-Run memory (run-memory.ts), and two work queues: one for Runs (run-reconciler.ts, level-based, a key per
// Run, fed by the caches' handlers and the NATS result consumer) and one for the claim pass (claim-pass.ts, one
// key: runs when the queue or the capacity changed). Both sit behind the leadership wrapper (leader-aware.ts):
// every replica keeps its caches warm, only the Lease holder acts, and a new leader enqueues everything.
// Claims go before status writes: a Run's reconcile waits while a claim pass runs, so under a burst starting work
// comes first and statuses follow.
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../../shared/log.ts';
import type { Logger } from '../../shared/log.ts';
import type { RunResult } from '../../shared/run.ts';
import { FINAL_PHASES } from '../../shared/run-status.ts';
import { clusterRunIdOf } from '../../shared/run-id.ts';
import type { DispatcherConfig } from '../config.ts';
import { errorMessage } from '../kube/errors.ts';
import { RunEventRecorder } from '../kube/event-recorder.ts';
import { PooledKubeConfig } from '../kube/pooled-config.ts';
import type { RunObject } from '../kube/resources.ts';
import { CLAIM_CONCURRENCY, ClaimPass } from './claim-pass.ts';
import { buildCaches, CacheSet } from './informers.ts';
import { Leadership } from './leader-aware.ts';
import type { DispatcherMetrics } from './metrics.ts';
import { PodLifecycle } from './pod-lifecycle.ts';
import type { SystemEventPublisher } from './pod-lifecycle.ts';
import { ResultInbox, RunMemory } from './run-memory.ts';
import { RunReconciler } from './run-reconciler.ts';
import { effectiveStatus, objectKey, runKeyOfRunId } from './run-view.ts';
import { StatusWriter } from './status-writer.ts';
import { systemClock, WorkQueue } from './work-queue.ts';
import type { Clock } from './work-queue.ts';

export { CLAIM_CONCURRENCY };
export type { SystemEventPublisher };

export interface DispatcherDeps {
  config: KubeConfig;
  settings: DispatcherConfig;
  events: SystemEventPublisher;
  metrics: DispatcherMetrics;
  /**
   * The dispatcher's logger. A plain function is still taken (each JSON line handed to it) for
   * bench/dispatcher-child.ts, which another change owns; unset = silent.
   */
  log?: Logger | ((line: string) => void);
  clock?: Clock;
}

/** The claim pass's one key. */
const CLAIMS = 'claims';

function toLogger(log: DispatcherDeps['log']): Logger {
  if (log === undefined) return createLogger({ component: 'tcab-dispatcher', level: 'silent' });
  if (typeof log === 'function') return createLogger({ component: 'tcab-dispatcher', destination: { write: (line: string) => log(line.trimEnd()) } });
  return log;
}

export class Dispatcher {
  // The caches stay fields of their own: the dispatcher bench walks this object's fields for its memory figures.
  private readonly runs;
  private readonly configs;
  private readonly pods;
  private readonly kubeEvents;
  private readonly secrets;
  private readonly cacheSet: CacheSet;
  private readonly memory = new RunMemory();
  private readonly inbox: ResultInbox;
  private readonly runQueue: WorkQueue;
  private readonly claimQueue: WorkQueue;
  private readonly leadership: Leadership;
  private readonly recorder: RunEventRecorder;
  private readonly lifecycle: PodLifecycle;
  private readonly log: Logger;
  private readonly deps: DispatcherDeps;

  constructor(deps: DispatcherDeps) {
    this.deps = deps;
    const { settings, metrics } = deps;
    const log = (this.log = toLogger(deps.log));
    const clock = deps.clock ?? systemClock;
    // One keep-alive connection pool for all of the dispatcher's requests (see pooled-config.ts).
    const config = new PooledKubeConfig(deps.config);
    const core = config.makeApiClient(CoreV1Api);
    const custom = config.makeApiClient(CustomObjectsApi);
    const caches = buildCaches(config, settings);
    ({ runs: this.runs, configs: this.configs, pods: this.pods, kubeEvents: this.kubeEvents, secrets: this.secrets } = caches);
    this.cacheSet = new CacheSet(caches, log);
    this.inbox = new ResultInbox(clock);
    this.recorder = new RunEventRecorder(core, metrics.eventsDropped, log);
    const memory = this.memory;
    const statusOf = (run: RunObject) => effectiveStatus(run, memory, caches.pods);
    const writer = new StatusWriter({ custom, metrics, recorder: this.recorder, memory, statusOf, log });
    const write = writer.write.bind(writer);
    const enqueue = (key: string) => this.runQueue.add(key);
    const capacityChanged = () => this.claimQueue.add(CLAIMS);
    this.lifecycle = new PodLifecycle({ caches, memory, events: deps.events, enqueue, capacityChanged, log });
    const reconciler = new RunReconciler({ core, caches, memory, inbox: this.inbox, lifecycle: this.lifecycle, settings, metrics, statusOf, write, clock, log });
    const claims = new ClaimPass({ core, caches, memory, settings, metrics, statusOf, write, forgetRun: (run, why) => this.forgetRun(run, why), log });
    this.leadership = new Leadership(() => {
      for (const run of caches.runs.list()) enqueue(objectKey(run));
      for (const runId of this.inbox.runIds()) {
        const key = runKeyOfRunId(settings.TCAB_NAMESPACE, runId);
        if (key) enqueue(key);
      }
      capacityChanged();
    });
    const onError = (key: string, error: unknown) => log.error({ run: key, err: errorMessage(error), stack: (error as Error).stack }, 'reconcile failed; retrying with backoff');
    this.claimQueue = new WorkQueue(this.leadership.wrap(() => claims.run()), { name: CLAIMS, concurrency: 1, clock, onError });
    this.runQueue = new WorkQueue(
      this.leadership.wrap(
        async (key) => {
          await this.claimQueue.idle();
          return reconciler.reconcile(key);
        },
        (key) => reconciler.forgetIfOver(key),
      ),
      { name: 'runs', concurrency: CLAIM_CONCURRENCY, clock, onError },
    );
    this.watchRunsAndCapacity(caches);
  }

  /** Handlers only filter and enqueue: the Run's key, and the claim pass when the queue or the capacity changed. */
  private watchRunsAndCapacity(caches: ReturnType<typeof buildCaches>): void {
    const queueOrCapacity = (run: RunObject) => {
      const phase = run.status?.phase;
      return phase === undefined || phase === 'Pending' || FINAL_PHASES.has(phase);
    };
    const onRun = (run: RunObject) => {
      this.runQueue.add(objectKey(run));
      if (queueOrCapacity(run)) this.claimQueue.add(CLAIMS);
    };
    caches.runs.on('add', onRun);
    caches.runs.on('update', onRun);
    caches.runs.on('delete', (run) => {
      this.runQueue.add(objectKey(run));
      this.claimQueue.add(CLAIMS);
      // A deleted Run's messages go with it: its run id (`<ns>_<name>`) will name the next Run of that name, whose
      // followers (`tcab events follow`, started before its apply as the README shows) would otherwise replay the
      // old Run's stream. Consumers that keep every run's history read it live (`tcab events tail`).
      void this.forgetRun(run, 'deleted');
    });
    for (const cache of [caches.configs, caches.secrets]) cache.on('change', () => this.claimQueue.add(CLAIMS));
  }

  async start(): Promise<void> {
    await this.cacheSet.start();
  }

  async stop(): Promise<void> {
    // The reconciles in flight finish (their status writes and acks), then the watches close.
    await Promise.all([this.claimQueue.shutDown(), this.runQueue.shutDown()]);
    await this.cacheSet.stop();
    this.inbox.clear();
    await this.recorder.drained();
  }

  setLeading(leading: boolean): void {
    this.leadership.set(leading);
  }

  get isLeader(): boolean {
    return this.leadership.isLeader;
  }

  /** Every cache listed and watching (readiness). */
  synced(): boolean {
    return this.cacheSet.synced();
  }

  /** The driver's result message (from the NATS consumer): settles the Run; `ack` once written. */
  onResult(runId: string, result: RunResult, ack: () => void): void {
    const key = runKeyOfRunId(this.deps.settings.TCAB_NAMESPACE, runId);
    this.inbox.put(runId, result, ack, key === undefined);
    if (key) this.runQueue.add(key);
  }

  /** Runs cached, for the HTTP API and metrics. */
  snapshot(): readonly RunObject[] {
    return this.runs.list();
  }

  /** What the dispatcher holds beyond its caches (tests, bench): per-Run memory, results, queue state. */
  retained(): { runMemory: number; results: number; runQueue: WorkQueue['stats']; podsWithEvents: number; kubeEvents: { cached: number; kinds: string[] } } {
    const events = this.kubeEvents.list();
    const kinds = [...new Set(events.map((e) => e.involvedObject?.kind ?? ''))].sort();
    return { runMemory: this.memory.size, results: this.inbox.size, runQueue: this.runQueue.stats, podsWithEvents: this.lifecycle.indexedPods, kubeEvents: { cached: events.length, kinds } };
  }

  /** Purges a run id's messages (leader only: one dispatcher acts); a failure is logged, never blocks a claim. */
  private async forgetRun(run: RunObject, why: string): Promise<void> {
    if (!this.leadership.isLeader || !this.deps.events.forget) return;
    const runId = clusterRunIdOf(run.metadata!.namespace!, run.metadata!.name!);
    if (runId === undefined) return;
    await this.deps.events.forget(runId).catch((error: unknown) => this.log.warn({ run: objectKey(run), why, err: errorMessage(error) }, 'purging the run id\'s earlier messages failed'));
  }
}
