// What driver Pods and the kubelet's Events about them mean for their Runs. Handlers only note and enqueue:
//   - a Pod being deleted, evicted or past its deadline, not by this dispatcher: the Run's disruption (how it ends);
//   - a Pod the cache now shows (or lost): the claim no longer needs remembering;
//   - a Pod this dispatcher deleted (teardown) gone: noted, and the reconcile publishes the cluster half of `teardown`;
//   - an Event about a driver Pod: indexed by Pod, and the Run enqueued; the reconcile publishes the kubelet's
//     Pulling/Pulled/Created/Started/Failed as the Run's pull_image/start_container system events, once each.
// Every note is followed by an enqueue of the Run, whose reconcile drops the Run's memory once it is over.
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import type { HarnessEvent } from '../../shared/events.ts';
import type { Logger } from '../../shared/log.ts';
import { attemptOfPod, clusterRunId, driverPodName } from '../pods/driver-pod.ts';
import { currentAttempt } from '../status/retry.ts';
import { POD_DELETED, podDisruption } from '../status/pod-disruption.ts';
import { lifecycleEvent, teardownEvents } from '../status/lifecycle-events.ts';
import { isFinal } from '../status/transitions.ts';
import { errorMessage } from '../../kube/errors.ts';
import type { RunObject } from '../../kube/resources.ts';
import type { RunStatus } from '../../shared/run-status.ts';
import type { Caches } from './informers.ts';
import type { RunMemory } from './run-memory.ts';
import { ownerUid, podRunKey, runRef, splitKey } from './run-view.ts';

/** Every driver Pod's name starts so (pods/driver-pod.ts derives them from the Run). */
export const DRIVER_POD_PREFIX = driverPodName({ namespace: '', name: '', uid: '' });

export interface SystemEventPublisher {
  /** Publishes cluster-side system events to the run's NATS subjects. */
  publish(runId: string, events: HarnessEvent[], attemptNumber?: number): Promise<void>;
  /** Drops every message the stream holds for a run id (an earlier Run's of the same name). */
  forget?(runId: string): Promise<void>;
}

export interface PodLifecycleDeps {
  caches: Caches;
  memory: RunMemory;
  events: SystemEventPublisher;
  enqueue: (runKey: string) => void;
  /** A Pod gone frees a slot: the claim pass looks again. */
  capacityChanged: () => void;
  /** The Run's status as it stands (run-view.ts effectiveStatus): which attempt's Pod is the current one. */
  statusOf: (run: RunObject) => RunStatus;
  log: Logger;
}

const at = () => new Date().toISOString();

export class PodLifecycle {
  private readonly deps: PodLifecycleDeps;
  /** Event names by `<namespace>/<pod name>`: mirrors the Event cache (an Event's deletion removes it). */
  private readonly eventsByPod = new Map<string, Set<string>>();

  constructor(deps: PodLifecycleDeps) {
    this.deps = deps;
    const { pods, kubeEvents } = deps.caches;
    pods.on('add', (pod) => this.onPod(pod, false));
    pods.on('update', (pod) => this.onPod(pod, false));
    pods.on('delete', (pod) => this.onPod(pod, true));
    kubeEvents.on('add', (e) => this.onEvent(e, false));
    kubeEvents.on('update', (e) => this.onEvent(e, false));
    kubeEvents.on('delete', (e) => this.onEvent(e, true));
  }

  /** Pods with indexed Events (cache-derived, not per-Run memory: it empties as the Events expire). */
  get indexedPods(): number {
    return this.eventsByPod.size;
  }

  private onPod(pod: V1Pod, gone: boolean): void {
    const key = podRunKey(pod);
    const owner = ownerUid(pod);
    if (!key || !owner) return;
    const memo = this.deps.memory.peek(key, owner);
    // Once the cache shows (or has lost) a Pod this dispatcher created, the cache speaks for the claim.
    if (memo) memo.claimed = undefined;
    const teardown = memo?.teardown?.pod === pod.metadata!.name ? memo!.teardown : undefined;
    if (!teardown) this.noteDisruption(key, owner, pod, gone);
    // The deletion this dispatcher asked for is done: the reconcile publishes it (teardown completed, now).
    if (gone && teardown) teardown.goneAt ??= at();
    if (gone) this.deps.capacityChanged();
    this.deps.enqueue(key);
  }

