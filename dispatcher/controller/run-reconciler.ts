// The Run reconciler (controller-runtime's shape: kueue pkg/controller/core). reconcile(key) gets a Run's key only
// and re-reads everything from the caches (level-based): settle the driver's result if one is waiting, end a
// cancelled Run and stop its Pod, follow a running Run's Pod (Starting, Running, the kubelet's Events as system
// events, a Pod gone or failed), tear the Pod down after the end, and drop the Run's memory once it is over.
// A missing Run is done (its memory dropped); waiting (the result's grace after the driver's exit) is
// `requeueAfterMs`, never an error; a 409 on a status write re-reads and requeues with backoff.
// An attempt that ends on infrastructure (status/retry.ts) is tried again: the attempt is closed in the status, the
// Run goes back to Pending with a back-off (the claim pass makes the next attempt's Pod), and the old attempt is
// fenced: its Pod deleted, its NATS user and gateway token revoked, so a Pod on a partitioned node that comes back
// can neither publish into the Run nor spend. A result of an attempt that is over is refused (first-result.ts).
// Writes per Run: Dispatched/Starting and Running (a write per phase seen; phases passed between two looks share
// one), final status, Pod delete. The claim (Pod create) is the claim pass's (claim-pass.ts).
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../shared/log.ts';
import { clusterRunIdOf } from '../../shared/run-id.ts';
import type { RunStatus } from '../../shared/run-status.ts';
import type { DispatcherConfig } from '../config.ts';
import { isNotFound } from '../../kube/errors.ts';
import type { RunEventRecorder } from '../../kube/event-recorder.ts';
import type { RunCredentialIssuer } from '../auth/run-credentials.ts';
import type { GatewayTokenIssuer } from '../auth/gateway-tokens.ts';
import type { RunObject } from '../../kube/resources.ts';
import { driverPodName } from '../pods/driver-pod.ts';
import type { RunRef } from '../pods/driver-pod.ts';
import { RunSpec } from '../../shared/run.ts';
import type { RunResult } from '../../shared/run.ts';
import { currentAttempt, decideRetry, IMAGE_PULL_FAILED } from '../status/retry.ts';
import type { AttemptEnd, RetryDecision, RetryPolicy } from '../status/retry.ts';
import { attemptOfResult, judgeResult, RESULT_REJECTED } from '../status/first-result.ts';
import { POD_DELETED, deletionOverdueInMs, podDisruption } from '../status/pod-disruption.ts';
import type { Disruption } from '../status/pod-disruption.ts';
import { isFinal } from '../status/transitions.ts';
import type { Observation } from '../status/transitions.ts';
import type { Caches } from './informers.ts';
import type { DispatcherMetrics } from './metrics.ts';
import type { PodLifecycle } from './pod-lifecycle.ts';
import { startNextAttempt } from './run-memory.ts';
import type { ResultInbox, RunMemory } from './run-memory.ts';
import { objectKey, ownedBy, runRef, splitKey } from './run-view.ts';
import type { WriteOutcome } from './status-writer.ts';
import type { Clock, ReconcileResult } from './work-queue.ts';

/** The run stream read directly (nats/result-consumer.ts RunStream): a result the results consumer has not delivered. */
export interface ResultStore {
  /** The last result on the run's result subject, if any; rejects when NATS does not answer. */
  lastResult(runId: string): Promise<RunResult | undefined>;
}

/** Times a driver's exit waits for its result (the grace each) while the stream cannot be read, before NoResult. */
const RESULT_LOOKUPS = 4;

