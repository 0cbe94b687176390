// Whether an attempt that just ended is tried again, pure. Only infrastructure failures are: what went wrong was
// the cluster's or the network's, not the agent's, so another attempt on a new Pod can succeed where this one could
// not. Never an agent or harness failure (the model's work, or the harness's exit, is the result), a timeout, a
// budget or a cancel: running those again would spend the user's money to hide an answer.
//
//   class (reason)          observed as
//   NodeLost                the Pod deleted by the taint manager or the Pod GC (its node unreachable or gone), or
//                           its phase Unknown, or the kubelet's NodeLost / NodeShutdown
//   PodEvicted              the Eviction API (a drain), or the kubelet's node-pressure eviction (reason Evicted)
//   PodPreempted            the scheduler preempted it for a higher-priority Pod
//   PodDeleted              a Pod deleted by someone else than this dispatcher (the Run was not)
//   PodTerminatedByKubelet  the kubelet ended it (graceful node shutdown)
//   PodDisrupted            a DisruptionTarget reason this code does not know yet
//   ImagePullFailed         its image not pulled within the pull grace (the registry down, answering 5xx, unreachable)
//   InstallFailed           the driver's result says so: the harness install failed on a registry or network error,
//                           before any session (RunResult.retryable)
// Back-off: base * 2^(attempt - 1), capped, so a registry that is down is not hammered by every queued Run at once.
import type { RunResult } from '../../shared/run.ts';
import type { RunStatus } from '../../shared/run-status.ts';
import type { Disruption } from './pod-disruption.ts';

export const RETRYABLE_REASONS = ['NodeLost', 'PodEvicted', 'PodPreempted', 'PodDeleted', 'PodTerminatedByKubelet', 'PodDisrupted', 'ImagePullFailed', 'InstallFailed'] as const;
export type RetryableReason = (typeof RETRYABLE_REASONS)[number];

/** Pod status reasons the kubelet and the node lifecycle controller set on a Pod whose node went (or is going) away. */
const NODE_GONE_POD_REASONS: Readonly<Record<string, RetryableReason>> = { NodeLost: 'NodeLost', NodeShutdown: 'NodeLost', Terminated: 'PodTerminatedByKubelet', Evicted: 'PodEvicted', Preempting: 'PodPreempted', UnexpectedAdmissionError: 'NodeLost' };

/** The reason this dispatcher gives a Pod whose image it stopped waiting for (reconciler: image pull grace). */
export const IMAGE_PULL_FAILED = 'ImagePullFailed';

/** How an attempt ended, as the reconciler observed it. */
export type AttemptEnd =
  | { kind: 'disruption'; disruption: Disruption }
  /** The Pod Failed or Unknown without a result: its phase, status reason and exit code. */
  | { kind: 'pod-failed'; phase: 'Failed' | 'Unknown'; reason?: string; exitCode?: number }
  | { kind: 'result'; result: RunResult };

/** The failure class of an attempt's end when it is one that is retried; undefined when it is not. */
export function retryableReason(end: AttemptEnd): RetryableReason | undefined {
  switch (end.kind) {
    case 'disruption':
      return end.disruption.outcome === 'infrastructure_failed' && (RETRYABLE_REASONS as readonly string[]).includes(end.disruption.reason) ? (end.disruption.reason as RetryableReason) : undefined;
    case 'pod-failed':
      if (end.reason === IMAGE_PULL_FAILED) return 'ImagePullFailed';
      if (end.reason !== undefined && Object.hasOwn(NODE_GONE_POD_REASONS, end.reason)) return NODE_GONE_POD_REASONS[end.reason];
      // Unknown: the node stopped reporting the Pod. A Failed Pod with an exit code is the driver's own exit: not retried
      // (it may have run sessions; the agent's work is not run twice on a guess).
      return end.phase === 'Unknown' ? 'NodeLost' : undefined;
    case 'result': {
      const r = end.result;
      // Only before any session: the agent has done nothing yet, so a second attempt repeats no work and no spend.
      return r.outcome === 'infrastructure_failed' && r.retryable === true && r.sessions.length === 0 ? 'InstallFailed' : undefined;
    }
  }
}

export interface RetryPolicy {
  /** spec.retries: attempts after the first. */
  retries: number;
  /** The first back-off; each later one doubles it. */
  backoffBaseMs: number;
  backoffMaxMs: number;
}

export type RetryDecision =
  | { retry: true; reason: RetryableReason; attempt: number; of: number; backoffMs: number }
  /** reason: set when the failure was retryable but the Run cannot go again (attempts used up, or cancelled). */
  | { retry: false; reason?: RetryableReason; attempt: number; of: number; why?: string };

/** The attempt the status is on: the last one recorded (1 for a Run dispatched before attempts were recorded). */
export function currentAttempt(status: RunStatus): number {
  return status.attempts?.at(-1)?.number ?? 1;
}

/** The number the next attempt gets when it is claimed. */
export function nextAttemptNumber(status: RunStatus): number {
  return (status.attempts?.length ?? 0) + 1;
}

export function backoffMs(attempt: number, policy: Pick<RetryPolicy, 'backoffBaseMs' | 'backoffMaxMs'>): number {
  return Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
}

/**
 * Whether the attempt that ended so is tried again. `cancelled`: the Run's spec asks to stop (a cancel wins over a
 * retry: nobody wants another attempt of a Run they stopped).
 */
export function decideRetry(status: RunStatus, end: AttemptEnd, policy: RetryPolicy, cancelled: boolean): RetryDecision {
  const attempt = currentAttempt(status);
  const of = policy.retries + 1;
  const reason = retryableReason(end);
  if (reason === undefined) return { retry: false, attempt, of };
  if (cancelled) return { retry: false, reason, attempt, of, why: 'the Run was cancelled' };
  if (attempt >= of) return { retry: false, reason, attempt, of, why: of === 1 ? 'retries are off (spec.retries 0)' : `no attempts left (${attempt} of ${of} used)` };
  return { retry: true, reason, attempt, of, backoffMs: backoffMs(attempt, policy) };
}
