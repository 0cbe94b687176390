// How the controllers read a Run: its key, its Pod, and its status as it stands, from the caches plus what this
// dispatcher wrote or created and its caches do not show yet (run-memory.ts). Pure over its inputs.
import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import type { RunStatus } from '../../shared/run-status.ts';
import { clusterRunIdOf } from '../../shared/run-id.ts';
import { driverPodName, eventsSubject, RUN_LABEL } from '../pods/driver-pod.ts';
import { egressOfPod } from '../pods/egress.ts';
import type { RunRef } from '../pods/driver-pod.ts';
import { nextStatus } from '../status/transitions.ts';
import { nextAttemptNumber } from '../status/retry.ts';
import type { RunObject } from '../../kube/resources.ts';
import type { Cache } from './informers.ts';
import type { RunMemo, RunMemory } from './run-memory.ts';

export const objectKey = (o: KubernetesObject) => `${o.metadata!.namespace}/${o.metadata!.name}`;
export const splitKey = (key: string) => {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
};
export const runRef = (run: RunObject): RunRef => ({ namespace: run.metadata!.namespace!, name: run.metadata!.name!, uid: run.metadata!.uid! });
export const ownerUid = (pod: V1Pod) => pod.metadata?.ownerReferences?.find((o) => o.kind === 'Run')?.uid;
export const ownedBy = (pod: V1Pod, runUid: string) => pod.metadata?.ownerReferences?.some((o) => o.kind === 'Run' && o.uid === runUid) === true;

/** The key of the Run a driver Pod belongs to (its label), or undefined for another Pod. */
export function podRunKey(pod: V1Pod): string | undefined {
  const name = pod.metadata?.labels?.[RUN_LABEL];
  return name ? `${pod.metadata!.namespace}/${name}` : undefined;
}

/**
 * The key of the Run with this run id in `namespace` (run ids are `<namespace>_<name with . as _>`, injective:
 * shared/run-id.ts), or undefined when the id is not of this namespace.
 */
export function runKeyOfRunId(namespace: string, runId: string): string | undefined {
  if (!runId.startsWith(`${namespace}_`)) return undefined;
  const name = runId.slice(namespace.length + 1).replaceAll('_', '.');
  return clusterRunIdOf(namespace, name) === runId ? `${namespace}/${name}` : undefined;
}

/** The status as written: this dispatcher's last write while the cache still shows the version it replaced. */
export function writtenStatus(run: RunObject, memo: RunMemo | undefined): RunStatus {
  const last = memo?.lastWrite;
  if (last && run.metadata?.resourceVersion === last.baseRv) return last.status;
  return run.status ?? {};
}

/** The resourceVersion a status write must carry (the cache's, or the one this dispatcher's last write made). */
export function currentVersion(run: RunObject, memo: RunMemo | undefined): string | undefined {
  const last = memo?.lastWrite;
  return last && run.metadata?.resourceVersion === last.baseRv ? last.rv : run.metadata?.resourceVersion;
}

/**
 * The status that counts (claims, gauges, reconcile): the written one, or Dispatched when the Run's Pod exists
 * (made by this dispatcher, or by a leader that died before writing the status) and no status says so yet.
 */
export function effectiveStatus(run: RunObject, memory: RunMemory, pods: Cache<V1Pod>): RunStatus {
  const memo = memory.peek(objectKey(run), run.metadata!.uid);
  const status = writtenStatus(run, memo);
  if (status.phase && status.phase !== 'Pending') return status;
  if (memo?.claimed) return nextStatus(status, { kind: 'claimed', ...memo.claimed });
  // Queued (again, after an attempt failed on infrastructure): the Pod that would be the next attempt's.
  const ref = { ...runRef(run), attempt: nextAttemptNumber(status) };
  const pod = pods.get(driverPodName(ref), ref.namespace);
  if (!pod || !ownedBy(pod, ref.uid)) return status;
  const created = new Date(pod.metadata!.creationTimestamp ?? Date.now()).toISOString();
  const egress = egressOfPod(pod);
  return nextStatus(status, { kind: 'claimed', pod: driverPodName(ref), eventsSubject: eventsSubject(ref), ...(egress ? { egress } : {}), at: created });
}
