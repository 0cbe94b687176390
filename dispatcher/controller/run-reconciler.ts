// The Run reconciler (controller-runtime's shape: kueue pkg/controller/core). reconcile(key) gets a Run's key only
// and re-reads everything from the caches (level-based): settle the driver's result if one is waiting, end a
// cancelled Run and stop its Pod, follow a running Run's Pod (Starting, Running, the kubelet's Events as system
// events, a Pod gone or failed), tear the Pod down after the end, and drop the Run's memory once it is over.
// A missing Run is done (its memory dropped); waiting (the result's grace after the driver's exit) is
// `requeueAfterMs`, never an error; a 409 on a status write re-reads and requeues with backoff.
// Writes per Run: Dispatched/Starting and Running (a write per phase seen; phases passed between two looks share
// one), final status, Pod delete. The claim (Pod create) is the claim pass's (claim-pass.ts).
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../shared/log.ts';
import { clusterRunIdOf } from '../../shared/run-id.ts';
import type { RunStatus } from '../../shared/run-status.ts';
import type { DispatcherConfig } from '../config.ts';
import { isNotFound } from '../kube/errors.ts';
import type { RunEventRecorder } from '../kube/event-recorder.ts';
import type { RunCredentialIssuer } from '../auth/run-credentials.ts';
import type { GatewayTokenIssuer } from '../auth/gateway-tokens.ts';
import type { RunObject } from '../kube/resources.ts';
import { driverPodName } from '../pods/driver-pod.ts';
import { judgeResult, RESULT_REJECTED } from '../status/first-result.ts';
import { POD_DELETED, podDisruption } from '../status/pod-disruption.ts';
import type { Disruption } from '../status/pod-disruption.ts';
import { isFinal } from '../status/transitions.ts';
import type { Observation } from '../status/transitions.ts';
import type { Caches } from './informers.ts';
import type { DispatcherMetrics } from './metrics.ts';
import type { PodLifecycle } from './pod-lifecycle.ts';
import type { ResultInbox, RunMemory } from './run-memory.ts';
import { objectKey, ownedBy, runRef, splitKey } from './run-view.ts';
import type { WriteOutcome } from './status-writer.ts';
import type { Clock, ReconcileResult } from './work-queue.ts';

export interface RunReconcilerDeps {
  core: CoreV1Api;
  caches: Caches;
  memory: RunMemory;
  inbox: ResultInbox;
  lifecycle: PodLifecycle;
  settings: Pick<DispatcherConfig, 'TCAB_RESULT_GRACE_SECONDS'>;
  metrics: DispatcherMetrics;
  /** Where a refused result is recorded (a Kubernetes Event on its Run). */
  recorder: RunEventRecorder;
  /** With NATS auth: revokes a final Run's NATS user. */
  credentials?: RunCredentialIssuer;
  /** With the cluster's model gateway: revokes a final Run's token. */
  gatewayTokens?: GatewayTokenIssuer;
  statusOf: (run: RunObject) => RunStatus;
  write: (run: RunObject, observation: Observation) => Promise<WriteOutcome>;
  clock: Clock;
  log: Logger;
}

const at = () => new Date().toISOString();
/** A 409 means the cache is behind: look again (with the key's backoff) once it has caught up. */
const after = (outcome: WriteOutcome): ReconcileResult => (outcome === 'conflict' ? { requeue: true } : undefined);

export class RunReconciler {
  private readonly deps: RunReconcilerDeps;

  constructor(deps: RunReconcilerDeps) {
    this.deps = deps;
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { namespace, name } = splitKey(key);
    const run = this.deps.caches.runs.get(name, namespace);
    const runId = clusterRunIdOf(namespace, name);
    if (!run) {
      this.deps.memory.forget(key);
      // A result that outran its Run's arrival in the cache (or a Run deleted before its result): held a while.
      if (runId === undefined || !this.deps.inbox.get(runId)) return;
      const left = this.deps.inbox.holdLeft(runId);
      if (left > 0) return { requeueAfterMs: left };
      this.deps.inbox.letGo(runId);
      return;
    }
    const memo = this.deps.memory.peek(key, run.metadata!.uid);
    // The cache shows a version after this dispatcher's last write: the write's overlay has done its job.
    if (memo?.lastWrite && run.metadata!.resourceVersion !== memo.lastWrite.baseRv) memo.lastWrite = undefined;
    // In arrival order: the first settles the Run, any after it is judged against the status it wrote.
    while (runId !== undefined && this.deps.inbox.get(runId)) {
      const settled = await this.settleResult(run, runId);
      if (settled) return settled;
    }
    const status = this.deps.statusOf(run);
    if (isFinal(status)) return this.finished(run, status);
    if (run.spec.cancel === true) {
      const written = await this.deps.write(run, { kind: 'cancel', at: at() });
      if (written === 'written' && status.pod) await this.deletePod(run, status.pod);
      return after(written);
    }
    // Pending: the claim pass's to decide.
    if (status.phase && status.phase !== 'Pending') return this.follow(run, status);
  }

  /** Housekeeping while not leading: memory of a Run that is over (or gone) is dropped all the same. */
  forgetIfOver(key: string): ReconcileResult {
    const { namespace, name } = splitKey(key);
    const run = this.deps.caches.runs.get(name, namespace);
    if (!run || (isFinal(run.status ?? {}) && !this.podOf(run, run.status?.pod))) this.deps.memory.forget(key);
  }

