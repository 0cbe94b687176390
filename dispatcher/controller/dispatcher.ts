// The dispatcher's control loop (the only writer of Run status). Informers (list + watch) keep caches of Runs,
// HarnessConfigs, driver Pods, their kubelet Events and the Secrets' names; every change kicks one reconcile pass
// (single-flight). While leader it:
//   1. cancels Runs asked to stop (spec.cancel) by deleting their Pod;
//   2. follows Pods of running Runs (Pod phase -> Run phase; kubelet Events -> pull_image/start_container
//      system events); recreates the Pod of a Run claimed by a dispatcher that died before creating it;
//   3. claims Pending Runs by the pure decision (claims/decide.ts), writing each claim with the Run's
//      resourceVersion as precondition BEFORE creating the deterministic-named Pod (409 on create = already made).
// Writes per Run: claim, Starting, Running, final status, Pod create (and the Pod delete after the end).
import { CoreV1Api, CustomObjectsApi, makeInformer } from '@kubernetes/client-node';
import type { CoreV1Event, Informer, KubeConfig, KubernetesObject, V1Pod, V1Secret } from '@kubernetes/client-node';
import { getHarness } from '../../harnesses/registry.ts';
import { ggDescriptor } from '../../harnesses/gg/adapter.ts';
import { apiKeySources } from '../../shared/auth.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import { RunSpec } from '../../shared/run.ts';
import type { RunResult } from '../../shared/run.ts';
import type { RunStatus } from '../../shared/run-status.ts';
import { formatIssues } from '../../shared/zod-issues.ts';
import { concurrently } from '../../shared/concurrently.ts';
import { decideClaims } from '../claims/decide.ts';
import type { QueuedRun } from '../claims/decide.ts';
import type { DispatcherConfig } from '../config.ts';
import { clusterAvailability } from '../pods/availability.ts';
import { buildDriverPod, clusterRunId, driverPodName, eventsSubject, RUN_LABEL } from '../pods/driver-pod.ts';
import { isFinal, nextStatus } from '../status/transitions.ts';
import type { Observation } from '../status/transitions.ts';
import { lifecycleEvent, teardownEvents } from '../status/lifecycle-events.ts';
import { GROUP, HARNESS_CONFIGS, harnessConfigsPath, RUNS, runsPath, VERSION } from '../kube/resources.ts';
import type { HarnessConfigObject, RunObject } from '../kube/resources.ts';
import type { DispatcherMetrics } from './metrics.ts';

export interface SystemEventPublisher {
  /** Publishes cluster-side system events to the run's NATS subjects. */
  publish(runId: string, events: HarnessEvent[]): Promise<void>;
}

export interface DispatcherDeps {
  config: KubeConfig;
  settings: DispatcherConfig;
  events: SystemEventPublisher;
  metrics: DispatcherMetrics;
  log: (message: string) => void;
  /** Seconds a finished Pod may wait for its result message before the Run fails without one. */
  resultGraceSeconds?: number;
}

const code = (error: unknown) => (error as { code?: number }).code;
/** Claims written at once (each is a status write, then a Pod create). */
export const CLAIM_CONCURRENCY = 16;
const key = (o: KubernetesObject) => `${o.metadata!.namespace}/${o.metadata!.name}`;
const at = () => new Date().toISOString();

export class Dispatcher {
  private readonly core: CoreV1Api;
  private readonly custom: CustomObjectsApi;
  private readonly runs;
  private readonly configs;
  private readonly pods;
  private readonly kubeEvents;
  private readonly secrets;
  private leading = false;
  private running: Promise<void> | undefined;
  private again = false;
  private readonly seenKubeEvents = new Set<string>();
  /** Results that arrived before the Run was seen (or while not leading), by cluster run id. */
  private readonly pendingResults = new Map<string, { result: RunResult; ack: () => void; since: number }>();
  private readonly podFinishedAt = new Map<string, number>();
  private readonly deps: DispatcherDeps;
  private resync: NodeJS.Timeout | undefined;
  /** Kubernetes Events already recorded on Runs, so a transition is recorded once. */
  private readonly recordedTransitions = new Set<string>();
  /** Runs whose terminal write went through, while the informer catches up (no second write). */
  private readonly settled = new Map<string, RunStatus>();
  /** Driver Pods whose deletion this dispatcher asked for, with the time: the teardown events' start. */
  private readonly teardownStarted = new Map<string, string>();

