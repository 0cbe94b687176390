// Two dispatcher replicas (real `tcab-dispatcher` processes on the host): the Lease holder is killed with SIGKILL
// 20 times while Runs are being dispatched. Every Run still ends, no Run ever gets a second Pod, and a new leader
// claims within 15 s of each kill. The Runs' Pods are real (a busybox short job on the real node): their starts,
// exits and deletions reach the replicas as the kubelet reports them.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Lease, V1Pod } from '@kubernetes/client-node';
import { inject } from 'vitest';
import type { RunObject } from '../../kube/resources.ts';
import { NatsServer, freePort } from '../support/nats-server.ts';
import { isFinal } from '../../dispatcher/status/transitions.ts';
import { realNode } from './real-node-context.ts';
import { createNamespace, kubectl, waitFor, watchAll } from './support.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const RUNS = 120;
const KILLS = 20;
let ns: string;
let removeNs: () => Promise<void>;
let nats: NatsServer;
const replicas = new Map<string, ChildProcess>();
let generation = 0;

async function startReplica(): Promise<string> {
  const identity = `dispatcher-${++generation}`;
  const child = spawn(process.execPath, [join(ROOT, 'dispatcher/main.ts')], {
    env: {
      PATH: process.env.PATH,
      KUBECONFIG: inject('kubeconfig'),
      TCAB_DISPATCHER_ID: identity,
      TCAB_NAMESPACE: ns,
      TCAB_NATS_URL: nats.url,
      TCAB_DRIVER_IMAGE: realNode().images.shortJob,
      TCAB_DRIVER_CPU: '10m',
      TCAB_DRIVER_MEMORY: '32Mi',
      TCAB_DISPATCHER_MAX_INFLIGHT: '4',
      TCAB_API_KEY_SECRETS: JSON.stringify([{ env: 'ANTHROPIC_API_KEY', secret: 'fake-keys', key: 'anthropic' }]),
      TCAB_API_PORT: String(await freePort()),
      TCAB_API_HOST: '127.0.0.1',
      TCAB_API_TOKEN: 'fake-api-token',
      TCAB_LEASE_DURATION_SECONDS: '5',
      TCAB_LEASE_RETRY_MS: '1000',
      TCAB_RESULT_GRACE_SECONDS: '0',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.resume();
  replicas.set(identity, child);
  return identity;
}

beforeAll(async () => {
  ({ name: ns, remove: removeNs } = await createNamespace('failover'));
  expect((await kubectl(['apply', '-f', join(ROOT, 'deploy', 'crds')])).code).toBe(0);
  await kubectl(['wait', '--for=condition=Established', 'crd/runs.tcab.dev', '--timeout=30s']);
  await kubectl(['create', 'secret', 'generic', 'fake-keys', '-n', ns, '--from-literal=anthropic=sk-fake-a']);
  nats = await NatsServer.start();
});

afterAll(async () => {
  for (const child of replicas.values()) child.kill('SIGKILL');
  await nats?.stop();
  await removeNs();
});

describe('dispatcher leader election', () => {
  it(`survives ${KILLS} SIGKILLs of the leader mid-dispatch: 0 duplicate Pods, 0 lost Runs, failover < 15 s`, async () => {
    // Every Pod ever made for a Run, from a watch that runs for the whole test.
    const podsByRun = new Map<string, Set<string>>();
    const watch = await watchAll<V1Pod>(`/api/v1/namespaces/${ns}/pods`, { labelSelector: 'tcab.dev/run' }, (_type, pod) => {
      const runName = pod.metadata!.labels!['tcab.dev/run']!;
      podsByRun.set(runName, (podsByRun.get(runName) ?? new Set()).add(pod.metadata!.uid!));
    });
    const runs = Array.from({ length: RUNS }, (_, i) => ({ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name: `f-${i}`, namespace: ns }, spec: { harness: 'gg', model: 'claude-sonnet-4-5', prompt: 'p' } }));
    await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: runs }));
    await startReplica();
    await startReplica();

    const failovers: number[] = [];
    for (let kill = 0; kill < KILLS; kill++) {
      // Wait for a live leader that is dispatching (a Run holds a slot), then kill it outright.
      await waitFor<RunObject>(`/apis/tcab.dev/v1alpha1/namespaces/${ns}/runs`, (all) => all.some((r) => ['Dispatched', 'Starting', 'Running'].includes(r.status?.phase ?? '')) || all.every((r) => r.status?.phase && !['Pending', 'Dispatched', 'Starting', 'Running'].includes(r.status.phase)), 60_000);
      const [lease] = await waitFor<V1Lease>(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, (items) => items.some((l) => l.metadata?.name === 'tcab-dispatcher' && replicas.has(l.spec?.holderIdentity ?? '')), 30_000, { fieldSelector: 'metadata.name=tcab-dispatcher' });
      const leader = lease!.spec!.holderIdentity;
      const child = replicas.get(leader!)!;
      child.kill('SIGKILL');
      await once(child, 'exit');
      replicas.delete(leader!);
      const killedAt = Date.now();
      await startReplica(); // two replicas again, as a Deployment would restore
      // The next leader: a different identity holds the Lease and a Run changes phase under it.
      await waitFor<V1Lease>(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, (items) => items.some((l) => l.metadata?.name === 'tcab-dispatcher' && l.spec?.holderIdentity !== leader && replicas.has(l.spec?.holderIdentity ?? '')), 30_000);
      failovers.push(Date.now() - killedAt);
    }
    const finished = await waitFor<RunObject>(`/apis/tcab.dev/v1alpha1/namespaces/${ns}/runs`, (all) => all.length === RUNS && all.every((r) => isFinal(r.status ?? {})), 600_000);
    watch.stop();
    process.stderr.write(`failover ms: ${JSON.stringify(failovers)}\n`);
    expect(finished).toHaveLength(RUNS);
    const duplicates = [...podsByRun.entries()].filter(([, uids]) => uids.size > 1).map(([run]) => run);
    expect(duplicates).toEqual([]);
    expect(podsByRun.size).toBe(RUNS); // every Run got its one Pod
    expect(Math.max(...failovers)).toBeLessThan(15_000);
  }, 900_000);
});