export interface RunReconcilerDeps {
  core: CoreV1Api;
  caches: Caches;
  memory: RunMemory;
  inbox: ResultInbox;
  lifecycle: PodLifecycle;
  settings: Pick<DispatcherConfig, 'TCAB_RESULT_GRACE_SECONDS' | 'TCAB_RETRY_BACKOFF_SECONDS' | 'TCAB_RETRY_BACKOFF_MAX_SECONDS' | 'TCAB_IMAGE_PULL_GRACE_SECONDS'>;
  metrics: DispatcherMetrics;
  /** Where a refused result is recorded (a Kubernetes Event on its Run). */
  recorder: RunEventRecorder;
  /** With NATS auth: revokes a final Run's NATS user. */
  credentials?: RunCredentialIssuer;
  /** With the cluster's model gateway: revokes a final Run's token. */
  gatewayTokens?: GatewayTokenIssuer;
  /**
   * The stream, read before a driver that exited is declared to have left no result: the results consumer stalls
   * while its NATS server goes and its leader moves (longer than the grace), and the result is in the stream all
   * the same. Unset: the grace alone decides.
   */
  results?: ResultStore;
  statusOf: (run: RunObject) => RunStatus;
  write: (run: RunObject, observation: Observation) => Promise<WriteOutcome>;
  clock: Clock;
  log: Logger;
}

const at = () => new Date().toISOString();
/** Waiting reasons of a container whose image is not coming: the registry down, refusing, or answering 5xx. */
const PULL_FAILING = new Set(['ErrImagePull', 'ImagePullBackOff']);