  constructor(deps: DispatcherDeps) {
    this.deps = deps;
    const { config, settings } = deps;
    const ns = settings.TCAB_NAMESPACE;
    this.core = config.makeApiClient(CoreV1Api);
    this.custom = config.makeApiClient(CustomObjectsApi);
    this.runs = makeInformer<RunObject>(config, runsPath(ns), async () => (await this.custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: RUNS })) as never);
    this.configs = makeInformer<HarnessConfigObject>(config, harnessConfigsPath(), async () => (await this.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: HARNESS_CONFIGS })) as never);
    this.pods = makeInformer<V1Pod>(config, `/api/v1/namespaces/${ns}/pods`, () => this.core.listNamespacedPod({ namespace: ns, labelSelector: RUN_LABEL }), RUN_LABEL);
    this.kubeEvents = makeInformer<CoreV1Event>(config, `/api/v1/namespaces/${ns}/events`, () => this.core.listNamespacedEvent({ namespace: ns }));
    this.secrets = makeInformer<V1Secret>(config, `/api/v1/namespaces/${ns}/secrets`, () => this.core.listNamespacedSecret({ namespace: ns }));
  }

  async start(): Promise<void> {
    for (const informer of [this.runs, this.configs, this.pods, this.kubeEvents, this.secrets] as unknown as Informer<KubernetesObject>[]) {
      informer.on('add', () => this.kick());
      informer.on('update', () => this.kick());
      informer.on('delete', () => this.kick());
      informer.on('error', (error: unknown) => {
        this.deps.log(`watch error: ${(error as Error | undefined)?.message ?? 'closed'}; restarting`);
        setTimeout(() => void informer.start(), 1000);
      });
    }
    this.pods.on('delete', (pod: V1Pod) => void this.podDeleted(pod));
    await Promise.all([this.runs, this.configs, this.pods, this.kubeEvents, this.secrets].map((i) => i.start()));
    // A periodic pass catches what no watch event announces (a result grace period running out).
    this.resync = setInterval(() => this.kick(), 5000);
    this.kick();
  }

  async stop(): Promise<void> {
    clearInterval(this.resync);
    await Promise.all([this.runs, this.configs, this.pods, this.kubeEvents, this.secrets].map((i) => i.stop()));
    await this.running;
  }

  setLeading(leading: boolean): void {
    this.leading = leading;
    if (leading) this.kick();
  }

  /** The driver's result message (from the NATS consumer): settles the Run; `ack` once written. */
  onResult(runId: string, result: RunResult, ack: () => void): void {
    this.pendingResults.set(runId, { result, ack, since: Date.now() });
    this.kick();
  }

  /** Runs cached, for the HTTP API and metrics. */
  snapshot(): readonly RunObject[] {
    return this.runs.list();
  }

  private kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    const pass = async () => {
      // Yield first: `running` must be set before the pass can end (a pass without work finishes at once).
      await Promise.resolve();
      do {
        this.again = false;
        if (this.leading) await this.reconcile().catch((error: unknown) => this.deps.log(`reconcile: ${(error as Error).stack}`));
      } while (this.again && this.leading);
      this.running = undefined;
    };
    this.running = pass();
  }

  private async reconcile(): Promise<void> {
    const runs = this.runs.list();
    const byRunId = new Map(runs.map((r) => [clusterRunId(this.ref(r)), r]));
    // Results first: they end Runs and free slots for this pass's claims.
    for (const [runId, { result, ack, since }] of this.pendingResults) {
      const run = byRunId.get(runId);
      if (!run) {
        // Not a Run of this namespace (a workstation run publishing to the same NATS, another install): let go.
        if (Date.now() - since > 120_000) {
          this.pendingResults.delete(runId);
          ack();
        }
        continue;
      }
      if (!isFinal(this.statusOf(run)) && (await this.observe(run, { kind: 'result', result, at: at() })) === 'conflict') continue;
      this.pendingResults.delete(runId);
      ack();
    }
    for (const run of runs) {
      const status = this.statusOf(run);
      if (isFinal(status)) {
        await this.cleanupFinished(run);
        continue;
      }
      if (run.spec.cancel === true) {
        await this.observe(run, { kind: 'cancel', at: at() });
        await this.deletePod(run);
        continue;
      }
      if (status.phase && status.phase !== 'Pending') await this.follow(run, status);
    }
    await this.claim(this.runs.list());
    this.updateGauges();
  }

  private statusOf(run: RunObject): RunStatus {
    return this.settled.get(run.metadata!.uid!) ?? run.status ?? {};
  }

  private ref(run: RunObject) {
    return { namespace: run.metadata!.namespace!, name: run.metadata!.name!, uid: run.metadata!.uid! };
  }

  /** A running Run: its Pod exists (made now if the claim's creator died), its state and Events are reflected. */
  private async follow(run: RunObject, status: RunStatus): Promise<void> {
    const podName = status.pod ?? driverPodName(this.ref(run));
    const pod = this.pods.get(podName, run.metadata!.namespace);
    if (!pod) {
      if (status.phase === 'Dispatched') await this.createPod(run);
      else await this.observe(run, { kind: 'pod-gone', at: at() });
      return;
    }
    await this.publishKubeletEvents(run, pod);
    const phase = pod.status?.phase as 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown' | undefined;
    if (!phase) return;
    const terminated = pod.status?.containerStatuses?.[0]?.state?.terminated;
    if (phase === 'Succeeded' || (phase === 'Failed' && terminated && terminated.exitCode !== undefined && pod.status?.reason !== 'DeadlineExceeded')) {
      // The driver's exit: its result message settles the Run. Without one after a grace period, the exit does.
      const uid = pod.metadata!.uid!;
      const since = this.podFinishedAt.get(uid) ?? Date.now();
      this.podFinishedAt.set(uid, since);
      if (Date.now() - since < (this.deps.resultGraceSeconds ?? 30) * 1000) return;
      await this.observe(run, { kind: 'pod', phase: 'Failed', reason: 'NoResult', message: `the driver exited (code ${terminated?.exitCode ?? 0}) without publishing a result`, at: at() });
      return;
    }
    await this.observe(run, { kind: 'pod', phase, reason: pod.status?.reason, message: pod.status?.message, exitCode: terminated?.exitCode, at: at() });
  }

  private async publishKubeletEvents(run: RunObject, pod: V1Pod): Promise<void> {
    const fresh = this.kubeEvents
      .list(run.metadata!.namespace)
      .filter((e) => e.involvedObject?.uid === pod.metadata!.uid && !this.seenKubeEvents.has(e.metadata!.uid!))
      .sort((a, b) => String(a.lastTimestamp ?? a.eventTime ?? '').localeCompare(String(b.lastTimestamp ?? b.eventTime ?? '')));
    const systemEvents: HarnessEvent[] = [];
    for (const e of fresh) {
      this.seenKubeEvents.add(e.metadata!.uid!);
      const time = new Date((e.lastTimestamp ?? e.eventTime ?? e.metadata!.creationTimestamp ?? new Date()) as Date).toISOString();
      const system = lifecycleEvent({ reason: e.reason ?? '', message: e.message ?? '', time });
      if (system) systemEvents.push(system);
    }
    if (systemEvents.length > 0) await this.deps.events.publish(clusterRunId(this.ref(run)), systemEvents);
  }

  private async claim(runs: readonly RunObject[]): Promise<void> {
    const queued: QueuedRun[] = runs.map((r) => ({
      key: key(r),
      harness: String(r.spec.harness ?? ''),
      phase: this.statusOf(r).phase ?? 'Pending',
      createdAt: new Date(r.metadata!.creationTimestamp ?? 0).getTime(),
    }));
    const limits = Object.fromEntries(this.configs.list().map((c) => [c.metadata!.name!, c.spec.maxParallelism]));
    const started = performance.now();
    const decision = decideClaims({ runs: queued, limits, maxInFlight: this.deps.settings.TCAB_DISPATCHER_MAX_INFLIGHT });
    const byKey = new Map(runs.map((r) => [key(r), r]));
    // Claims of different Runs are independent: a few at a time keep the apiserver busy without flooding it.
    await concurrently(decision.claim.map((k) => byKey.get(k)!), CLAIM_CONCURRENCY, async (run) => {
      const t0 = performance.now();
      await this.claimOne(run);
      this.deps.metrics.claimLatency.observe((performance.now() - t0) / 1000);
    });
    if (decision.claim.length > 0) this.deps.log(`claimed ${decision.claim.length} run(s) in ${Math.round(performance.now() - started)} ms`);
  }

  private async claimOne(run: RunObject): Promise<void> {
    const parsed = RunSpec.safeParse(run.spec);
    if (!parsed.success) {
      await this.observe(run, { kind: 'unavailable', reason: `invalid run spec: ${formatIssues(parsed.error)}`, at: at() });
      return;
    }
    const spec = parsed.data;
    let auth;
    try {
      auth = spec.harness === 'gg' ? ggDescriptor(spec.model).auth : getHarness(spec.harness).manifest.auth;
    } catch {
      await this.observe(run, { kind: 'unavailable', reason: `unknown harness "${spec.harness}"`, at: at() });
      return;
    }
    const secretKeys = new Map(this.secrets.list().map((s) => [s.metadata!.name!, new Set(Object.keys(s.data ?? {}))]));
    const availability = clusterAvailability(auth, spec, this.deps.settings, secretKeys, this.deps.settings.TCAB_DRIVER_ENV);
    if (!availability.available) {
      await this.observe(run, { kind: 'unavailable', reason: availability.reason, at: at() });
      return;
    }
    const ref = this.ref(run);
    const outcome = await this.observe(run, { kind: 'claimed', pod: driverPodName(ref), eventsSubject: eventsSubject(ref), at: at() });
    if (outcome !== 'written') return;
    this.deps.metrics.claims.inc({ harness: spec.harness });
    await this.createPod(run, spec, apiKeySources(spec.harness, auth));
  }

  private async createPod(run: RunObject, spec?: RunSpec, keyVars?: readonly string[]): Promise<void> {
    const runSpec = spec ?? RunSpec.parse(run.spec);
    const vars = keyVars ?? apiKeySources(runSpec.harness, runSpec.harness === 'gg' ? ggDescriptor(runSpec.model).auth : getHarness(runSpec.harness).manifest.auth);
    const pod = buildDriverPod(this.ref(run), runSpec, this.deps.settings, vars);
    try {
      await this.core.createNamespacedPod({ namespace: run.metadata!.namespace!, body: pod });
      this.deps.metrics.podWrites.inc();
    } catch (error) {
      if (code(error) !== 409) throw error; // 409: made by us or a previous leader: one Pod per Run
    }
  }

  /** Applies an observation; writes the status only when it changes, with the Run's resourceVersion. */
  private async observe(run: RunObject, observation: Observation): Promise<'written' | 'unchanged' | 'conflict'> {
    const before = this.statusOf(run);
    const after = nextStatus(before, observation);
    if (JSON.stringify(after) === JSON.stringify(before)) return 'unchanged';
    try {
      const body = { ...run, status: after };
      const written = (await this.custom.replaceNamespacedCustomObjectStatus({ group: GROUP, version: VERSION, namespace: run.metadata!.namespace!, plural: RUNS, name: run.metadata!.name!, body })) as RunObject;
      this.deps.metrics.statusWrites.inc();
      // Until the informer shows the write, keep it, so this pass and the next do not repeat it.
      if (isFinal(after)) this.settled.set(run.metadata!.uid!, after);
      Object.assign(run, { status: after, metadata: { ...run.metadata, resourceVersion: written.metadata?.resourceVersion } });
      // Recorded without holding up the claim: an Event is history, not state.
      void this.recordTransition(run, before, after);
      if (isFinal(after)) this.deps.metrics.outcomes.inc({ outcome: after.outcome ?? 'unknown' });
      return 'written';
    } catch (error) {
      if (code(error) === 409) {
        this.deps.metrics.conflicts.inc();
        return 'conflict'; // a newer Run is on its way through the informer; the next pass decides again
      }
      if (code(error) === 404) return 'conflict';
      throw error;
    }
  }

  /** A Kubernetes Event on the Run for each phase it enters (`kubectl describe run` shows the history). */
  private async recordTransition(run: RunObject, before: RunStatus, after: RunStatus): Promise<void> {
    if (before.phase === after.phase) return;
    const id = `${run.metadata!.uid}/${after.phase}`;
    if (this.recordedTransitions.has(id)) return;
    this.recordedTransitions.add(id);
    const now = new Date();
    const warning = after.phase === 'Failed';
    await this.core
      .createNamespacedEvent({
        namespace: run.metadata!.namespace!,
        body: {
          metadata: { generateName: `${run.metadata!.name}.`, namespace: run.metadata!.namespace },
          involvedObject: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Run', name: run.metadata!.name, namespace: run.metadata!.namespace, uid: run.metadata!.uid },
          reason: after.phase ?? 'Unknown',
          message: after.message ?? (after.phase === 'Dispatched' ? `driver pod ${after.pod} created` : `run is ${after.phase}`),
          type: warning ? 'Warning' : 'Normal',
          source: { component: 'tcab-dispatcher' },
          reportingComponent: 'tcab-dispatcher',
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      })
      .catch((error: unknown) => this.deps.log(`event on ${key(run)}: ${(error as Error).message}`));
  }

  /** After the end: the driver Pod is deleted (teardown); its deletion is published when the watch sees it. */
  private async cleanupFinished(run: RunObject): Promise<void> {
    const name = run.status?.pod ?? this.settled.get(run.metadata!.uid!)?.pod;
    if (run.status && this.settled.has(run.metadata!.uid!) && isFinal(run.status)) this.settled.delete(run.metadata!.uid!);
    if (!name) return;
    const pod = this.pods.get(name, run.metadata!.namespace);
    // Asked once: until the watch shows the deletion, a second pass must not send the delete again.
    if (!pod || pod.metadata?.deletionTimestamp || this.teardownStarted.has(`${run.metadata!.namespace}/${name}`)) return;
    await this.publishKubeletEvents(run, pod);
    await this.deletePod(run, name);
  }

  private async deletePod(run: RunObject, name = run.status?.pod ?? driverPodName(this.ref(run))): Promise<void> {
    this.teardownStarted.set(`${run.metadata!.namespace}/${name}`, at());
    await this.core.deleteNamespacedPod({ name, namespace: run.metadata!.namespace! }).then(
      () => this.deps.metrics.podWrites.inc(),
      (error: unknown) => {
        if (code(error) !== 404) throw error;
      },
    );
  }


  private async podDeleted(pod: V1Pod): Promise<void> {
    const started = this.teardownStarted.get(key(pod));
    const runName = pod.metadata?.labels?.[RUN_LABEL];
    if (!started || !runName) return;
    this.teardownStarted.delete(key(pod));
    const runId = clusterRunId({ namespace: pod.metadata!.namespace!, name: runName, uid: '' });
    await this.deps.events.publish(runId, teardownEvents(pod.metadata!.name!, started, at())).catch((error: unknown) => this.deps.log(`teardown events: ${(error as Error).message}`));
    this.kick();
  }

  private updateGauges(): void {
    const runs = this.runs.list();
    const m = this.deps.metrics;
    m.queueDepth.reset();
    m.occupied.reset();
    for (const run of runs) {
      const phase = this.statusOf(run).phase ?? 'Pending';
      const harness = String(run.spec.harness ?? '');
      if (phase === 'Pending') m.queueDepth.inc({ harness });
      else if (phase === 'Dispatched' || phase === 'Starting' || phase === 'Running') m.occupied.inc({ harness });
    }
  }
}
