// Why a driver Pod stopped its driver when nobody here asked for it: how its Run ends. The apiserver (Eviction API,
// scheduler preemption, taint manager, pod GC) and the kubelet mark such a Pod with a DisruptionTarget condition
// before deleting it; a plain `kubectl delete pod` leaves only a deletionTimestamp; the kubelet ends a Pod past
// its activeDeadlineSeconds with reason DeadlineExceeded. Pure.
import type { V1Pod } from '@kubernetes/client-node';

export interface Disruption {
  outcome: 'infrastructure_failed' | 'timed_out';
  /** The failure class, CamelCase (status/retry.ts decides from it whether the Run tries again). */
  reason: DisruptionReason;
  message: string;
}

export type DisruptionReason = 'PodDeleted' | 'PodEvicted' | 'PodPreempted' | 'NodeLost' | 'PodTerminatedByKubelet' | 'PodDisrupted' | 'DeadlineExceeded';

/** What each DisruptionTarget reason says happened. The taint manager and the Pod GC delete Pods of a node that is gone or unreachable. */
const DISRUPTION_VERBS: Record<string, { verb: string; reason: DisruptionReason }> = {
  EvictionByEvictionAPI: { verb: 'evicted', reason: 'PodEvicted' },
  PreemptionByScheduler: { verb: 'preempted', reason: 'PodPreempted' },
  DeletionByTaintManager: { verb: 'deleted by the taint manager', reason: 'NodeLost' },
  DeletionByPodGC: { verb: 'deleted by the pod garbage collector', reason: 'NodeLost' },
  TerminationByKubelet: { verb: 'terminated by the kubelet', reason: 'PodTerminatedByKubelet' },
};

const gone = (how: string, reason: DisruptionReason): Disruption => ({ outcome: 'infrastructure_failed', reason, message: `the driver pod was ${how} before the run finished` });

/** A Pod that disappeared without a last word: deleted. */
export const POD_DELETED = gone('deleted', 'PodDeleted');

/**
 * How the Pod is stopping its driver: "the driver pod was evicted (EvictionByEvictionAPI: ...) before the run
 * finished", a deadline, ...; undefined while it is neither being deleted nor past its deadline. `undefined` for
 * the Pod means it is gone from the cache: deleted.
 */
export function podDisruption(pod: V1Pod | undefined): Disruption | undefined {
  if (!pod) return POD_DELETED;
  if (pod.status?.reason === 'DeadlineExceeded') {
    const detail = pod.status.message ? `: ${pod.status.message}` : '';
    return { outcome: 'timed_out', reason: 'DeadlineExceeded', message: `the driver pod reached its activeDeadlineSeconds (DeadlineExceeded${detail})` };
  }
  if (!pod.metadata?.deletionTimestamp) return undefined;
  const target = pod.status?.conditions?.find((c) => c.type === 'DisruptionTarget' && c.status === 'True');
  if (!target) return POD_DELETED;
  // Own keys only: a condition's reason is free text, and "constructor" is no verb.
  const known = target.reason !== undefined && Object.hasOwn(DISRUPTION_VERBS, target.reason) ? DISRUPTION_VERBS[target.reason]! : { verb: 'disrupted', reason: 'PodDisrupted' as const };
  const detail = [target.reason, target.message].filter(Boolean).join(': ');
  return gone(detail ? `${known.verb} (${detail})` : known.verb, known.reason);
}

/**
 * Milliseconds until a Pod's deletion is overdue (<= 0: it is): its deletionTimestamp is the latest its kubelet
 * stops it (the end of its grace period); `marginMs` more for its driver's last result. A Pod still in the API past
 * that is on a node that is lost or whose kubelet hangs. When the taint manager or the Pod GC deleted it (its node
 * unreachable or gone), no kubelet will run the grace period at all: the margin counts from the deletion itself.
 * undefined: the Pod is not being deleted (or its deletionTimestamp does not parse).
 */
export function deletionOverdueInMs(pod: V1Pod, nowMs: number, marginMs: number): number | undefined {
  const deletion = pod.metadata?.deletionTimestamp;
  if (deletion === undefined || deletion === null) return undefined;
  const ends = new Date(deletion).getTime();
  if (!Number.isFinite(ends)) return undefined;
  const nodeGone = podDisruption(pod)?.reason === 'NodeLost';
  const graceMs = nodeGone ? Math.max(0, pod.metadata?.deletionGracePeriodSeconds ?? 0) * 1000 : 0;
  return ends - graceMs + marginMs - nowMs;
}