  /** A driver Pod going (or gone, or past its deadline) not by this dispatcher's hand: remember how, for its Run. */
  private noteDisruption(key: string, owner: string, pod: V1Pod, gone: boolean): void {
    const { namespace, name } = splitKey(key);
    const run = this.deps.caches.runs.get(name, namespace);
    if (!run || run.metadata?.uid !== owner || isFinal(run.status ?? {})) return;
    // An earlier attempt's Pod going (this dispatcher fenced it when the attempt ended) says nothing about the current one.
    if (this.deps.statusOf(run).pod !== pod.metadata?.name) return;
    // A force-deleted Pod's last state may carry no deletionTimestamp: gone is still "deleted".
    const disruption = podDisruption(pod) ?? (gone ? POD_DELETED : undefined);
    if (!disruption) return;
    const memo = this.deps.memory.entry(key, owner);
    // Keep the richer word seen earlier (the DisruptionTarget condition, the deadline) over a bare "deleted".
    if (!(disruption === POD_DELETED && memo.disruption)) memo.disruption = disruption;
  }

  /** The cluster half of `teardown` for a Pod this dispatcher deleted and the cache shows gone; true once done. */
  async publishTeardown(run: RunObject): Promise<boolean> {
    const memo = this.deps.memory.peek(`${run.metadata!.namespace}/${run.metadata!.name}`, run.metadata!.uid);
    const teardown = memo?.teardown;
    if (!teardown?.goneAt) return teardown === undefined;
    memo!.teardown = undefined;
    await this.deps.events
      .publish(clusterRunId(runRef(run)), teardownEvents(teardown.pod, teardown.startedAt, teardown.goneAt), currentAttempt(this.deps.statusOf(run)))
      .catch((error: unknown) => this.deps.log.warn({ run: `${run.metadata!.namespace}/${run.metadata!.name}`, pod: teardown.pod, err: errorMessage(error) }, 'publishing teardown events failed'));
    return true;
  }

  private onEvent(e: CoreV1Event, gone: boolean): void {
    const about = e.involvedObject;
    const namespace = e.metadata?.namespace;
    if (about?.kind !== 'Pod' || !about.name?.startsWith(DRIVER_POD_PREFIX) || !namespace) return;
    const podKey = `${namespace}/${about.name}`;
    const names = this.eventsByPod.get(podKey) ?? new Set<string>();
    if (gone) names.delete(e.metadata!.name!);
    else names.add(e.metadata!.name!);
    if (names.size === 0) this.eventsByPod.delete(podKey);
    else this.eventsByPod.set(podKey, names);
    if (gone) return;
    const pod = this.deps.caches.pods.get(about.name, namespace);
    const key = pod && podRunKey(pod);
    if (key) this.deps.enqueue(key);
  }

  /** Publishes the kubelet's Events about the Run's Pod not published yet, in their order. */
  async publishKubeletEvents(run: RunObject, pod: V1Pod): Promise<void> {
    const { namespace } = runRef(run);
    const memo = this.deps.memory.peek(`${namespace}/${run.metadata!.name}`, run.metadata!.uid);
    const fresh = [...(this.eventsByPod.get(`${namespace}/${pod.metadata!.name}`) ?? [])]
      .map((name) => this.deps.caches.kubeEvents.get(name, namespace))
      .filter((e): e is CoreV1Event => e !== undefined && e.involvedObject?.uid === pod.metadata!.uid && !memo?.seenEvents?.has(e.metadata!.uid!))
      .sort((a, b) => String(a.lastTimestamp ?? a.eventTime ?? '').localeCompare(String(b.lastTimestamp ?? b.eventTime ?? '')));
    if (fresh.length === 0) return;
    const seen = (this.deps.memory.entry(`${namespace}/${run.metadata!.name}`, run.metadata!.uid!).seenEvents ??= new Set());
    const systemEvents: HarnessEvent[] = [];
    for (const e of fresh) {
      seen.add(e.metadata!.uid!);
      const time = new Date((e.lastTimestamp ?? e.eventTime ?? e.metadata!.creationTimestamp ?? new Date()) as Date).toISOString();
      const system = lifecycleEvent({ reason: e.reason ?? '', message: e.message ?? '', time });
      if (system) systemEvents.push(system);
    }
    if (systemEvents.length > 0) await this.deps.events.publish(clusterRunId(runRef(run)), systemEvents, attemptOfPod(pod));
  }
}
