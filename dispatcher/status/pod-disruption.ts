// Why a driver Pod went away when nobody here asked for it: the words that end its Run's message. The apiserver
// (Eviction API, scheduler preemption, taint manager, pod GC) and the kubelet mark such a Pod with a
// DisruptionTarget condition before deleting it; a plain `kubectl delete pod` leaves only a deletionTimestamp.
import type { V1Pod } from '@kubernetes/client-node';

const DISRUPTION_VERBS: Record<string, string> = {
  EvictionByEvictionAPI: 'evicted',
  PreemptionByScheduler: 'preempted',
  DeletionByTaintManager: 'deleted by the taint manager',
  DeletionByPodGC: 'deleted by the pod garbage collector',
  TerminationByKubelet: 'terminated by the kubelet',
};

/**
 * "evicted (EvictionByEvictionAPI: Eviction API: evicting)", "deleted", ...: undefined while the Pod is neither
 * being deleted nor gone. `undefined` for the Pod means it is gone from the cache: deleted.
 */
export function podDisruption(pod: V1Pod | undefined): string | undefined {
  if (pod && !pod.metadata?.deletionTimestamp) return undefined;
  const target = pod?.status?.conditions?.find((c) => c.type === 'DisruptionTarget' && c.status === 'True');
  if (!target) return 'deleted';
  const verb = DISRUPTION_VERBS[target.reason ?? ''] ?? 'disrupted';
  const detail = [target.reason, target.message].filter(Boolean).join(': ');
  return detail ? `${verb} (${detail})` : verb;
}
