// The dispatcher's control loop (the only writer of Run status). Informers (list + watch) keep caches of Runs,
// HarnessConfigs, driver Pods, their kubelet Events and the Secrets' names; every change kicks one reconcile pass
// (single-flight). While leader, each pass:
//   1. settles Runs whose driver published a result (frees their slots first);
//   2. claims Pending Runs by the pure decision (claims/decide.ts). The claim IS the Pod create: its name is
//      derived from the Run and it is owned by the Run, so a second create (another leader, a retry) gets 409 and
//      there is never a second Pod. A Run whose Pod exists occupies its slot whether or not its status says so yet,
//      so a dispatcher that dies between the create and the status write neither loses the Run nor over-claims;
//   3. follows the other Runs, a few at a time: status from their Pod (Dispatched, Starting, Running; each write
//      with the Run's resourceVersion as precondition), kubelet Events -> pull_image/start_container system events,
//      spec.cancel -> Pod deleted and Run Cancelled, Pod gone -> Run Failed, finished Runs -> Pod deleted (teardown).
// Claims go before status writes: under a burst, starting work comes first and statuses follow in the next pass.
// Writes per Run: Pod create, Dispatched/Starting and Running (a write per phase seen; phases passed between two
// passes share one), final status, Pod delete. Kubernetes Events on the Run go out behind them (event-recorder.ts).
import { CoreV1Api, CustomObjectsApi, makeInformer } from '@kubernetes/client-node';
import type { CoreV1Event, Informer, KubeConfig, KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { getHarness, manifestForModel } from '../../harnesses/registry.ts';
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
import { configuredSecretNames, secretMetadataInformer } from '../kube/metadata-only.ts';
import { PooledKubeConfig } from '../kube/pooled-config.ts';
import { buildDriverPod, clusterRunId, clusterRunIdProblem, driverPodName, eventsSubject, RUN_LABEL } from '../pods/driver-pod.ts';
import { clusterRunIdOf } from '../../shared/run-id.ts';
import { isFinal, nextStatus } from '../status/transitions.ts';
import { POD_DELETED, podDisruption } from '../status/pod-disruption.ts';
import type { Disruption } from '../status/pod-disruption.ts';
import type { Observation } from '../status/transitions.ts';
import { lifecycleEvent, teardownEvents } from '../status/lifecycle-events.ts';
import { GROUP, HARNESS_CONFIGS, harnessConfigsPath, RUNS, runsPath, VERSION } from '../kube/resources.ts';
import { RunEventRecorder } from '../kube/event-recorder.ts';
import type { HarnessConfigObject, RunObject } from '../kube/resources.ts';
import type { DispatcherMetrics } from './metrics.ts';

export interface SystemEventPublisher {
  /** Publishes cluster-side system events to the run's NATS subjects. */
  publish(runId: string, events: HarnessEvent[]): Promise<void>;
  /** Drops every message the stream holds for a run id (an earlier Run's of the same name). */
  forget?(runId: string): Promise<void>;
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
/** Claims (Pod creates) in flight at once, and likewise status writes while following Runs. */
export const CLAIM_CONCURRENCY = 16;
const key = (o: KubernetesObject) => `${o.metadata!.namespace}/${o.metadata!.name}`;
const ownedBy = (pod: V1Pod, runUid: string) => pod.metadata?.ownerReferences?.some((o) => o.kind === 'Run' && o.uid === runUid) === true;
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
  private stopped = false;
  /** Kubernetes Events already recorded on Runs, so a transition is recorded once. */
  private readonly recordedTransitions = new Set<string>();
  /** Runs whose terminal write went through, while the informer catches up (no second write). */
  private readonly settled = new Map<string, RunStatus>();
  /** Driver Pods whose deletion this dispatcher asked for, with the time: the teardown events' start. */
  private readonly teardownStarted = new Map<string, string>();
  /** Runs (by uid) whose Pod this dispatcher created and its Pod informer has not shown yet. */
  private readonly claimed = new Map<string, { pod: string; eventsSubject: string; at: string }>();
  /** Runs (by uid) whose driver Pod someone else deleted or evicted, with how: ends them Failed, not Cancelled. */
  private readonly disruptions = new Map<string, Disruption>();
  /** The kubelet's Events by the uid of the Pod they are about, rebuilt once per pass. */
  private podEvents = new Map<string, CoreV1Event[]>();
  private readonly recorder: RunEventRecorder;

  constructor(deps: DispatcherDeps) {
    this.deps = deps;
    const { settings } = deps;
    // One keep-alive connection pool for all of the dispatcher's requests (see pooled-config.ts).
    const config = new PooledKubeConfig(deps.config);
    const ns = settings.TCAB_NAMESPACE;
    this.core = config.makeApiClient(CoreV1Api);
    this.custom = config.makeApiClient(CustomObjectsApi);
    this.runs = makeInformer<RunObject>(config, runsPath(ns), async () => (await this.custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: RUNS })) as never);
    this.configs = makeInformer<HarnessConfigObject>(config, harnessConfigsPath(), async () => (await this.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: HARNESS_CONFIGS })) as never);
    this.pods = makeInformer<V1Pod>(config, `/api/v1/namespaces/${ns}/pods`, () => this.core.listNamespacedPod({ namespace: ns, labelSelector: RUN_LABEL }), RUN_LABEL);
    this.kubeEvents = makeInformer<CoreV1Event>(config, `/api/v1/namespaces/${ns}/events`, () => this.core.listNamespacedEvent({ namespace: ns }));
    // Which of the configured Secrets exist, never what they hold: listed and watched by name, as metadata only.
    this.secrets = secretMetadataInformer(config, ns, configuredSecretNames(settings));
    this.recorder = new RunEventRecorder(this.core, deps.metrics.eventsDropped, deps.log);
  }

  async start(): Promise<void> {
    for (const informer of [this.runs, this.configs, this.pods, this.kubeEvents, this.secrets] as unknown as Informer<KubernetesObject>[]) {
      informer.on('add', () => this.kick());
      informer.on('update', () => this.kick());
      informer.on('delete', () => this.kick());
      informer.on('error', (error: unknown) => {
        if (this.stopped) return; // stopping closes the watches: not an error to recover from
        this.deps.log(`watch error: ${(error as Error | undefined)?.message ?? 'closed'}; restarting`);
        setTimeout(() => void (this.stopped || informer.start()), 1000);
      });
    }
    // Once the informer shows (or has lost) a Pod this dispatcher created, the cache speaks for the claim.
    const seen = (pod: V1Pod) => {
      const owner = pod.metadata?.ownerReferences?.find((o) => o.kind === 'Run')?.uid;
      if (owner) this.claimed.delete(owner);
    };
    this.pods.on('add', seen);
    this.pods.on('delete', seen);
    // Before podDeleted forgets which deletions were this dispatcher's own.
    this.pods.on('add', (pod: V1Pod) => this.noteDisruption(pod, false));
    this.pods.on('update', (pod: V1Pod) => this.noteDisruption(pod, false));
    this.pods.on('delete', (pod: V1Pod) => this.noteDisruption(pod, true));
    this.pods.on('delete', (pod: V1Pod) => void this.podDeleted(pod));
    // A deleted Run's messages go with it: its run id (`<ns>_<name>`) will name the next Run of that name, whose
    // followers (`tcab events follow`, started before its apply as the README shows) would otherwise replay the old
    // Run's stream and stop at its result. Consumers that keep every run's history read it live (`tcab events tail`).
    this.runs.on('delete', (run: RunObject) => void this.forgetRun(run, 'deleted'));
    await Promise.all([this.runs, this.configs, this.pods, this.kubeEvents, this.secrets].map((i) => i.start()));
    // A periodic pass catches what no watch event announces (a result grace period running out).
    this.resync = setInterval(() => this.kick(), 5000);
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.resync);
    await Promise.all([this.runs, this.configs, this.pods, this.kubeEvents, this.secrets].map((i) => i.stop()));
    await this.running;
    await this.recorder.drained();
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
    if (this.stopped) return;
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
    // A Run whose name cannot be a run id has no results to match (it is refused at its claim).
    const byRunId = new Map(runs.flatMap((r) => {
      const id = clusterRunIdOf(r.metadata!.namespace!, r.metadata!.name!);
      return id === undefined ? [] : [[id, r] as const];
    }));
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
      if (!isFinal(this.statusOf(run))) {
        const disruption = result.outcome === 'cancelled' && run.spec.cancel !== true ? await this.disruptionOf(run) : undefined;
        if ((await this.observe(run, { kind: 'result', result, disruption, at: at() })) === 'conflict') continue;
      }
      this.pendingResults.delete(runId);
      ack();
    }
    await this.claim(this.runs.list());
    this.podEvents = new Map();
    for (const e of this.kubeEvents.list()) {
      const uid = e.involvedObject?.kind === 'Pod' ? e.involvedObject.uid : undefined;
      if (!uid || this.seenKubeEvents.has(e.metadata!.uid!)) continue;
      const list = this.podEvents.get(uid) ?? [];
      list.push(e);
      this.podEvents.set(uid, list);
    }
    await concurrently(this.runs.list(), CLAIM_CONCURRENCY, (run) => this.tend(run).catch((error: unknown) => this.deps.log(`${key(run)}: ${(error as Error).message}`)));
    this.updateGauges();
  }

  /** One Run after the claims: cancel it, follow its Pod, or tear the Pod down after the end. */
  private async tend(run: RunObject): Promise<void> {
    const status = this.statusOf(run);
    if (isFinal(status)) return this.cleanupFinished(run);
    if (run.spec.cancel === true) {
      const written = await this.observe(run, { kind: 'cancel', at: at() });
      if (written === 'written' && status.pod) await this.deletePod(run, status.pod);
      return;
    }
    if (status.phase && status.phase !== 'Pending') await this.follow(run, status);
  }

  /** The status as written (or written by this dispatcher and not yet back through the informer). */
  private written(run: RunObject): RunStatus {
    return this.settled.get(run.metadata!.uid!) ?? run.status ?? {};
  }

  /**
   * The status that counts for claims: the written one, or Dispatched when the Run's Pod exists (made by this
   * dispatcher, or by a leader that died before writing the status) and no status says so yet.
   */
  private statusOf(run: RunObject): RunStatus {
    const status = this.written(run);
    if (status.phase && status.phase !== 'Pending') return status;
    const uid = run.metadata!.uid!;
    const mine = this.claimed.get(uid);
    if (mine) return nextStatus(status, { kind: 'claimed', ...mine });
    const ref = this.ref(run);
    const pod = this.pods.get(driverPodName(ref), ref.namespace);
    if (!pod || !ownedBy(pod, uid)) return status;
    const created = new Date(pod.metadata!.creationTimestamp ?? Date.now()).toISOString();
    return nextStatus(status, { kind: 'claimed', pod: driverPodName(ref), eventsSubject: eventsSubject(ref), at: created });
  }

  private ref(run: RunObject) {
    return { namespace: run.metadata!.namespace!, name: run.metadata!.name!, uid: run.metadata!.uid! };
  }

  /** A running Run: its Pod exists (made now if the claim's creator died), its state and Events are reflected. */
  private async follow(run: RunObject, status: RunStatus): Promise<void> {
    const podName = status.pod ?? driverPodName(this.ref(run));
    const pod = this.pods.get(podName, run.metadata!.namespace);
    if (!pod) {
      // Created by this dispatcher a moment ago: the informer has not shown it yet.
      if (!this.claimed.has(run.metadata!.uid!)) await this.observe(run, { kind: 'pod-gone', disruption: this.disruptions.get(run.metadata!.uid!), at: at() });
      return;
    }
    await this.publishKubeletEvents(run, pod);
    const phase = (pod.status?.phase ?? 'Pending') as 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
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
    const scheduled = Boolean(pod.spec?.nodeName) || pod.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'True') === true;
    await this.observe(run, { kind: 'pod', phase, scheduled, reason: pod.status?.reason, message: pod.status?.message, exitCode: terminated?.exitCode, at: at() });
  }

  private async publishKubeletEvents(run: RunObject, pod: V1Pod): Promise<void> {
    const fresh = (this.podEvents.get(pod.metadata!.uid!) ?? [])
      .filter((e) => !this.seenKubeEvents.has(e.metadata!.uid!))
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
    if (clusterRunIdOf(run.metadata!.namespace!, run.metadata!.name!) === undefined) {
      await this.observe(run, { kind: 'unavailable', reason: `invalid metadata.name: ${clusterRunIdProblem(this.ref(run))}`, at: at() });
      return;
    }
    let auth;
    try {
      auth = manifestForModel(getHarness(spec.harness), spec.model).auth;
    } catch {
      await this.observe(run, { kind: 'unavailable', reason: `unknown harness "${spec.harness}"`, at: at() });
      return;
    }
    const secretNames = new Set(this.secrets.list().map((s) => s.metadata!.name!));
    const availability = clusterAvailability(auth, spec, this.deps.settings, secretNames, this.deps.settings.TCAB_DRIVER_ENV);
    if (!availability.available) {
      await this.observe(run, { kind: 'unavailable', reason: availability.reason, at: at() });
      return;
    }
    const ref = this.ref(run);
    // Before this Run's Pod exists nothing of this Run is on its subjects: what is there is an earlier Run's of the
    // same name (deleted while no dispatcher led, or its driver's last words after the deletion's purge). Purged
    // here, at the claim, so the new Run's stream is its own. Its message ids carry its uid (TCAB_RUN_ATTEMPT), so
    // within the stream's duplicate window they are not dropped as repeats of the old Run's either.
    const existing = this.pods.get(driverPodName(ref), ref.namespace);
    if (!existing || !ownedBy(existing, ref.uid)) await this.forgetRun(run, 'claimed again');
    const made = await this.createPod(run, spec, apiKeySources(spec.harness, auth));
    if (made === 'foreign') return; // a Pod of an earlier Run of the same name is still going away: claim later
    this.claimed.set(ref.uid, { pod: driverPodName(ref), eventsSubject: eventsSubject(ref), at: at() });
    this.deps.metrics.claims.inc({ harness: spec.harness });
  }

  /** Creates the Run's driver Pod. 'exists' = already made (by this or a previous leader): one Pod per Run. */
  private async createPod(run: RunObject, spec: RunSpec, keyVars: readonly string[]): Promise<'created' | 'exists' | 'foreign'> {
    const pod = buildDriverPod(this.ref(run), spec, this.deps.settings, keyVars);
    const namespace = run.metadata!.namespace!;
    try {
      await this.core.createNamespacedPod({ namespace, body: pod });
      this.deps.metrics.podWrites.inc();
      return 'created';
    } catch (error) {
      if (code(error) !== 409) throw error;
      // Gone again since the 409 (an old Pod finishing its deletion): 'foreign', so the claim is tried later.
      const existing = await this.core.readNamespacedPod({ namespace, name: pod.metadata!.name! }).catch((readError: unknown) => {
        if (code(readError) === 404) return undefined;
        throw readError;
      });
      return existing && ownedBy(existing, run.metadata!.uid!) ? 'exists' : 'foreign';
    }
  }

  /** Applies an observation; writes the status only when it changes, with the Run's resourceVersion. */
  private async observe(run: RunObject, observation: Observation): Promise<'written' | 'unchanged' | 'conflict'> {
    const before = this.written(run);
    const after = nextStatus(this.statusOf(run), observation);
    if (JSON.stringify(after) === JSON.stringify(before)) return 'unchanged';
    try {
      const body = { ...run, status: after };
      const written = (await this.custom.replaceNamespacedCustomObjectStatus({ group: GROUP, version: VERSION, namespace: run.metadata!.namespace!, plural: RUNS, name: run.metadata!.name!, body })) as RunObject;
      this.deps.metrics.statusWrites.inc();
      // Until the informer shows the write, keep it, so this pass and the next do not repeat it.
      if (isFinal(after)) this.settled.set(run.metadata!.uid!, after);
      Object.assign(run, { status: after, metadata: { ...run.metadata, resourceVersion: written.metadata?.resourceVersion } });
      this.recordTransitions(run, before, after);
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
  private recordTransitions(run: RunObject, before: RunStatus, after: RunStatus): void {
    const entered = [...(after.dispatchedTime && !before.dispatchedTime ? ['Dispatched'] : []), ...(after.phase && after.phase !== 'Dispatched' && after.phase !== before.phase ? [after.phase] : [])];
    for (const phase of entered) {
      const id = `${run.metadata!.uid}/${phase}`;
      if (this.recordedTransitions.has(id)) continue;
      this.recordedTransitions.add(id);
      const message = phase === 'Dispatched' ? `driver pod ${after.pod} created` : phase === after.phase && after.message ? after.message : `run is ${phase}`;
      this.recorder.record(run, phase, message, phase === 'Failed' ? 'Warning' : 'Normal');
    }
  }

  /** After the end: the driver Pod is deleted (teardown); its deletion is published when the watch sees it. */
  private async cleanupFinished(run: RunObject): Promise<void> {
    const name = run.status?.pod ?? this.settled.get(run.metadata!.uid!)?.pod;
    if (run.status && this.settled.has(run.metadata!.uid!) && isFinal(run.status)) this.settled.delete(run.metadata!.uid!);
    this.claimed.delete(run.metadata!.uid!);
    this.disruptions.delete(run.metadata!.uid!);
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


  /** A driver Pod being deleted (or gone, or past its deadline) not by this dispatcher: remember how, for its Run. */
  private noteDisruption(pod: V1Pod, gone: boolean): void {
    const owner = pod.metadata?.ownerReferences?.find((o) => o.kind === 'Run')?.uid;
    if (!owner || this.teardownStarted.has(key(pod))) return;
    // A force-deleted Pod's last state may carry no deletionTimestamp: gone is still "deleted".
    const disruption = podDisruption(pod) ?? (gone ? POD_DELETED : undefined);
    // Keep the richer word seen earlier (the DisruptionTarget condition, the deadline) over a bare "deleted".
    if (disruption && !(disruption === POD_DELETED && this.disruptions.has(owner))) this.disruptions.set(owner, disruption);
  }

  /**
   * A "cancelled" result for a Run nobody cancelled: the driver got SIGTERM. From the cache when its watch already
   * showed the deletion; otherwise the Pod is read once (the result can outrun the Pod watch).
   */
  private async disruptionOf(run: RunObject): Promise<Disruption | undefined> {
    const known = this.disruptions.get(run.metadata!.uid!);
    if (known) return known;
    const name = this.statusOf(run).pod ?? driverPodName(this.ref(run));
    if (this.teardownStarted.has(`${run.metadata!.namespace}/${name}`)) return undefined;
    const pod = await this.core.readNamespacedPod({ namespace: run.metadata!.namespace!, name }).catch((error: unknown) => {
      if (code(error) === 404) return undefined;
      throw error;
    });
    return pod && !ownedBy(pod, run.metadata!.uid!) ? POD_DELETED : podDisruption(pod);
  }

  /** Purges a run id's messages (leader only: one dispatcher acts); a failure is logged, never blocks a claim. */
  private async forgetRun(run: RunObject, why: string): Promise<void> {
    if (!this.leading || !this.deps.events.forget) return;
    const runId = clusterRunIdOf(run.metadata!.namespace!, run.metadata!.name!);
    if (runId === undefined) return;
    await this.deps.events.forget(runId).catch((error: unknown) => this.deps.log(`${key(run)} ${why}: purging its earlier messages: ${(error as Error).message}`));
  }

  private async podDeleted(pod: V1Pod): Promise<void> {
    const started = this.teardownStarted.get(key(pod));
    const runName = pod.metadata?.labels?.[RUN_LABEL];
    if (!started || !runName) return;
    this.teardownStarted.delete(key(pod));
    // The Run of this name is gone or is another one now (deleted and re-created): the teardown belongs to no stream.
    const owner = pod.metadata?.ownerReferences?.find((o) => o.kind === 'Run')?.uid;
    if (this.runs.get(runName, pod.metadata!.namespace)?.metadata?.uid !== owner) return;
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
