// Issue 35 on the real node, through the chart as users install it: the bundled NATS as a JetStream cluster of 3
// (nats.bundled.replicas 3), the run stream kept on 3 servers. The server leading the stream is deleted while Runs
// publish into it: the stream goes on under a new leader, and no event and no result of any Run is lost or doubled.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { jetstreamManager } from '@nats-io/jetstream';
import type { V1Pod } from '@kubernetes/client-node';
import type { RunObject } from '../../kube/resources.ts';
import { connectNats, natsSettings } from '../../nats/settings.ts';
import type { NatsSettings } from '../../nats/settings.ts';
import { STREAM_NAME } from '../../nats/stream.ts';
import { READER_INBOX_PREFIX } from '../../nats/auth/index.ts';
import { createNamespace, kubectl, readRunUntil, waitFor } from '../cluster/support.ts';
import { pushImages, realNode } from '../cluster/real-node-context.ts';
import { RELEASE, forwardService, helmOf, installChart, writeReaderCreds } from './real-chart.ts';
import type { ClusterAccess } from './real-chart.ts';

const RUNS = 12;
const NATS_PODS = [0, 1, 2].map((i) => `${RELEASE}-tcab-nats-${i}`);

let ns: string;
let removeNs: () => Promise<void>;
let workDir: string;
const forwards: { close: () => void }[] = [];

const cluster = (): ClusterAccess => ({ kubeconfig: inject('kubeconfig'), binDir: inject('clusterBinDir') });

/** The reader credential through a port-forward to one NATS server (a new one each time: servers come and go here). */
async function reader(pod: string): Promise<NatsSettings> {
  const forward = await forwardService(cluster(), ns, pod, 4222, 60_000, 'pod');
  forwards.push(forward);
  return natsSettings(`nats://${forward.address}`, { credsFile: join(workDir, 'reader.creds'), inboxPrefix: READER_INBOX_PREFIX });
}

/** The run stream's replication as one server sees it: its leader and its replicas' state. */
async function streamCluster(settings: NatsSettings) {
  const nc = await connectNats(settings, { name: 'e2e-nats-cluster' });
  try {
    const info = await (await jetstreamManager(nc)).streams.info(STREAM_NAME);
    return { replicas: info.config.num_replicas, leader: info.cluster?.leader, peers: (info.cluster?.replicas ?? []).map((r) => ({ name: r.name, current: r.current })) };
  } finally {
    await nc.close();
  }
}

beforeAll(async () => {
  ({ name: ns, remove: removeNs } = await createNamespace('natscluster', { driverPolicy: false }));
  workDir = mkdtempSync(join(tmpdir(), 'tcab-nats-cluster-e2e-'));
  const images = await pushImages(['driver', 'dispatcher', 'nats', 'npm-cache', 'egress-proxy'], realNode());
  const script = { steps: [{ text: 'done' }] };
  const install = await installChart(cluster(), { namespace: ns, images, providerKey: 'sk-ant-fake-natscluster-0000', natsReplicas: 3, stubScripts: { gg: script, claude: script }, workDir, timeoutSeconds: 300 });
  expect(install.code, install.stderr).toBe(0);
  await writeReaderCreds(cluster(), ns, join(workDir, 'reader.creds'));
}, 900_000);

afterAll(async () => {
  for (const f of forwards) f.close();
  await helmOf(cluster())(['uninstall', RELEASE, '-n', ns, '--wait']).catch(() => undefined);
  await removeNs?.();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('the bundled NATS as a JetStream cluster of 3', () => {
  it('keeps the run stream on 3 servers; the stream leader deleted mid-run loses no event and no result', async () => {
    const pods = await waitFor<V1Pod>(`/api/v1/namespaces/${ns}/pods`, (all) => all.length === 3 && all.every((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')), 120_000, { labelSelector: 'app.kubernetes.io/component=nats' });
    expect(pods.map((p) => p.metadata!.name).sort()).toEqual(NATS_PODS);
    // The dispatcher made (or scaled) the stream to 3 replicas, all current.
    const before = await vi.waitFor(async () => {
      const seen = await streamCluster(await reader(NATS_PODS[0]!));
      expect(seen.replicas).toBe(3);
      expect(seen.peers).toHaveLength(2);
      expect(seen.peers.every((p) => p.current)).toBe(true);
      return seen;
    }, { timeout: 60_000, interval: 1000 });
    const leader = before.leader!;
    expect(NATS_PODS).toContain(leader);

    // Runs publish while the stream's leader goes: deleted as the first Runs are dispatched.
    const runs = Array.from({ length: RUNS }, (_, i) => ({ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name: `nc-${i}`, namespace: ns }, spec: { harness: 'gg', model: 'claude-sonnet-4-5', prompt: `say hi ${i}`, maxRuntimeSeconds: 300 } }));
    const applied = await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: runs }));
    expect(applied.code, applied.stderr).toBe(0);
    await waitFor<RunObject>(`/apis/tcab.dev/v1alpha1/namespaces/${ns}/runs`, (all) => all.some((r) => ['Running', 'Succeeded'].includes(r.status?.phase ?? '')), 120_000);
    const deletedAt = Date.now();
    const deleted = await kubectl(['delete', 'pod', leader, '-n', ns, '--wait=false']);
    expect(deleted.code, deleted.stderr).toBe(0);

    const done = await waitFor<RunObject>(`/apis/tcab.dev/v1alpha1/namespaces/${ns}/runs`, (all) => all.length === RUNS && all.every((r) => ['Succeeded', 'Failed', 'Cancelled'].includes(r.status?.phase ?? '')), 600_000);
    const finishedMs = Date.now() - deletedAt;
    expect(done.filter((r) => r.status?.phase !== 'Succeeded').map((r) => [r.metadata!.name, r.status?.message]), JSON.stringify(done.map((r) => r.status?.attempts))).toEqual([]);

    // A new leader, and the deleted server back and current again.
    const after = await vi.waitFor(async () => {
      const other = NATS_PODS.find((p) => p !== leader)!;
      const seen = await streamCluster(await reader(other));
      expect(NATS_PODS).toContain(seen.leader);
      expect(seen.peers.every((p) => p.current)).toBe(true);
      expect([seen.leader, ...seen.peers.map((p) => p.name)].sort()).toEqual(NATS_PODS);
      return seen;
    }, { timeout: 120_000, interval: 1000 });

    // Every Run's stream: its events numbered from 1 without a gap, each once, and exactly one result.
    const settings = await reader(after.leader!);
    let events = 0;
    for (const run of done) {
      const items = await readRunUntil(settings, `${ns}_${run.metadata!.name}`, (all) => all.some((i) => i.kind === 'result'), 60_000);
      const results = items.filter((i) => i.kind === 'result');
      expect(results).toHaveLength(1);
      const result = results[0]!.kind === 'result' ? results[0]!.result : undefined;
      const seqs = items.flatMap((i) => (i.kind === 'event' && i.seq > 0 ? [i.seq] : []));
      expect(seqs, run.metadata!.name).toEqual(Array.from({ length: result!.event_count }, (_, i) => i + 1));
      events += seqs.length;
    }
    process.stderr.write(`e2e nats cluster: ${RUNS} runs, ${events} driver events, stream leader ${leader} deleted -> new leader ${after.leader}; every run final ${finishedMs} ms after the deletion; 0 events lost, 0 duplicate results\n`);
  }, 1_200_000);
});