/** The Run's ref on the attempt its status is on (each attempt has its own Pod, credentials and token). */
export const attemptRef = (run: RunObject, status: RunStatus): RunRef => ({ ...runRef(run), attempt: currentAttempt(status) });
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
    const status = this.deps.statusOf(run);
    const verdict = judgeResult(status, result);
    if (verdict.kind === 'write') {
      const disruption = result.outcome === 'cancelled' && run.spec.cancel !== true ? await this.disruptionOf(run) : undefined;
      const end: AttemptEnd = disruption && disruption.outcome === 'infrastructure_failed' ? { kind: 'disruption', disruption } : { kind: 'result', result };
      const decision = decideRetry(status, end, this.policyOf(run), run.spec.cancel === true);
      if (decision.retry) {
        const pod = this.podOf(run, status.pod);
        const retried = await this.retry(run, status, decision, disruption?.message ?? result.message, pod);
        if (retried !== undefined) return retried;
      } else {
        const written = await this.deps.write(run, { kind: 'result', result, disruption, noRetry: noRetryOf(decision), at: at() });
        if (written === 'conflict') return after(written);
        if (written === 'written') this.countExhausted(decision);
      }
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
    const pod = this.podOf(run, status.pod ?? driverPodName(attemptRef(run, status)));
    if (!pod) {
      // Created by this dispatcher a moment ago: the cache has not shown it yet (its add event enqueues the Run).
      if (memo?.claimed) return;
      const disruption = memo?.disruption ?? POD_DELETED;
      const decision = decideRetry(status, { kind: 'disruption', disruption }, this.policyOf(run), run.spec.cancel === true);
      if (decision.retry) return this.retry(run, status, decision, disruption.message, undefined);
      const written = await this.deps.write(run, { kind: 'pod-gone', disruption, noRetry: noRetryOf(decision), at: at() });
      if (written === 'written') this.countExhausted(decision);
      return after(written);
    }
    if (memo?.claimed) memo.claimed = undefined;
    await this.deps.lifecycle.publishKubeletEvents(run, pod);
    const phase = (pod.status?.phase ?? 'Pending') as 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
    const terminated = pod.status?.containerStatuses?.[0]?.state?.terminated;
    if (phase === 'Succeeded' || (phase === 'Failed' && terminated && terminated.exitCode !== undefined && pod.status?.reason !== 'DeadlineExceeded')) {
      // The driver's exit: its result message settles the Run. Without one after a grace period, the exit does.
      const exited = this.deps.memory.entry(key, uid);
      exited.exitedAt ??= this.deps.clock.now();
      const graceMs = this.deps.settings.TCAB_RESULT_GRACE_SECONDS * 1000;
      const left = exited.exitedAt + graceMs - this.deps.clock.now();
      if (left > 0) return { requeueAfterMs: left };
      const runId = clusterRunIdOf(run.metadata!.namespace!, run.metadata!.name!);
      if (this.deps.results && runId !== undefined) {
        const found = await this.deps.results.lastResult(runId).then((result) => ({ result }), (error: unknown) => ({ error }));
        if ('result' in found && found.result && attemptOfResult(found.result) === currentAttempt(status)) {
          // Not delivered yet, but there: settled as if delivered (the consumer's copy comes later as a redelivery).
          this.deps.log.info({ run: key, attempt: currentAttempt(status) }, 'the driver\'s result read from the stream (the results consumer had not delivered it)');
          this.deps.inbox.put(runId, found.result, () => undefined, false);
          return this.settleResult(run, runId);
        }
        if ('error' in found) {
          // NATS does not answer: the result may be there. Wait another grace, a few times, before saying there is none.
          exited.resultLookups = (exited.resultLookups ?? 0) + 1;
          this.deps.log.warn({ run: key, err: String(found.error), lookups: exited.resultLookups }, 'the run stream could not be read for the driver\'s result');
          if (exited.resultLookups < RESULT_LOOKUPS) return { requeueAfterMs: graceMs };
        }
      }
      const message = `the driver exited (code ${terminated?.exitCode ?? 0}) without publishing a result`;
      return after(await this.deps.write(run, { kind: 'pod', phase: 'Failed', reason: 'NoResult', message, at: at() }));
    }
    const node = pod.spec?.nodeName;
    // A Pod still here past the end of its deletion: its node is lost (the taint manager or the Pod GC deleted it,
    // and no kubelet confirms the end) or its kubelet hangs. It may never leave the API, so the attempt ends here:
    // tried again (the Pod force-deleted, the attempt fenced) or, when it is not, the Run ends as disrupted.
    const overdueIn = deletionOverdueInMs(pod, this.deps.clock.now(), this.deps.settings.TCAB_RESULT_GRACE_SECONDS * 1000);
    if (overdueIn !== undefined && overdueIn <= 0) {
      const disruption = podDisruption(pod) ?? POD_DELETED;
      const decision = decideRetry(status, { kind: 'disruption', disruption }, this.policyOf(run), run.spec.cancel === true);
      if (decision.retry) return this.retry(run, status, decision, disruption.message, pod, node, true);
      const written = await this.deps.write(run, { kind: 'pod-gone', disruption, noRetry: noRetryOf(decision), at: at() });
      if (written === 'written') this.countExhausted(decision);
      return after(written);
    }
    const scheduled = Boolean(node) || pod.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'True') === true;
    // An image that does not come (the registry down or answering 5xx) ends the attempt after the pull grace,
    // instead of holding it until the Pod's deadline: the next attempt may find the registry back.
    const waiting = pod.status?.containerStatuses?.[0]?.state?.waiting;
    const entry = this.deps.memory.peek(key, uid);
    if (phase === 'Pending' && waiting?.reason && PULL_FAILING.has(waiting.reason)) {
      const failing = this.deps.memory.entry(key, uid);
      failing.pullFailingSince ??= this.deps.clock.now();
      const left = failing.pullFailingSince + this.deps.settings.TCAB_IMAGE_PULL_GRACE_SECONDS * 1000 - this.deps.clock.now();
      if (left > 0) {
        const written = await this.deps.write(run, { kind: 'pod', phase, scheduled, ...(node ? { node } : {}), at: at() });
        return written === 'conflict' ? after(written) : { requeueAfterMs: left };
      }
      // The kubelet's waiting message names the image (the Pod cache keeps no container spec).
      return this.podFailed(run, status, pod, { phase: 'Failed', reason: IMAGE_PULL_FAILED, message: `the driver image was not pulled within ${this.deps.settings.TCAB_IMAGE_PULL_GRACE_SECONDS}s (${waiting.reason}${waiting.message ? `: ${waiting.message}` : ''})`, node });
    }
    if (entry?.pullFailingSince !== undefined) entry.pullFailingSince = undefined;
    if (phase === 'Failed' || phase === 'Unknown') return this.podFailed(run, status, pod, { phase, reason: pod.status?.reason, message: pod.status?.message, exitCode: terminated?.exitCode, node });
    // The driver said its check started (progress message) on this attempt: Checking, once the Pod runs.
    const checking = entry?.checking;
    const observation: Observation = phase === 'Running' && checking !== undefined && checking.attempt === currentAttempt(status)
      ? { kind: 'checking', ...(node ? { node } : {}), at: checking.at }
      : { kind: 'pod', phase, scheduled, ...(node ? { node } : {}), reason: pod.status?.reason, message: pod.status?.message, exitCode: terminated?.exitCode, at: at() };
    const written = await this.deps.write(run, observation);
    // Being deleted: looked at again when that is overdue (nothing else may ever happen to a lost node's Pod).
    return written !== 'conflict' && overdueIn !== undefined ? { requeueAfterMs: overdueIn } : after(written);
  }

  /** The attempt's Pod failed (or its node stopped reporting it) without a result: tried again when that is infrastructure. */
  private async podFailed(run: RunObject, status: RunStatus, pod: V1Pod, failed: { phase: 'Failed' | 'Unknown'; reason?: string; message?: string; exitCode?: number; node?: string }): Promise<ReconcileResult> {
    const decision = decideRetry(status, { kind: 'pod-failed', phase: failed.phase, reason: failed.reason, exitCode: failed.exitCode }, this.policyOf(run), run.spec.cancel === true);
    const why = [failed.reason, failed.message, failed.exitCode !== undefined ? `exit code ${failed.exitCode}` : undefined].filter(Boolean).join(': ');
    if (decision.retry) return this.retry(run, status, decision, `driver pod failed${why ? ` (${why})` : ''}`, pod, failed.node);
    const written = await this.deps.write(run, { kind: 'pod', ...failed, noRetry: noRetryOf(decision), at: at() });
    if (written === 'written') this.countExhausted(decision);
    if (written === 'written' && failed.reason === IMAGE_PULL_FAILED) await this.deletePod(run, pod.metadata!.name!);
    return after(written);
  }

  /** spec.retries (the default when the spec does not parse: such a Run is never claimed anyway) and the back-off settings. */
  private policyOf(run: RunObject): RetryPolicy {
    const spec = RunSpec.safeParse(run.spec);
    const { TCAB_RETRY_BACKOFF_SECONDS: base, TCAB_RETRY_BACKOFF_MAX_SECONDS: max } = this.deps.settings;
    return { retries: spec.success ? spec.data.retries : 0, backoffBaseMs: base * 1000, backoffMaxMs: max * 1000 };
  }

  private countExhausted(decision: RetryDecision): void {
    if (!decision.retry && decision.reason) this.deps.metrics.retriesExhausted.inc({ reason: decision.reason });
  }

  /**
   * Another attempt: the current one closed as it ended, the Run Pending until the back-off is over, and the old
   * attempt fenced (its Pod deleted, its NATS user and gateway token revoked). The claim pass makes the next Pod.
   */
  private async retry(run: RunObject, status: RunStatus, decision: Extract<RetryDecision, { retry: true }>, message: string, pod: V1Pod | undefined, node?: string, overdue = false): Promise<ReconcileResult> {
    const key = objectKey(run);
    const nextAttemptAt = new Date(this.deps.clock.now() + decision.backoffMs).toISOString();
    const written = await this.deps.write(run, { kind: 'retry', outcome: 'infrastructure_failed', reason: decision.reason, message, attempt: decision.attempt, of: decision.of, nextAttemptAt, ...(node ? { node } : {}), at: at() });
    if (written !== 'written') return after(written);
    this.deps.metrics.retries.inc({ reason: decision.reason });
    this.deps.log.warn({ run: key, attempt: decision.attempt, of: decision.of, reason: decision.reason, backoffMs: decision.backoffMs }, 'attempt failed on infrastructure; trying the run again');
    const old = { ...runRef(run), attempt: decision.attempt };
    this.deps.credentials?.retire(key, old, pod, 'retried');
    this.deps.gatewayTokens?.retire(key, old, pod, 'retried');
    startNextAttempt(this.deps.memory.entry(key, old.uid));
    const name = pod?.metadata?.name ?? status.pod;
    // Grace 0 also for a Pod already being deleted when that is overdue: removed from the API, its node lost.
    if (name && (overdue || !pod?.metadata?.deletionTimestamp)) {
      await this.deps.core.deleteNamespacedPod({ name, namespace: old.namespace, gracePeriodSeconds: 0 }).then(
        () => this.deps.metrics.podWrites.inc(),
        (error: unknown) => {
          if (!isNotFound(error)) throw error;
        },
      );
    }
  }

  /** After the end: the driver Pod is deleted (teardown); once it is gone, the Run's memory goes too. */
  private async finished(run: RunObject, status: RunStatus): Promise<ReconcileResult> {
    const key = objectKey(run);
    const memo = this.deps.memory.peek(key, run.metadata!.uid);
    if (memo) [memo.claimed, memo.disruption] = [undefined, undefined];
    const pod = this.podOf(run, status.pod);
    this.deps.credentials?.retire(key, attemptRef(run, status), pod, 'final');
    this.deps.gatewayTokens?.retire(key, attemptRef(run, status), pod, 'final');
    if (!pod) {
      const tornDown = await this.deps.lifecycle.publishTeardown(run);
      // Over: final in the cache (not only in this dispatcher's overlay) and no Pod left to tear down.
      if (isFinal(run.status ?? {}) && tornDown) this.deps.memory.forget(key);
      return;
    }
    // A lost node's Pod never goes by itself: past the end of its deletion it is removed from the API (grace 0); the
    // Run is over and its NATS user and token are revoked, so nothing of it that may still run can act for it.
    const overdueIn = deletionOverdueInMs(pod, this.deps.clock.now(), this.deps.settings.TCAB_RESULT_GRACE_SECONDS * 1000);
    if (overdueIn !== undefined) {
      if (overdueIn > 0) return { requeueAfterMs: overdueIn };
      await this.deps.core.deleteNamespacedPod({ name: pod.metadata!.name!, namespace: run.metadata!.namespace!, gracePeriodSeconds: 0 }).then(
        () => this.deps.metrics.podWrites.inc(),
        (error: unknown) => {
          if (!isNotFound(error)) throw error;
        },
      );
      return;
    }
    // Asked once: until the watch shows the deletion, a second look must not send the delete again.
    if (memo?.teardown) return;
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
    const status = this.deps.statusOf(run);
    const ref = attemptRef(run, status);
    const memo = this.deps.memory.peek(objectKey(run), ref.uid);
    if (memo?.disruption) return memo.disruption;
    const name = status.pod ?? driverPodName(ref);
    if (memo?.teardown?.pod === name) return undefined;
    const pod = await this.deps.core.readNamespacedPod({ namespace: ref.namespace, name }).catch((error: unknown) => {
      if (isNotFound(error)) return undefined;
      throw error;
    });
    return pod && !ownedBy(pod, ref.uid) ? POD_DELETED : podDisruption(pod);
  }
}

/** Said on the final status when the end was an infrastructure failure that was not tried again. */
function noRetryOf(decision: RetryDecision): { reason: string; why: string } | undefined {
  return !decision.retry && decision.reason && decision.why ? { reason: decision.reason, why: decision.why } : undefined;
}
