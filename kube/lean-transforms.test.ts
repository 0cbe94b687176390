import { describe, expect, it } from 'vitest';
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import { LAST_APPLIED, leanEvent, leanObject, leanPod } from './lean-transforms.ts';
import { EGRESS_LABEL, egressOfPod } from '../dispatcher/pods/egress.ts';
import { EGRESS_ANNOTATION } from './resources.ts';
import { buildDriverPod } from '../dispatcher/pods/driver-pod.ts';
import { dispatcherConfig } from '../dispatcher/config.ts';
import { RunSpec } from '../shared/run.ts';

const managedFields = [{ manager: 'kubectl', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }];

describe('lean transforms', () => {
  it('a Run keeps spec, status and metadata, without managedFields or the last-applied copy of itself', () => {
    const run = {
      apiVersion: 'tcab.dev/v1alpha1', kind: 'Run',
      metadata: { name: 'r', namespace: 'ns', uid: 'u', resourceVersion: '7', labels: { team: 'a' }, annotations: { [LAST_APPLIED]: '{"spec":{"prompt":"long"}}', note: 'kept' }, managedFields },
      spec: { harness: 'claude', prompt: 'long' }, status: { phase: 'Running' },
    };
    expect(leanObject(run)).toEqual({ ...run, metadata: { name: 'r', namespace: 'ns', uid: 'u', resourceVersion: '7', labels: { team: 'a' }, annotations: { note: 'kept' } } });
    const bare = leanObject({ metadata: { name: 'r', annotations: { [LAST_APPLIED]: '{}' } } });
    expect(bare.metadata).toEqual({ name: 'r' });
  });

  it('a driver Pod keeps what the dispatcher reads and drops its spec (the bulk of it)', () => {
    const settings = dispatcherConfig({ TCAB_NAMESPACE: 'ns', TCAB_DRIVER_IMAGE: 'driver:x', TCAB_NATS_URL: 'nats://127.0.0.1:4222' });
    const pod: V1Pod = buildDriverPod({ namespace: 'ns', name: 'r', uid: 'run-uid' }, RunSpec.parse({ harness: 'claude', model: 'm', prompt: 'p' }), settings, ['ANTHROPIC_API_KEY']);
    pod.metadata = { ...pod.metadata, uid: 'pod-uid', resourceVersion: '9', creationTimestamp: new Date(0), deletionTimestamp: new Date(1), managedFields };
    pod.spec!.nodeName = 'node-1';
    pod.status = { phase: 'Failed', reason: 'DeadlineExceeded', conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI' }], containerStatuses: [{ name: 'driver', image: 'i', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 3 } } }] };
    const lean = leanPod(pod);
    const { name, namespace, uid, resourceVersion, creationTimestamp, deletionTimestamp, labels, ownerReferences } = pod.metadata;
    expect(lean).toEqual({ metadata: { name, namespace, uid, resourceVersion, creationTimestamp, deletionTimestamp, labels, ownerReferences }, spec: { nodeName: 'node-1' }, status: pod.status });
    expect(lean.metadata!.ownerReferences![0]!.uid).toBe('run-uid');
    expect(JSON.stringify(lean).length).toBeLessThan(JSON.stringify(pod).length / 2);
    expect(leanPod({ metadata: { name: 'p' } }).spec).toBeUndefined();
  });

  it('a driver Pod of an egress profile keeps its hosts annotation (and no other), so a status rebuilt from it says what the run could reach', () => {
    const recorded = JSON.stringify({ profile: 'open', hosts: ['*'] });
    const pod: V1Pod = { metadata: { name: 'p', labels: { [EGRESS_LABEL]: 'open' }, annotations: { [EGRESS_ANNOTATION]: recorded, other: 'dropped' } } };
    expect(leanPod(pod).metadata!.annotations).toEqual({ [EGRESS_ANNOTATION]: recorded });
    expect(egressOfPod(leanPod(pod))).toEqual({ profile: 'open', hosts: ['*'] });
  });

  it('an Event keeps its subject, reason, message and times', () => {
    const event: CoreV1Event = {
      metadata: { name: 'e', namespace: 'ns', uid: 'e-uid', resourceVersion: '3', creationTimestamp: new Date(0), managedFields },
      involvedObject: { kind: 'Pod', uid: 'pod-uid', name: 'p' }, reason: 'Pulled', message: 'pulled', type: 'Normal',
      lastTimestamp: new Date(2), firstTimestamp: new Date(1), count: 2, source: { component: 'kubelet', host: 'node-1' }, reportingComponent: 'kubelet',
    };
    expect(leanEvent(event)).toEqual({
      metadata: { name: 'e', namespace: 'ns', uid: 'e-uid', resourceVersion: '3', creationTimestamp: new Date(0) },
      involvedObject: event.involvedObject, reason: 'Pulled', message: 'pulled', type: 'Normal', lastTimestamp: new Date(2), eventTime: undefined, firstTimestamp: new Date(1), count: 2,
    });
  });
});
