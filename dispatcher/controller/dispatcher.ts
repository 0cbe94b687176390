// The dispatcher's controller manager: the only writer of Run status. It builds the caches (informers.ts), the
// per-Run memory (run-memory.ts), and two work queues: one for Runs (run-reconciler.ts, level-based, a key per
// Run, fed by the caches' handlers and the NATS result consumer) and one for the claim pass (claim-pass.ts, one
// key: runs when the queue or the capacity changed). Both sit behind the leadership wrapper (leader-aware.ts):
// every replica keeps its caches warm, only the Lease holder acts, and a new leader enqueues everything.
// Claims go before status writes: a Run's reconcile waits while a claim pass is creating Pods, so under a burst
// starting work comes first and statuses follow.
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../../shared/log.ts';
import type { Logger } from '../../shared/log.ts';
import type { RunResult } from '../../shared/run.ts';
import { FINAL_PHASES } from '../../shared/run-status.ts';
import type { RunStatus } from '../../shared/run-status.ts';
import { clusterRunIdOf } from '../../shared/run-id.ts';
import { RunCredentialIssuer } from '../auth/run-credentials.ts';
import { GatewayTokenIssuer, MAX_GATEWAY_TOKEN_LIFETIME_S } from '../auth/gateway-tokens.ts';
import type { NatsAuthBundle } from '../../nats/auth/index.ts';
import type { ClusterGateway, DispatcherConfig } from '../config.ts';
import { errorMessage } from '../../kube/errors.ts';
import { RunEventRecorder } from '../../kube/event-recorder.ts';
import { PooledKubeConfig } from '../../kube/pooled-config.ts';
import type { RunObject } from '../../kube/resources.ts';
import { driverPodName } from '../pods/driver-pod.ts';
import { CLAIM_CONCURRENCY, ClaimPass } from './claim-pass.ts';
import { ThrottleBook } from '../claims/throttle.ts';
import { throttleGatewayOf, ThrottlePoller } from '../claims/throttle-source.ts';
import type { ThrottleGateway } from '../claims/throttle-source.ts';
import type { ThrottleHoldRow } from '../../shared/console.ts';
import { buildCaches, CacheSet } from './informers.ts';
import { Leadership } from './leader-aware.ts';
import type { DispatcherMetrics } from './metrics.ts';
import { PodLifecycle } from './pod-lifecycle.ts';
import type { SystemEventPublisher } from './pod-lifecycle.ts';
import { ResultInbox, RunMemory } from './run-memory.ts';
import { RunReconciler } from './run-reconciler.ts';
import type { ResultStore } from './run-reconciler.ts';
import { countSlots, setGauges } from './gauges.ts';
import { effectiveStatus, objectKey, runKeyOfRunId, runRef, splitKey } from './run-view.ts';
import type { RunProgress } from '../../shared/run-progress.ts';
import { isFinal } from '../status/transitions.ts';
import { StatusWriter } from './status-writer.ts';
import { EvaluationController } from '../evaluations/controller.ts';
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
  /**
   * NATS auth (TCAB_NATS_AUTH_SECRET, auth/nats-identity.ts): each Run gets its own NATS user, revoked when it is
   * over. Unset: no per-run credentials (a NATS without auth).
   */
  natsAuth?: { bundle: NatsAuthBundle; revoke: (publicKey: string, expiresAt?: Date) => Promise<void> };
  /**
   * Where the gateway's throttles are read (provider back-pressure, claims/throttle-source.ts); default: from the
   * settings (TCAB_GATEWAY_URL and TCAB_GATEWAY_ADMIN_TOKEN_FILE); null: not read.
   */
  throttleGateway?: ThrottleGateway | null;
  /**
   * The cluster's model gateway (TCAB_GATEWAY_URL, config.ts clusterGateway): Runs whose key can go through it get a
   * per-run token instead of the key, revoked when the Run is over. Unset: keys are injected as before.
   */
  gateway?: ClusterGateway;
  /** The run stream read directly (RunStream.lastResult): a result the consumer has not delivered, before NoResult. */
  results?: ResultStore;
  /** Each Evaluation status write, with how long after the Run change it reflects (the evaluation bench). */
  onEvaluationStatusLag?: (key: string, lagMs: number) => void;
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
  private readonly evaluations;
  private readonly evaluationController: EvaluationController;
  private readonly cacheSet: CacheSet;
  private readonly memory = new RunMemory();
  /** Keys of the Runs the cache shows queued (no phase or Pending): a claim pass has work only when some are. */
  private readonly queued = new Set<string>();
  private readonly inbox: ResultInbox;
  private readonly runQueue: WorkQueue;
  private readonly claimQueue: WorkQueue;
  private readonly leadership: Leadership;
  private readonly recorder: RunEventRecorder;
  private readonly lifecycle: PodLifecycle;
  private readonly credentials: RunCredentialIssuer | undefined;
  /** The gateway's throttles, polled, when the install runs a gateway: Runs of a throttled provider+model stay queued. */
  private readonly throttles: ThrottlePoller | undefined;
  private readonly gatewayTokens: GatewayTokenIssuer | undefined;
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
    ({ runs: this.runs, configs: this.configs, pods: this.pods, kubeEvents: this.kubeEvents, secrets: this.secrets, evaluations: this.evaluations } = caches);
    this.cacheSet = new CacheSet(caches, log);
    this.inbox = new ResultInbox(clock);
    this.recorder = new RunEventRecorder(core, metrics.eventsDropped, log);
    const memory = this.memory;
    const statusOf = (run: RunObject) => effectiveStatus(run, memory, caches.pods);
    const writer = new StatusWriter({ custom, metrics, recorder: this.recorder, memory, statusOf, log });
    const write = writer.write.bind(writer);
    const enqueue = (key: string) => this.runQueue.add(key);
    // A slot freed, a limit or a Secret changed: only a queue can make use of it.
    const capacityChanged = () => {
      if (this.queued.size > 0) this.claimQueue.add(CLAIMS);
    };
    this.lifecycle = new PodLifecycle({ caches, memory, events: deps.events, enqueue, capacityChanged, statusOf, log });
    const credentials = (this.credentials = deps.natsAuth && new RunCredentialIssuer({ core, memory, ...deps.natsAuth, log }));
    const gatewayTokens = (this.gatewayTokens = deps.gateway && new GatewayTokenIssuer({ core, memory, gateway: deps.gateway, log }));
    const reconciler = new RunReconciler({ core, caches, memory, inbox: this.inbox, lifecycle: this.lifecycle, settings, metrics, recorder: this.recorder, credentials, gatewayTokens, results: deps.results, statusOf, write, clock, log });
    const throttleGateway = deps.throttleGateway === undefined ? throttleGatewayOf(settings) : (deps.throttleGateway ?? undefined);
    const throttles = (this.throttles = throttleGateway && new ThrottlePoller({
      gateway: throttleGateway,
      book: new ThrottleBook(),
      clock,
      log,
      onChange: capacityChanged,
      onGatewayRestart: () => this.revokeAfterGatewayRestart(gatewayTokens, caches, statusOf, clock.now()),
      onHoldsStarted: (holds) => holds.forEach((h) => metrics.throttleHolds.inc({ provider: h.provider, model: h.model ?? '*' })),
    }));
    const claims = new ClaimPass({ throttles: throttles && { book: throttles.book, now: () => clock.now() }, core, caches, memory, settings, metrics, statusOf, write, forgetRun: (run, why) => this.forgetRun(run, why), credentials, gatewayTokens, log });
    this.leadership = new Leadership(() => {
      // The claim pass first: its claims start before the Runs' reconciles, which then wait for them.
      this.claimQueue.add(CLAIMS);
      for (const run of caches.runs.list()) enqueue(objectKey(run));
      this.evaluationController.enqueueAll();
      for (const runId of this.inbox.runIds()) {
        const key = runKeyOfRunId(settings.TCAB_NAMESPACE, runId);
        if (key) enqueue(key);
      }
    });
    const onError = (key: string, error: unknown) => log.error({ run: key, err: errorMessage(error), stack: (error as Error).stack }, 'reconcile failed; retrying with backoff');
    this.claimQueue = new WorkQueue(this.leadership.wrap(() => claims.run()), { name: CLAIMS, concurrency: 1, clock, onError });
    this.runQueue = new WorkQueue(
      this.leadership.wrap(
        async (key) => {
          await claims.settled();
          return reconciler.reconcile(key);
        },
        (key) => reconciler.forgetIfOver(key),
      ),
      { name: 'runs', concurrency: CLAIM_CONCURRENCY, clock, onError },
    );
    this.evaluationController = new EvaluationController({ custom, runs: caches.runs, evaluations: caches.evaluations, testCaseConfigMaps: caches.testCaseConfigMaps, leadership: this.leadership, clock, log, onStatusWrittenLag: deps.onEvaluationStatusLag });
    this.watchRunsAndCapacity(caches, capacityChanged);
    metrics.countSlotsWith(() => setGauges(metrics, countSlots(caches.runs.list().map((r) => ({ harness: String(r.spec.harness ?? ''), phase: statusOf(r).phase ?? 'Pending' })))));
  }

  /** Handlers only filter and enqueue: the Run's key, and the claim pass when the queue or the capacity changed. */
  private watchRunsAndCapacity(caches: ReturnType<typeof buildCaches>, capacityChanged: () => void): void {
    const onRun = (run: RunObject) => {
      const key = objectKey(run);
      this.runQueue.add(key);
      const phase = run.status?.phase;
      if (phase === undefined || phase === 'Pending') {
        this.queued.add(key);
        this.claimQueue.add(CLAIMS);
      } else {
        this.queued.delete(key);
        if (FINAL_PHASES.has(phase)) capacityChanged();
      }
    };
    caches.runs.on('add', onRun);
    caches.runs.on('update', onRun);
    caches.runs.on('delete', (run) => {
      const key = objectKey(run);
      this.queued.delete(key);
      this.runQueue.add(key);
      capacityChanged();
      // A deleted Run's messages go with it: its run id (`<ns>_<name>`) will name the next Run of that name, whose
      // followers (`tcab events follow`, started before its apply as the README shows) would otherwise replay the
      // old Run's stream. Consumers that keep every run's history read it live (`tcab events tail`).
      void this.forgetRun(run, 'deleted');
      // Deleted while its driver may still run (the garbage collector stops the Pod soon): its NATS user goes now.
      // Its gateway token likewise: a copy taken out of the run spends nothing more.
      if (this.leadership.isLeader) {
        const pod = caches.pods.get(driverPodName(runRef(run)), run.metadata!.namespace);
        this.credentials?.retire(key, runRef(run), pod, 'deleted');
        this.gatewayTokens?.retire(key, runRef(run), pod, 'deleted');
      }
    });
    for (const cache of [caches.configs, caches.secrets]) cache.on('change', capacityChanged);
  }

  async start(): Promise<void> {
    await this.cacheSet.start();
    void this.throttles?.start();
  }

  async stop(): Promise<void> {
    // The reconciles in flight finish (their status writes and acks), then the watches close.
    await Promise.all([this.claimQueue.shutDown(), this.runQueue.shutDown(), this.evaluationController.shutDown(), this.throttles?.stop()]);
    await this.cacheSet.stop();
    this.inbox.clear();
    await this.recorder.drained();
  }

  /**
   * The gateway restarted and forgot its revocations (they live in its memory): the leader sends them again for the
   * final Runs whose token may not have expired yet and that held one: a wire account in their status (the driver
   * read it from a gateway) or a token this dispatcher minted. (The dispatcher cannot list the token Secrets: its
   * Secret cache watches the configured key Secrets only.)
   */
  private revokeAfterGatewayRestart(tokens: GatewayTokenIssuer | undefined, caches: ReturnType<typeof buildCaches>, statusOf: (run: RunObject) => RunStatus, nowMs: number): void {
    if (!tokens || !this.leadership.isLeader) return;
    const refs = caches.runs
      .list()
      .filter((run) => {
        const status = statusOf(run);
        if (!FINAL_PHASES.has(status.phase as never)) return false;
        const ended = status.completionTime ? Date.parse(status.completionTime) : nowMs;
        if (nowMs - ended >= MAX_GATEWAY_TOKEN_LIFETIME_S * 1000) return false;
        return status.wireRequests !== undefined || this.memory.peek(objectKey(run), run.metadata!.uid!)?.gatewayToken === true;
      })
      // Every attempt's token: each attempt had one of its own (issue 35).
      .flatMap((run) => Array.from({ length: Math.max(1, statusOf(run).attempts?.length ?? 0) }, (_, i) => ({ ...runRef(run), attempt: i + 1 })));
    if (refs.length === 0) return;
    this.log.warn({ runs: refs.length }, 'the model gateway restarted and forgot its revocations: revoking the final runs\' tokens again');
    void tokens.revokeAgain(refs).then((done) => this.log.info({ runs: refs.length, revoked: done }, 'revoked the final runs\' gateway tokens again'));
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

  /**
   * A driver's progress (its core NATS subject, leader only): the check of a Run in play has started. Noted for the
   * Run's current uid and looked at by the reconciler, which writes Checking when it is the current attempt's.
   */
  onProgress(runId: string, progress: RunProgress): void {
    const key = runKeyOfRunId(this.deps.settings.TCAB_NAMESPACE, runId);
    if (!key) return;
    const { namespace, name } = splitKey(key);
    const run = this.runs.get(name, namespace);
    if (!run || isFinal(run.status ?? {})) return;
    this.memory.entry(key, run.metadata!.uid!).checking = { attempt: progress.attempt?.number ?? 1, at: progress.at };
    this.runQueue.add(key);
  }

  /**
   * What the operator console reads (console/server): this replica's own Run and HarnessConfig caches (no second
   * watch, no second copy of a Run), and which Secrets exist (for readiness, as the claim pass sees it).
   */
  consoleView() {
    const poller = this.throttles;
    const clock = this.deps.clock ?? systemClock;
    // Provider+models held now (provider back-pressure), for the harnesses page; absent without a gateway.
    const throttles = poller && {
      list: (): ThrottleHoldRow[] => poller.book.holds(clock.now()).map((h) => ({ provider: h.provider, model: h.model, heldUntil: new Date(h.heldUntilMs).toISOString(), level: h.level, status: h.status, retryAfterS: h.retryAfterS, count: h.count })),
      subscribe: (onChange: () => void) => poller.subscribe(onChange),
    };
    return { runs: this.runs, configs: this.configs, evaluations: this.evaluations, secretNames: (): ReadonlySet<string> => new Set(this.secrets.list().map((s) => s.metadata!.name!)), ...(throttles ? { throttles } : {}) };
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
