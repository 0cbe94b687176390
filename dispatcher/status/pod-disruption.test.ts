import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { deletionOverdueInMs, podDisruption } from './pod-disruption.ts';

const deleting = (conditions: NonNullable<V1Pod['status']>['conditions'] = []): V1Pod => ({
  metadata: { name: 'tcab-run-a', deletionTimestamp: new Date('2026-12-04T00:00:00Z') },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }, ...conditions] },
});
const gone = (how: string, reason = 'PodDeleted') => ({ outcome: 'infrastructure_failed', reason, message: `the driver pod was ${how} before the run finished` });
const target = (reason: string, message?: string, status = 'True') => ({ type: 'DisruptionTarget', status, reason, message });

describe('podDisruption', () => {
  it.each([
    ['a live Pod', { metadata: { name: 'p' }, status: { phase: 'Running' } } as V1Pod, undefined],
    ['a Pod gone from the cache', undefined, gone('deleted')],
    ['kubectl delete pod (deletionTimestamp only)', deleting(), gone('deleted')],
    ['the Eviction API', deleting([target('EvictionByEvictionAPI', 'Eviction API: evicting')]), gone('evicted (EvictionByEvictionAPI: Eviction API: evicting)', 'PodEvicted')],
    ['scheduler preemption', deleting([target('PreemptionByScheduler', 'tcab/high: preempting to accommodate a higher priority pod')]), gone('preempted (PreemptionByScheduler: tcab/high: preempting to accommodate a higher priority pod)', 'PodPreempted')],
    ['the taint manager', deleting([target('DeletionByTaintManager')]), gone('deleted by the taint manager (DeletionByTaintManager)', 'NodeLost')],
    ['pod GC', deleting([target('DeletionByPodGC', 'PodGC: node no longer exists')]), gone('deleted by the pod garbage collector (DeletionByPodGC: PodGC: node no longer exists)', 'NodeLost')],
    ['a reason this code does not know', deleting([target('SomethingNew', 'why')]), gone('disrupted (SomethingNew: why)', 'PodDisrupted')],
    ['finding 9: a reason named like an Object property', deleting([target('constructor', 'why')]), gone('disrupted (constructor: why)', 'PodDisrupted')],
    ['a DisruptionTarget that is False', deleting([target('EvictionByEvictionAPI', 'x', 'False')]), gone('deleted')],
    [
      'the kubelet at activeDeadlineSeconds',
      { metadata: { name: 'p' }, status: { phase: 'Failed', reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline' } } as V1Pod,
      { outcome: 'timed_out', reason: 'DeadlineExceeded', message: 'the driver pod reached its activeDeadlineSeconds (DeadlineExceeded: Pod was active on the node longer than the specified deadline)' },
    ],
  ])('%s', (_, pod, expected) => {
    expect(podDisruption(pod)).toEqual(expected);
  });
});

describe('deletionOverdueInMs', () => {
  const at = (deletionTimestamp: unknown) => ({ metadata: { name: 'p', deletionTimestamp } }) as unknown as V1Pod;
  const now = Date.parse('2026-12-06T17:00:00.000Z');
  it.each([
    ['not being deleted', { metadata: { name: 'p' } } as V1Pod, undefined],
    ['its grace running (10 s of it left, 30 s margin)', at(new Date(now + 10_000)), 40_000],
    ['a string timestamp, as JSON gives it', at('2026-12-06T17:00:10.000Z'), 40_000],
    ['the grace over, the margin not', at(new Date(now - 20_000)), 10_000],
    ['overdue: a lost node\'s Pod, its end long past', at(new Date(now - 300_000)), -270_000],
    ['exactly due', at(new Date(now - 30_000)), 0],
    ['a timestamp that does not parse', at('not a time'), undefined],
    ['null', at(null), undefined],
    [
      'deleted by the taint manager (a node unreachable): no kubelet runs its 30 s grace, the margin counts from the deletion',
      { metadata: { name: 'p', deletionTimestamp: new Date(now + 10_000), deletionGracePeriodSeconds: 30 }, status: { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager' }] } } as unknown as V1Pod,
      10_000,
    ],
    [
      'evicted (a kubelet that runs the grace): the grace counts',
      { metadata: { name: 'p', deletionTimestamp: new Date(now + 10_000), deletionGracePeriodSeconds: 30 }, status: { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI' }] } } as unknown as V1Pod,
      40_000,
    ],
  ])('%s', (_, pod, expected) => {
    expect(deletionOverdueInMs(pod, now, 30_000)).toBe(expected);
  });
});