  /**
   * The driver's result (from NATS): the Run's final status if it is the first (status/first-result.ts). Acked once
   * written, or at once when it is a redelivery or refused: a refused result is not redelivered, it is recorded.
   */
  private async settleResult(run: RunObject, runId: string): Promise<ReconcileResult> {
    const { result } = this.deps.inbox.get(runId)!;
    const verdict = judgeResult(this.deps.statusOf(run), result);
    if (verdict.kind === 'write') {
      const disruption = result.outcome === 'cancelled' && run.spec.cancel !== true ? await this.disruptionOf(run) : undefined;
      const written = await this.deps.write(run, { kind: 'result', result, disruption, at: at() });
      if (written === 'conflict') return after(written);
    } else if (verdict.kind === 'rejected') {
      this.deps.metrics.resultsRejected.inc({ reason: verdict.reason });
      this.deps.recorder.record(run, RESULT_REJECTED, verdict.message, 'Warning');
      this.deps.log.warn({ run: objectKey(run), reason: verdict.reason, outcome: result.outcome }, 'driver result refused (first result wins)');
    }
    this.deps.inbox.settle(runId);
  }

  /** A running Run: its Pod's state and the kubelet's Events are reflected; a Pod gone ends the Run. */
  private async follow(run: RunObject, status: RunStatus): Promise<ReconcileResult> {
    const key = objectKey(run);
    const uid = run.metadata!.uid!;
    const memo = this.deps.memory.peek(key, uid);
    const pod = this.podOf(run, status.pod ?? driverPodName(runRef(run)));
    if (!pod) {
      // Created by this dispatcher a moment ago: the cache has not shown it yet (its add event enqueues the Run).
      if (memo?.claimed) return;
      return after(await this.deps.write(run, { kind: 'pod-gone', disruption: memo?.disruption, at: at() }));
    }
    if (memo?.claimed) memo.claimed = undefined;
    await this.deps.lifecycle.publishKubeletEvents(run, pod);
    const phase = (pod.status?.phase ?? 'Pending') as 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
    const terminated = pod.status?.containerStatuses?.[0]?.state?.terminated;
    if (phase === 'Succeeded' || (phase === 'Failed' && terminated && terminated.exitCode !== undefined && pod.status?.reason !== 'DeadlineExceeded')) {
      // The driver's exit: its result message settles the Run. Without one after a grace period, the exit does.
      const exited = this.deps.memory.entry(key, uid);
      exited.exitedAt ??= this.deps.clock.now();
      const left = exited.exitedAt + this.deps.settings.TCAB_RESULT_GRACE_SECONDS * 1000 - this.deps.clock.now();
      if (left > 0) return { requeueAfterMs: left };
      const message = `the driver exited (code ${terminated?.exitCode ?? 0}) without publishing a result`;
      return after(await this.deps.write(run, { kind: 'pod', phase: 'Failed', reason: 'NoResult', message, at: at() }));
    }
    const scheduled = Boolean(pod.spec?.nodeName) || pod.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'True') === true;
    return after(await this.deps.write(run, { kind: 'pod', phase, scheduled, reason: pod.status?.reason, message: pod.status?.message, exitCode: terminated?.exitCode, at: at() }));
  }

  /** After the end: the driver Pod is deleted (teardown); once it is gone, the Run's memory goes too. */
  private async finished(run: RunObject, status: RunStatus): Promise<ReconcileResult> {
    const key = objectKey(run);
    const memo = this.deps.memory.peek(key, run.metadata!.uid);
    if (memo) [memo.claimed, memo.disruption] = [undefined, undefined];
    const pod = this.podOf(run, status.pod);
    this.deps.credentials?.retire(key, runRef(run), pod, 'final');
    this.deps.gatewayTokens?.retire(key, runRef(run), pod, 'final');
    if (!pod) {
      const tornDown = await this.deps.lifecycle.publishTeardown(run);
      // Over: final in the cache (not only in this dispatcher's overlay) and no Pod left to tear down.
      if (isFinal(run.status ?? {}) && tornDown) this.deps.memory.forget(key);
      return;
    }
    // Asked once: until the watch shows the deletion, a second look must not send the delete again.
    if (pod.metadata?.deletionTimestamp || memo?.teardown) return;
    await this.deps.lifecycle.publishKubeletEvents(run, pod);
    await this.deletePod(run, pod.metadata!.name!);
  }

  private podOf(run: RunObject, name: string | undefined): V1Pod | undefined {
    return name ? this.deps.caches.pods.get(name, run.metadata!.namespace) : undefined;
  }

  private async deletePod(run: RunObject, name: string): Promise<void> {
    const memo = this.deps.memory.entry(objectKey(run), run.metadata!.uid!);
    memo.teardown = { pod: name, startedAt: at() };
    try {
      await this.deps.core.deleteNamespacedPod({ name, namespace: run.metadata!.namespace! });
      this.deps.metrics.podWrites.inc();
    } catch (error) {
      // Gone already (no deletion of ours to announce), or failed (tried again with backoff).
      memo.teardown = undefined;
      if (!isNotFound(error)) throw error;
    }
  }

  /**
   * A "cancelled" result for a Run nobody cancelled: the driver got SIGTERM. From memory when the Pod watch already
   * showed the deletion; otherwise the Pod is read once (the result can outrun the Pod watch).
   */
  private async disruptionOf(run: RunObject): Promise<Disruption | undefined> {
    const ref = runRef(run);
    const memo = this.deps.memory.peek(objectKey(run), ref.uid);
    if (memo?.disruption) return memo.disruption;
    const name = this.deps.statusOf(run).pod ?? driverPodName(ref);
    if (memo?.teardown?.pod === name) return undefined;
    const pod = await this.deps.core.readNamespacedPod({ namespace: ref.namespace, name }).catch((error: unknown) => {
      if (isNotFound(error)) return undefined;
      throw error;
    });
    return pod && !ownedBy(pod, ref.uid) ? POD_DELETED : podDisruption(pod);
  }
}
