// Kubernetes' own view of a driver Pod's start, turned into the spec's system events: the kubelet's Pulling /
// Pulled / Failed(ErrImagePull) events are `pull_image`, Created / Started / Failed are `start_container`, and the
// Pod's deletion after the run is the cluster half of `teardown`. Pure.
import type { EventOf } from '../../shared/events.ts';

export interface KubeEvent {
  reason: string;
  message: string;
  /** RFC 3339. */
  time: string;
}

type SystemEvent = EventOf<'system'>;

export function lifecycleEvent(e: KubeEvent): SystemEvent | undefined {
  const base = { type: 'system' as const, timestamp: new Date(e.time).toISOString(), message: e.message };
  switch (e.reason) {
    case 'Pulling':
      return { ...base, stage: 'pull_image', status: 'started' };
    case 'Pulled':
      return { ...base, stage: 'pull_image', status: 'completed' };
    case 'ErrImagePull':
    case 'ImagePullBackOff':
    case 'ErrImageNeverPull':
    case 'InvalidImageName':
      return { ...base, stage: 'pull_image', status: 'failed' };
    case 'Created':
      return { ...base, stage: 'start_container', status: 'started' };
    case 'Started':
      return { ...base, stage: 'start_container', status: 'completed' };
    case 'Failed':
      // The kubelet reports both pull and start failures as `Failed`; its message says which.
      return { ...base, stage: /image|pull/i.test(e.message) ? 'pull_image' : 'start_container', status: 'failed' };
    default:
      return undefined;
  }
}

export function teardownEvents(podName: string, startedAt: string, finishedAt: string): SystemEvent[] {
  return [
    { type: 'system', timestamp: startedAt, stage: 'teardown', status: 'started', message: `deleting driver pod ${podName}` },
    { type: 'system', timestamp: finishedAt, stage: 'teardown', status: 'completed', message: `driver pod ${podName} deleted` },
  ];
}
