// The dispatcher's memory on the real node: what it keeps per Run goes once the Run is over (final, its Pod torn
// down) or deleted, so a long-lived leader does not grow with the Runs it has seen; and its Event cache holds only
// Events about Pods (the informer is selected), never the namespace's other Events (its own Events on Runs
// included). The system-event publisher is a recorder at the edge: NATS is the subject of test/cluster/dispatcher.test.ts.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { HarnessEvent } from '../../shared/events.ts';
import { createLogger } from '../../shared/log.ts';
import { realNode } from '../../test/cluster/real-node-context.ts';
import { clusterConfig, createNamespace, kubectl, waitFor } from '../../test/cluster/support.ts';
import { dispatcherConfig } from '../config.ts';
import type { RunObject } from '../../kube/resources.ts';
import { isFinal } from '../status/transitions.ts';
import { Dispatcher } from './dispatcher.ts';
import { dispatcherMetrics } from './metrics.ts';

let ns: string;
let removeNs: () => Promise<void>;
let dispatcher: Dispatcher;
const logs: string[] = [];
const published = new Map<string, HarnessEvent[]>();

beforeAll(async () => {
  ({ name: ns, remove: removeNs } = await createNamespace('memory'));
  expect((await kubectl(['apply', '-f', join(import.meta.dirname, '..', '..', 'deploy', 'crds')])).code).toBe(0);
  await kubectl(['wait', '--for=condition=Established', 'crd/runs.tcab.dev', '--timeout=30s']);
  await kubectl(['create', 'secret', 'generic', 'fake-keys', '-n', ns, '--from-literal=anthropic=sk-fake-memory']);
  // Before the dispatcher starts: an Event about something other than a Pod, already there at the initial list.
  const unrelated = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'unrelated-before', namespace: ns }, involvedObject: { kind: 'ConfigMap', name: 'settings', namespace: ns }, reason: 'Updated', message: 'not about a Pod', type: 'Normal' };
  expect((await kubectl(['create', '-f', '-'], JSON.stringify(unrelated))).code).toBe(0);
  const settings = dispatcherConfig({
    TCAB_NAMESPACE: ns,
    TCAB_DRIVER_IMAGE: realNode().images.shortJob,
    TCAB_DRIVER_CPU: '10m',
    TCAB_DRIVER_MEMORY: '32Mi',
    TCAB_NATS_URL: 'nats://127.0.0.1:4222',
    TCAB_RESULT_GRACE_SECONDS: '0',
    TCAB_API_KEY_SECRETS: JSON.stringify([{ env: 'ANTHROPIC_API_KEY', secret: 'fake-keys', key: 'anthropic' }]),
  });
  const log = createLogger({ component: 'tcab-dispatcher', level: 'debug', destination: { write: (line: string) => void logs.push(line.trimEnd()) } });
  const events = { publish: async (runId: string, list: HarnessEvent[]) => void published.set(runId, [...(published.get(runId) ?? []), ...list]) };
  dispatcher = new Dispatcher({ config: clusterConfig(), settings, events, metrics: dispatcherMetrics(), log });
  await dispatcher.start();
  // Synced: every cache listed and watching (a CRD established a moment ago may answer its first list with 429).
  await vi.waitFor(() => expect(dispatcher.synced(), logs.join('\n')).toBe(true), { timeout: 30_000, interval: 50 });
  dispatcher.setLeading(true);
});

afterAll(async () => {
  await dispatcher?.stop();
  await removeNs?.();
});

const runsPath = () => `/apis/tcab.dev/v1alpha1/namespaces/${ns}/runs`;
const run = (name: string) => ({ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name, namespace: ns }, spec: { harness: 'claude', model: 'claude-sonnet-4-5', prompt: 'p', maxRuntimeSeconds: 60 } });

