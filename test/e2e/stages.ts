// Where the time of a cluster Run goes, stage by stage: from `kubectl apply` to Succeeded, as seen from outside the
// cluster (a watch on the Run, its driver Pod and the namespace's Events, and a NATS subscriber), plus the stages
// the driver itself reports on the stream (install_harness, probe_harness, ...). Shared by test/e2e and
// `npm run bench -- e2e` (no vitest here: the cluster comes in as a KubeConfig): RunTimeline records first-seen
// times (ms, this process's clock); runStages() turns a timeline and the Run's stream into named durations.
import type { CoreV1Event, KubeConfig, V1Pod } from '@kubernetes/client-node';
import type { RunObject } from '../../kube/resources.ts';
import { watchAll } from '../cluster/watch-all.ts';

export interface Timeline {
  /** `kubectl apply` returned. */
  applied: number;
  /** The dispatcher made the driver Pod (first seen). */
  podCreated?: number;
  /** The scheduler bound it to a node (spec.nodeName first seen). */
  scheduled?: number;
  /** The kubelet's Pulled Event (pulled now, or already present on the node). */
  pulled?: number;
  /** The kubelet's Started Event. */
  started?: number;
  /** The first event of the run on NATS, at the subscriber. */
  firstEvent?: number;
  /** The Run's phase Succeeded (or Failed) first seen. */
  finished?: number;
  /** The kubelet's Pulled message: "already present on machine" or "Successfully pulled ... in 1.2s". */
  pullMessage?: string;
}

/** A stream event as `tcab events follow --json` prints it (the fields stages need). */
export interface StreamEvent {
  type: string;
  timestamp?: string;
  stage?: string;
  status?: string;
  message?: string;
}

/**
 * Times in ms from `kubectl apply`: when the driver Pod was created, scheduled, its image pulled (or found present),
 * its container started, the first event reached the subscriber, the Run finished (`total`). Each comes from its
 * own watch, so two close ones may arrive in either order; offsets from one origin stay meaningful where deltas
 * between them would not. Plus the driver's own stages from the stream's started/completed pairs
 * (`driver_install_harness`, `driver_probe_harness`, ...; the driver's clock, ms). The kubelet's stages on the
 * stream carry its Events' whole-second times, so they are not timed from there.
 */
export function runStages(t: Timeline, stream: readonly StreamEvent[] = []): Record<string, number> {
  const out: Record<string, number> = {};
  const marks: [string, number | undefined][] = [['pod_created', t.podCreated], ['scheduled', t.scheduled], ['image_pulled', t.pulled], ['container_started', t.started], ['first_event', t.firstEvent], ['total', t.finished]];
  for (const [name, at] of marks) if (at !== undefined) out[name] = at - t.applied;
  const startedAt = new Map<string, number>();
  for (const e of stream) {
    if (e.type !== 'system' || !e.stage || !e.timestamp || e.stage === 'pull_image' || e.stage === 'start_container') continue;
    const at = Date.parse(e.timestamp);
    if (e.status === 'started') startedAt.set(e.stage, at);
    else if (e.status === 'completed' && startedAt.has(e.stage)) out[`driver_${e.stage}`] = at - startedAt.get(e.stage)!;
  }
  return out;
}

/**
 * Watches one Run, its driver Pod (label tcab.dev/run) and the kubelet's Events in its namespace; records when
 * each stage is first seen. `markFirstEvent()` is called by whoever reads the stream.
 */
export class RunTimeline {
  readonly timeline: Timeline;
  /** Resolves when the Run is first seen Succeeded or Failed. */
  readonly finished: Promise<void>;
  private seenFinished!: () => void;
  private stops: (() => void)[] = [];
  private podUid?: string;
  private constructor(applied: number) {
    this.timeline = { applied };
    this.finished = new Promise((resolve) => (this.seenFinished = resolve));
  }

  /** Starts the watches before the Run is applied; then call applied() as `kubectl apply` starts. */
  static async watch(config: KubeConfig, namespace: string, run: string): Promise<RunTimeline> {
    const t = new RunTimeline(0);
    const now = () => Date.now();
    const set = (key: keyof Omit<Timeline, 'pullMessage'>) => {
      if (t.timeline[key] === undefined || t.timeline[key] === 0) t.timeline[key] = now();
    };
    const pods = await watchAll<V1Pod>(config, `/api/v1/namespaces/${namespace}/pods`, { labelSelector: `tcab.dev/run=${run}` }, (_type, pod) => {
      t.podUid ??= pod.metadata?.uid;
      set('podCreated');
      if (pod.spec?.nodeName) set('scheduled');
    });
    const events = await watchAll<CoreV1Event>(config, `/api/v1/namespaces/${namespace}/events`, {}, (_type, e) => {
      if (e.involvedObject?.kind !== 'Pod' || e.involvedObject.name !== `tcab-run-${run}`) return;
      if (e.reason === 'Pulled') {
        set('pulled');
        t.timeline.pullMessage ??= e.message;
      }
      if (e.reason === 'Started') set('started');
    });
    const runs = await watchAll<RunObject>(config, `/apis/tcab.dev/v1alpha1/namespaces/${namespace}/runs`, { fieldSelector: `metadata.name=${run}` }, (_type, r) => {
      if (!['Succeeded', 'Failed'].includes(r.status?.phase ?? '')) return;
      set('finished');
      t.seenFinished();
    });
    t.stops = [pods.stop, events.stop, runs.stop];
    return t;
  }

  applied(at = Date.now()): void {
    this.timeline.applied = at;
  }

  markFirstEvent(at = Date.now()): void {
    this.timeline.firstEvent ??= at;
  }

  /** The finished Run as a wait saw it (its own list may come before this watch's event). */
  markFinished(at = Date.now()): void {
    this.timeline.finished ??= at;
  }

  stop(): Timeline {
    for (const stop of this.stops) stop();
    return this.timeline;
  }
}
