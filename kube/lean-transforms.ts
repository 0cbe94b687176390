// What the dispatcher's caches keep of each object (the lean informer's transforms, lean-informer.ts). Each keeps
// metadata the informer needs (name, namespace, resourceVersion) and what the dispatcher reads; the rest (a Pod's
// spec, managedFields, kubectl's last-applied copy) is dropped as the object arrives. Pure.
//
// Fields read by the dispatcher (dispatcher/controller, pods/, status/), which a transform must keep:
//   Run    everything but managedFields and the last-applied annotation: spec and status are the state, and a
//          status write sends the cached Run back (a status PUT ignores everything but status; an omitted
//          managedFields leaves the server's unchanged).
//   Pod    metadata: name, namespace, uid, resourceVersion, creationTimestamp, deletionTimestamp, labels,
//          ownerReferences, the egress annotation (a status rebuilt from the Pod says what the run could
//          reach: pods/egress.ts egressOfPod); spec.nodeName; status (phase, reason, message, conditions,
//          containerStatuses).
//   Event  metadata: name, namespace, uid, resourceVersion, creationTimestamp; involvedObject; reason, message,
//          type; lastTimestamp, eventTime, firstTimestamp, count.
import type { CoreV1Event, KubernetesObject, V1ObjectMeta, V1Pod } from '@kubernetes/client-node';
import { EGRESS_ANNOTATION } from './resources.ts';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** Metadata without managedFields and without kubectl's copy of the whole object. */
export function leanMetadata(metadata: V1ObjectMeta | undefined): V1ObjectMeta {
  if (!metadata) return {};
  const { managedFields: _managedFields, annotations, ...rest } = metadata;
  if (!annotations) return rest;
  const { [LAST_APPLIED]: _lastApplied, ...kept } = annotations;
  return Object.keys(kept).length > 0 ? { ...rest, annotations: kept } : rest;
}

/** Any object (Runs, HarnessConfigs): all of it but managedFields and the last-applied annotation. */
export function leanObject<T extends KubernetesObject>(object: T): T {
  return { ...object, metadata: leanMetadata(object.metadata) };
}

/** A driver Pod as the dispatcher follows it: identity, owner, node, status; no spec beyond the node. */
export function leanPod(pod: V1Pod): V1Pod {
  const { name, namespace, uid, resourceVersion, creationTimestamp, deletionTimestamp, labels, ownerReferences, annotations } = pod.metadata ?? {};
  const egress = annotations?.[EGRESS_ANNOTATION];
  return {
    metadata: { name, namespace, uid, resourceVersion, creationTimestamp, deletionTimestamp, labels, ownerReferences, ...(egress !== undefined ? { annotations: { [EGRESS_ANNOTATION]: egress } } : {}) },
    spec: pod.spec?.nodeName ? ({ nodeName: pod.spec.nodeName } as V1Pod['spec']) : undefined,
    status: pod.status,
  };
}

/** A kubelet Event as the dispatcher turns it into a system event. */
export function leanEvent(event: CoreV1Event): CoreV1Event {
  const { name, namespace, uid, resourceVersion, creationTimestamp } = event.metadata ?? {};
  const { involvedObject, reason, message, type, lastTimestamp, eventTime, firstTimestamp, count } = event;
  return { metadata: { name, namespace, uid, resourceVersion, creationTimestamp }, involvedObject, reason, message, type, lastTimestamp, eventTime, firstTimestamp, count };
}