describe('dispatcher memory and caches', () => {
  it('per-Run memory grows while Runs are in play and is back to 0 once they are over, and after they are deleted', async () => {
    const names = ['mem-a', 'mem-b', 'mem-c'];
    expect(dispatcher.retained().runMemory).toBe(0);
    expect((await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: names.map(run) }))).code).toBe(0);
    // In play: claimed, statuses written, the kubelet's Events published.
    let peak = 0;
    const finished = await waitFor<RunObject>(runsPath(), (all) => {
      peak = Math.max(peak, dispatcher.retained().runMemory);
      return names.every((n) => isFinal(all.find((r) => r.metadata?.name === n)?.status ?? {}));
    }, 120_000);
    expect(peak, logs.join('\n')).toBeGreaterThan(0);
    // The short job publishes no result: each ended by the dispatcher after the (zero) grace.
    for (const n of names) expect(finished.find((r) => r.metadata?.name === n)?.status?.message).toMatch(/without publishing a result/);
    // Over: final and the Pod torn down (teardown published), then nothing of them is kept.
    await waitFor<V1Pod>(`/api/v1/namespaces/${ns}/pods`, (pods) => !pods.some((p) => p.metadata?.name?.startsWith('tcab-run-mem-')), 60_000);
    await vi.waitFor(() => expect(dispatcher.retained()).toMatchObject({ runMemory: 0, results: 0, runQueue: { waiting: 0, inFlight: 0, failing: 0 } }), { timeout: 30_000, interval: 100 });
    for (const n of names) expect(published.get(`${ns}_${n}`)?.map((e) => (e.type === 'system' ? `${e.stage}:${e.status}` : e.type))).toEqual(expect.arrayContaining(['start_container:completed', 'teardown:started', 'teardown:completed']));

    // A Run deleted as soon as the dispatcher holds something of it: its memory goes with it.
    await kubectl(['apply', '-f', '-'], JSON.stringify(run('mem-deleted')));
    await vi.waitFor(() => expect(dispatcher.retained().runMemory).toBeGreaterThan(0), { timeout: 60_000, interval: 50 });
    await kubectl(['delete', 'runs', '--all', '-n', ns, '--wait=false']);
    await waitFor<RunObject>(runsPath(), (all) => all.length === 0, 60_000);
    await vi.waitFor(() => expect(dispatcher.retained()).toMatchObject({ runMemory: 0, results: 0, runQueue: { waiting: 0, inFlight: 0, timers: 0, failing: 0 } }), { timeout: 30_000, interval: 100 });
  }, 300_000);

  it('the Event cache holds Events about Pods only: not the unrelated ones, not its own Events on Runs', async () => {
    // Made after the watch started (the earlier one was there at the initial list): neither reaches the cache.
    const unrelated = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'unrelated-after', namespace: ns }, involvedObject: { kind: 'ConfigMap', name: 'settings', namespace: ns }, reason: 'Updated', message: 'not about a Pod', type: 'Normal' };
    expect((await kubectl(['create', '-f', '-'], JSON.stringify(unrelated))).code).toBe(0);
    // A Pod Event after it: once the cache has it, the watch has delivered everything before it that it would.
    expect((await kubectl(['apply', '-f', '-'], JSON.stringify(run('mem-events')))).code).toBe(0);
    const podEventsBefore = dispatcher.retained().kubeEvents.cached;
    await vi.waitFor(() => expect(dispatcher.retained().kubeEvents.cached).toBeGreaterThan(podEventsBefore), { timeout: 60_000, interval: 100 });
    const inNamespace = JSON.parse((await kubectl(['get', 'events', '-n', ns, '-o', 'json'])).stdout) as { items: { involvedObject: { kind: string } }[] };
    const kinds = new Set(inNamespace.items.map((e) => e.involvedObject.kind));
    expect([...kinds]).toEqual(expect.arrayContaining(['ConfigMap', 'Run', 'Pod'])); // the namespace has all three
    expect(dispatcher.retained().kubeEvents.kinds).toEqual(['Pod']);
  }, 120_000);
});
