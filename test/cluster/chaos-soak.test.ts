// A chaos soak on the real node (issue 35): gg Runs through real driver Pods while faults are injected on real parts:
// driver Pods deleted and evicted mid-run, the dispatcher leader SIGKILLed (two replicas, as host processes, a new one
// started after each kill, as a Deployment would). Afterwards every Run is final; every attempt that ended was an
// infrastructure failure that was retried (or the Run says its attempts are used up); each attempt's events are
// numbered from 1 without a gap, each attempt that published a result published exactly one, and a Succeeded Run's
// usage is its last attempt's result's. TCAB_SOAK_RUNS sets the size (`npm run soak`: 300); the suite runs a bounded one.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import type { V1Lease, V1Pod } from '@kubernetes/client-node';
import type { RunObject } from '../../kube/resources.ts';
import { isFinal } from '../../dispatcher/status/transitions.ts';
import { startStubModelServer } from '../../driver/stub-models/server.ts';
import type { StubModelServer } from '../../driver/stub-models/server.ts';
import { NatsServer, freePort } from '../support/nats-server.ts';
import { clusterConfig, createNamespace, kubectl, waitFor } from './support.ts';
import { natsSettings } from '../../nats/settings.ts';
import { ggDriverEnv } from './gg-driver-env.ts';
import { auditSoak, runReader } from './soak-audit.ts';
import { pollUntil } from '../support/poll.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const RUNS = Number(process.env.TCAB_SOAK_RUNS ?? 24);
const FAULT_EVERY_MS = Number(process.env.TCAB_SOAK_FAULT_EVERY_MS ?? 3000);
const FAULTS = ['delete', 'evict', 'leader'] as const;
const SOAK_TIMEOUT_MS = 1_800_000;
type FaultKind = (typeof FAULTS)[number];

let ns: string;
let removeNs: () => Promise<void>;
let nats: NatsServer;
let stub: StubModelServer;
let env: Record<string, string>;
const replicas = new Map<string, ChildProcess>();
let generation = 0;

async function startReplica(): Promise<string> {
  const identity = `soak-${++generation}`;
  const child = spawn(process.execPath, [join(ROOT, 'dispatcher/main.ts')], {
    env: {
      ...env,
      PATH: process.env.PATH,
      KUBECONFIG: inject('kubeconfig'),
      TCAB_DISPATCHER_ID: identity,
      // The dispatcher (a host process) reaches NATS on loopback; its driver Pods, through the node's bridge.
      TCAB_NATS_URL: nats.url,
      TCAB_API_PORT: String(await freePort()),
      TCAB_API_HOST: '127.0.0.1',
      TCAB_METRICS_PORT: String(await freePort()),
      TCAB_API_TOKEN: 'fake-api-token',
      TCAB_LEASE_DURATION_SECONDS: '5',
      TCAB_LEASE_RETRY_MS: '1000',
      TCAB_RESULT_GRACE_SECONDS: '10',
      TCAB_RETRY_BACKOFF_SECONDS: '1',
      TCAB_RETRY_BACKOFF_MAX_SECONDS: '4',
      TCAB_DISPATCHER_MAX_INFLIGHT: '6',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.resume();
  replicas.set(identity, child);
  return identity;
}

beforeAll(async () => {
  ({ name: ns, remove: removeNs } = await createNamespace('soak'));
  expect((await kubectl(['apply', '-f', join(ROOT, 'deploy', 'crds')])).code).toBe(0);
  await kubectl(['wait', '--for=condition=Established', 'crd/runs.tcab.dev', '--timeout=30s']);
  nats = await NatsServer.start();
  // A session that takes a few seconds (a command), so faults find drivers mid-run.
  stub = await startStubModelServer({ script: { steps: [{ tool: { name: 'shell', args: { command: 'sleep 6; echo done' } } }, { text: 'All done.' }] } });
  await kubectl(['create', 'secret', 'generic', 'provider-keys', '-n', ns, '--from-literal=anthropic=sk-ant-fake-soak-0000']);
  const forPods = await ggDriverEnv({ namespace: ns, natsUrl: nats.url, stubUrl: stub.url });
  env = { ...forPods, TCAB_DRIVER_NATS_URL: forPods.TCAB_NATS_URL! };
});

afterAll(async () => {
  for (const child of replicas.values()) child.kill('SIGKILL');
  await stub?.close();
  await nats?.stop();
  await removeNs();
});

describe('chaos soak', () => {
  it(`${RUNS} gg Runs with driver Pods deleted and evicted and the dispatcher leader SIGKILLed: every Run final, only infrastructure retried, every attempt's stream whole`, async () => {
    const runsPath = `/apis/tcab.dev/v1alpha1/namespaces/${ns}/runs`;
    const runs = Array.from({ length: RUNS }, (_, i) => ({ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name: `s-${i}`, namespace: ns }, spec: { harness: 'gg', model: 'claude-sonnet-4-5', prompt: `soak ${i}`, maxRuntimeSeconds: 300, retries: 3 } }));
    const started = Date.now();
    await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: runs }));
    await startReplica();
    await startReplica();

    const core = clusterConfig().makeApiClient(CoreV1Api);
    const faults: { kind: FaultKind; target: string; at: number; recoveredMs?: number }[] = [];
    const allFinal = async () => {
      const list = JSON.parse((await kubectl(['get', 'runs', '-n', ns, '-o', 'json'])).stdout) as { items: RunObject[] };
      return list.items.length === RUNS && list.items.every((r) => isFinal(r.status ?? {}));
    };
    /** One fault: the dispatcher leader SIGKILLed (a new replica started), or a running driver Pod deleted or evicted. */
    const injectFault = async (round: number) => {
      const kind = FAULTS[round % FAULTS.length]!;
      const at = Date.now();
      if (kind === 'leader') {
        const lease = JSON.parse((await kubectl(['get', 'lease', 'tcab-dispatcher', '-n', ns, '-o', 'json'])).stdout || '{}') as V1Lease;
        const leader = lease.spec?.holderIdentity;
        const child = leader ? replicas.get(leader) : undefined;
        if (!leader || !child) return;
        child.kill('SIGKILL');
        await once(child, 'exit');
        replicas.delete(leader);
        await startReplica();
        const [next] = await waitFor<V1Lease>(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, (items) => items.some((l) => l.metadata?.name === 'tcab-dispatcher' && l.spec?.holderIdentity !== leader && replicas.has(l.spec?.holderIdentity ?? '')), 60_000, { fieldSelector: 'metadata.name=tcab-dispatcher' });
        faults.push({ kind, target: leader, at, recoveredMs: Date.now() - at });
        // A live replica other than the one killed holds the Lease now.
        expect(next!.spec!.holderIdentity).not.toBe(leader);
        expect(replicas.has(next!.spec!.holderIdentity!)).toBe(true);
        return;
      }
      const pods = (await core.listNamespacedPod({ namespace: ns, labelSelector: 'tcab.dev/run' })).items.filter((p: V1Pod) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);
      const pod = pods[round % Math.max(1, pods.length)];
      if (!pod) return;
      const name = pod.metadata!.name!;
      if (kind === 'delete') await core.deleteNamespacedPod({ name, namespace: ns }).catch(() => undefined);
      else await core.createNamespacedPodEviction({ name, namespace: ns, body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: ns } } }).catch(() => undefined);
      faults.push({ kind, target: name, at });
    };
    // Faults in turn, one every FAULT_EVERY_MS, until every Run is final (or a minute before the test's timeout).
    let round = 0;
    await pollUntil(`every Run final, a fault every ${FAULT_EVERY_MS} ms`, async () => {
      if (await allFinal()) return true;
      await new Promise((resolve) => setTimeout(resolve, FAULT_EVERY_MS));
      await injectFault(round++);
      return false;
    }, { timeoutMs: SOAK_TIMEOUT_MS - 60_000 - (Date.now() - started), intervalMs: 0, retryIf: () => false });
    const done = await waitFor<RunObject>(runsPath, (all) => all.length === RUNS && all.every((r) => isFinal(r.status ?? {})), 60_000);
    const wallMs = Date.now() - started;

    const audit = await auditSoak(done, ns, runReader(natsSettings(nats.url)), 4);
    const byKind = Object.fromEntries(FAULTS.map((k) => [k, faults.filter((f) => f.kind === k).length]));
    const leaderRecovery = faults.filter((f) => f.kind === 'leader').map((f) => f.recoveredMs!);
    process.stderr.write(`chaos soak: ${RUNS} runs, ${audit.attempts} attempts (${audit.retried} retried: ${JSON.stringify(audit.retriedBy)}), faults ${JSON.stringify(byKind)}, leader failover ms ${JSON.stringify(leaderRecovery)}, attempts used up ${audit.exhausted.length}, events read ${audit.eventsRead}, events lost (gaps) ${audit.gaps}, duplicate results ${audit.duplicateResults}, wall ${Math.round(wallMs / 1000)} s\n`);
    expect(audit.gaps).toBe(0);
    expect(audit.duplicateResults).toBe(0);
    expect(faults.length).toBeGreaterThan(0);
    expect(audit.retried).toBeGreaterThan(0);
    expect(Math.max(0, ...leaderRecovery)).toBeLessThan(30_000);
  }, SOAK_TIMEOUT_MS);
});
