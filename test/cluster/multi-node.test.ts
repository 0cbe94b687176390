// Issue 35, parts 2 and 4: a cluster of three real nodes (test/cluster/node/with-plane.ts upPlaneWithRealNodes),
// each a kubelet + containerd + kube-proxy + kube-router in its own network namespace with a Pod CIDR of its own,
// linked to each other directly; this file's own control plane (the suite's shared one and its node are not
// touched). The chart as users install it on it (two dispatcher replicas, NATS as a JetStream cluster of 3), gg
// Runs against the in-cluster stub, and two faults on real parts while they run: a node drained (kubectl drain:
// evictions through the Eviction API and the PDBs) and a node killed outright (its kubelet, containerd, shims and
// Pods SIGKILLed, its links cut). Afterwards every Run is final and the audit of chaos-soak.test.ts holds.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunObject } from '../../dispatcher/kube/resources.ts';
import { isFinal } from '../../dispatcher/status/transitions.ts';
import { READER_INBOX_PREFIX } from '../../nats/auth/index.ts';
import { natsSettings } from '../../nats/settings.ts';
import type { NatsSettings } from '../../nats/settings.ts';
import { forwardService, writeReaderCreds } from '../e2e/real-chart.ts';
import { installChartOnNodes } from '../e2e/chart-on-nodes.ts';
import type { ClusterAccess } from '../e2e/real-chart.ts';
import { waitFor } from './processes.ts';
import { BUSYBOX_IMAGE } from './node/real-node.ts';
import { upPlaneWithRealNodes } from './node/with-plane.ts';
import type { PlaneWithNodes } from './node/with-plane.ts';
import { auditSoak, runReader } from './soak-audit.ts';

/** gg Runs in the soak (TCAB_MULTI_NODE_RUNS; `npm run soak` sets 300). */
const RUNS = Number(process.env.TCAB_MULTI_NODE_RUNS ?? 30);
const RETRIES = 3;

const NODES = ['tcab-mn-1', 'tcab-mn-2', 'tcab-mn-3'];
const NS = 'multi-node';

let cluster: PlaneWithNodes;

// maxBuffer: 300 Runs as JSON are more than execFileSync's 1 MiB default (a waitFor would read "not yet" for ever).
const kubectl = (args: string[], input?: string) => execFileSync(join(cluster.plane.binDir, 'kubectl'), ['--kubeconfig', cluster.plane.kubeconfig, ...args], { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 256 << 20 });
const apply = (manifest: object) => kubectl(['apply', '-f', '-'], JSON.stringify(manifest));

interface PodJson {
  spec: { nodeName?: string };
  status: { phase?: string; podIP?: string; conditions?: { type: string; status: string }[] };
}
const pod = (name: string) => JSON.parse(kubectl(['get', 'pod', name, '-n', NS, '-o', 'json'])) as PodJson;
const ready = (p: PodJson) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

function busybox(name: string, nodeName: string, script: string, restartPolicy: 'Never' | 'Always' = 'Never', labels: Record<string, string> = {}): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels },
    spec: {
      nodeName,
      restartPolicy,
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'c', image: BUSYBOX_IMAGE, command: ['/bin/sh', '-c', script], readinessProbe: restartPolicy === 'Always' ? { tcpSocket: { port: 8080 }, periodSeconds: 1 } : undefined }],
    },
  };
}

/** Runs a busybox script on `nodeName` to completion; its log. */
async function runOn(name: string, nodeName: string, script: string): Promise<string> {
  apply(busybox(name, nodeName, script));
  await waitFor(`pod ${name} to finish`, async () => ['Succeeded', 'Failed'].includes(pod(name).status.phase ?? ''), { timeoutMs: 90_000 });
  return kubectl(['logs', name, '-n', NS]);
}

beforeAll(async () => {
  cluster = await upPlaneWithRealNodes(NODES, { taint: false, nodeLostAfterSeconds: 15 });
  kubectl(['create', 'namespace', NS]);
}, 300_000);

afterAll(async () => {
  await cluster?.down();
});

describe('three real nodes', () => {
  // Its bare Pods (no controller) would stop a later drain of their node.
  afterAll(() => {
    kubectl(['delete', 'namespace', NS, '--wait=true', '--timeout=120s']);
  });

  it('registers three Ready nodes, each with its own node IP and Pod CIDR', () => {
    const nodes = JSON.parse(kubectl(['get', 'nodes', '-o', 'json'])) as { items: { metadata: { name: string }; status: { addresses: { type: string; address: string }[]; conditions: { type: string; status: string }[] } }[] };
    expect(nodes.items.map((n) => n.metadata.name).sort()).toEqual(NODES);
    for (const n of nodes.items) expect(n.status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
    const ips = nodes.items.map((n) => n.status.addresses.find((a) => a.type === 'InternalIP')?.address);
    expect(new Set(ips).size).toBe(3);
    expect(cluster.nodes.map((n) => n.podCidr)).toEqual(['198.18.0.0/24', '198.18.1.0/24', '198.18.2.0/24']);
  });

  it('carries Pod traffic across nodes without NAT: Pod to Pod, Pod to Service, and names through the one CoreDNS', async () => {
    // A server on the third node answers with its hostname (the Pod's name).
    apply(busybox('server', NODES[2]!, 'exec nc -ll -p 8080 -e /bin/hostname', 'Always', { app: 'server' }));
    apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'server', namespace: NS }, spec: { selector: { app: 'server' }, ports: [{ port: 80, targetPort: 8080 }] } });
    await waitFor('the server Pod to be Ready', async () => ready(pod('server')), { timeoutMs: 90_000 });
    const server = pod('server');
    expect(server.spec.nodeName).toBe(NODES[2]);
    expect(server.status.podIP).toMatch(/^198\.18\.2\./);
    // The other nodes' Pods reach it directly, through its ClusterIP and by name (CoreDNS runs on the first node).
    for (const [i, nodeName] of [[0, NODES[0]!], [1, NODES[1]!]] as const) {
      const log = await runOn(`client-${i}`, nodeName, [
        `echo direct=$(nc -w 5 ${server.status.podIP} 8080 </dev/null)`,
        // busybox in a scratch image resolves through its own nslookup only (no NSS): the last Address is the answer.
        `svc=$(nslookup server.${NS}.svc.cluster.local | awk '/^Address/ { a = $2 } END { print a }')`,
        'echo service=$(nc -w 5 "$svc" 80 </dev/null) svc=$svc',
        `echo ip=$(ip -4 -o addr show dev eth0 | awk '{print $4}')`,
      ].join('\n'));
      expect(log).toContain('direct=server');
      expect(log).toMatch(/service=server svc=198\.18\.1(2[89]|3\d|4[0-3])\.\d+/);
      expect(log).toMatch(new RegExp(`ip=198\\.18\\.${i}\\.\\d+/24`));
    }
  });
});

interface PodList {
  items: { metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string }; spec: { nodeName?: string }; status: { phase?: string; conditions?: { type: string; status: string }[]; containerStatuses?: { state?: { running?: { startedAt?: string } } }[] } }[];
}
const podsIn = (namespace: string, selector: string): PodList['items'] => (JSON.parse(kubectl(['get', 'pods', '-n', namespace, '-l', selector, '-o', 'json'])) as PodList).items;
const runsIn = (namespace: string): RunObject[] => (JSON.parse(kubectl(['get', 'runs', '-n', namespace, '-o', 'json'])) as { items: RunObject[] }).items;
const RUN_LABEL = 'tcab.dev/run';
const ATTEMPT_LABEL = 'tcab.dev/attempt';

describe('the chart on three nodes: a node drained and a node killed while Runs run', () => {
  const CHART_NS = 'tcab-chaos';
  let workDir: string;
  let access: ClusterAccess;
  const closers: (() => void)[] = [];

  beforeAll(async () => {
    access = { kubeconfig: cluster.plane.kubeconfig, binDir: cluster.plane.binDir };
    workDir = mkdtempSync(join(tmpdir(), 'tcab-multi-node-'));
    kubectl(['create', 'namespace', CHART_NS]);
    // A session that takes a few seconds (a command), so the faults find drivers mid-run.
    const script = { steps: [{ tool: { name: 'shell', args: { command: 'sleep 5; echo done' } } }, { text: 'All done.' }] };
    const install = await installChartOnNodes(cluster.nodes, access, {
      namespace: CHART_NS,
      providerKey: 'sk-ant-fake-multinode-0000',
      natsReplicas: 3,
      stubScripts: { gg: script, claude: script },
      workDir,
      timeoutSeconds: 600,
      overrides: {
        dispatcher: { replicas: 2, maxInFlight: 9, retry: { backoffSeconds: 1, backoffMaxSeconds: 5, imagePullGraceSeconds: 60 } },
        // A lost node's driver Pods go 5 s after it is declared unreachable (15 s of silence here), not 300 s.
        driver: { nodeLostTolerationSeconds: 5 },
      },
    });
    expect(install.code, install.stderr).toBe(0);
    // The stub models on the first node, which no fault touches: a Run must not fail because its model went away.
    kubectl(['patch', 'deployment', 'stub-models', '-n', CHART_NS, '--type', 'merge', '-p', JSON.stringify({ spec: { template: { spec: { nodeSelector: { 'kubernetes.io/hostname': NODES[0] } } } } })]);
    kubectl(['rollout', 'status', 'deployment/stub-models', '-n', CHART_NS, '--timeout=300s']);
    await writeReaderCreds(access, CHART_NS, join(workDir, 'reader.creds'));
  }, 1_200_000);

  afterAll(() => {
    for (const close of closers) close();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  /** The dispatcher replica holding the Lease, and its node. */
  const leader = () => {
    const holder = kubectl(['get', 'lease', 'tcab-dispatcher', '-n', CHART_NS, '-o', 'jsonpath={.spec.holderIdentity}']).trim();
    const node = podsIn(CHART_NS, 'app.kubernetes.io/component=dispatcher').find((p) => p.metadata.name === holder)?.spec.nodeName;
    return { holder, node };
  };
  const drivers = () => podsIn(CHART_NS, RUN_LABEL).filter((p) => p.status.phase === 'Running' && !p.metadata.deletionTimestamp);

  it('spreads the replicas: two dispatchers on two nodes, the three NATS servers on three', () => {
    const dispatchers = podsIn(CHART_NS, 'app.kubernetes.io/component=dispatcher');
    expect(dispatchers).toHaveLength(2);
    expect(new Set(dispatchers.map((p) => p.spec.nodeName)).size).toBe(2);
    const nats = podsIn(CHART_NS, 'app.kubernetes.io/component=nats');
    expect(nats).toHaveLength(3);
    expect(new Set(nats.map((p) => p.spec.nodeName)).size).toBe(3);
  });

  it(`${RUNS} gg Runs through a drain and a node's death: every Run final, each fault's Runs retried, no event or result lost or doubled`, async () => {
    const runs = Array.from({ length: RUNS }, (_, i) => ({ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name: `mn-${i}`, namespace: CHART_NS }, spec: { harness: 'gg', model: 'claude-sonnet-4-5', prompt: `multi-node ${i}`, maxRuntimeSeconds: 300, retries: RETRIES } }));
    const started = Date.now();
    kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: runs }));
    const seenNodes = new Set<string>();
    const faults: { kind: 'drain' | 'kill'; node: string; at: number; pods: { run: string; attempt: number }[]; recoveredMs?: number; dispatcherLeader?: boolean }[] = [];

    /**
     * Waits until one of `candidates` runs a driver (with `freshMs`, one whose container started that recently, so
     * its session is still ahead: a drain's eviction must find it mid-run, not finishing); the drivers there then.
     */
    const driversOn = async (candidates: string[], freshMs?: number) => {
      let found: { node: string; pods: ReturnType<typeof drivers> } | undefined;
      await waitFor(`a driver Pod running on ${candidates.join(' or ')}`, async () => {
        const running = drivers();
        for (const p of running) seenNodes.add(p.spec.nodeName!);
        const started = (p: (typeof running)[number]) => Date.parse(p.status.containerStatuses?.[0]?.state?.running?.startedAt ?? '');
        for (const node of candidates) {
          const pods = running.filter((p) => p.spec.nodeName === node);
          if (freshMs !== undefined && !pods.some((p) => Date.now() - started(p) < freshMs)) continue;
          if (pods.length > 0) found = { node, pods };
          if (found) return true;
        }
        return false;
      }, { timeoutMs: 300_000 });
      return found!;
    };
    /** Until every Run that had a Pod of `pods` is on a later attempt or final: how long after `at` that was. */
    const recovery = async (at: number, pods: { run: string; attempt: number }[]) => {
      await waitFor('the disrupted Runs to move on', async () => {
        const byName = new Map(runsIn(CHART_NS).map((r) => [r.metadata!.name!, r]));
        return pods.every(({ run, attempt }) => {
          const status = byName.get(run)?.status ?? {};
          return isFinal(status) || (status.attempts?.length ?? 0) > attempt;
        });
      }, { timeoutMs: 300_000 });
      return Date.now() - at;
    };
    const podsOf = (list: ReturnType<typeof drivers>) => list.map((p) => ({ run: p.metadata.labels![RUN_LABEL]!, attempt: Number(p.metadata.labels![ATTEMPT_LABEL]) }));

    // 1. A drain of a node that is not the leader's (maintenance: cordon, evict everything through the Eviction API and
    // the PDBs), then uncordoned; its NATS server (its volume is on that node) comes back.
    const first = leader();
    const drainCandidates = NODES.slice(1).filter((n) => n !== first.node);
    const drained = await driversOn(drainCandidates, 3_000);
    const drainAt = Date.now();
    const drain = execFileSync(join(cluster.plane.binDir, 'kubectl'), ['--kubeconfig', cluster.plane.kubeconfig, 'drain', drained.node, '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=180s'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(drain).toContain(`node/${drained.node} drained`);
    faults.push({ kind: 'drain', node: drained.node, at: drainAt, pods: podsOf(drained.pods), dispatcherLeader: first.node === drained.node });
    faults.at(-1)!.recoveredMs = await recovery(drainAt, faults.at(-1)!.pods);
    kubectl(['uncordon', drained.node]);
    await waitFor('the NATS servers Ready again (3)', async () => podsIn(CHART_NS, 'app.kubernetes.io/component=nats').filter((p) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === 3, { timeoutMs: 300_000 });

    // 2. A node dies: the dispatcher leader's, when it is not the first node's (which holds CoreDNS and the stub).
    const now = leader();
    const killCandidates = now.node && now.node !== NODES[0] ? [now.node] : NODES.slice(1);
    const victim = await driversOn(killCandidates);
    const dying = cluster.nodes.find((n) => n.name === victim.node)!;
    const killAt = Date.now();
    const killedPods = podsOf(drivers().filter((p) => p.spec.nodeName === victim.node));
    dying.kill();
    faults.push({ kind: 'kill', node: victim.node, at: killAt, pods: killedPods, dispatcherLeader: now.node === victim.node });
    faults.at(-1)!.recoveredMs = await recovery(killAt, killedPods);

    await waitFor(`all ${RUNS} Runs final`, async () => {
      const all = runsIn(CHART_NS);
      return all.length === RUNS && all.every((r) => isFinal(r.status ?? {}));
    }, { timeoutMs: Math.max(900_000, RUNS * 6_000) });
    const wallMs = Date.now() - started;
    const done = runsIn(CHART_NS);

    // Each fault's attempts: ended by that fault (evicted, or lost with the node) and retried, or done before it hit.
    for (const fault of faults) {
      for (const { run, attempt } of fault.pods) {
        const a = done.find((r) => r.metadata!.name === run)!.status!.attempts![attempt - 1]!;
        if (a.outcome === 'succeeded') continue;
        expect(a, `${fault.kind} ${run} #${attempt}`).toMatchObject({ outcome: 'infrastructure_failed', reason: fault.kind === 'drain' ? 'PodEvicted' : 'NodeLost', retried: true });
      }
    }
    // The stream, read from a NATS server on the first node (the killed node's server is gone for good).
    const natsPod = podsIn(CHART_NS, 'app.kubernetes.io/component=nats').find((p) => p.spec.nodeName === NODES[0])!.metadata.name;
    const forward = await forwardService(access, CHART_NS, natsPod, 4222, 60_000, 'pod');
    closers.push(forward.close);
    const settings: NatsSettings = natsSettings(`nats://${forward.address}`, { credsFile: join(workDir, 'reader.creds'), inboxPrefix: READER_INBOX_PREFIX });
    const audit = await auditSoak(done, CHART_NS, runReader(settings), RETRIES + 1);
    const figures = faults.map((f) => ({ kind: f.kind, node: f.node, dispatcherLeader: f.dispatcherLeader, driverPods: f.pods.length, recoveredMs: f.recoveredMs }));
    process.stderr.write(`multi-node soak: ${RUNS} runs on ${NODES.length} nodes (drivers seen on ${[...seenNodes].sort().join(', ')}), ${audit.attempts} attempts (${audit.retried} retried: ${JSON.stringify(audit.retriedBy)}), faults ${JSON.stringify(figures)}, attempts used up ${audit.exhausted.length}, events read ${audit.eventsRead}, events lost (gaps) ${audit.gaps}, duplicate results ${audit.duplicateResults}, wall ${Math.round(wallMs / 1000)} s\n`);
    expect(done.every((r) => r.status!.phase === 'Succeeded'), JSON.stringify(done.filter((r) => r.status!.phase !== 'Succeeded').map((r) => [r.metadata!.name, r.status!.message]))).toBe(true);
    expect(audit.gaps).toBe(0);
    expect(audit.duplicateResults).toBe(0);
    expect(seenNodes.size).toBeGreaterThanOrEqual(2);
    expect(faults.map((f) => f.pods.length).every((n) => n > 0)).toBe(true);
    // Not required: PodEvicted > 0. An evicted driver whose session ends within its termination grace (the harness
    // finishes the command it is in) publishes a succeeded result, and the Run is done: in CI both drained drivers did.
    // Each drained Pod's attempt is checked above (succeeded, or PodEvicted and retried).
    expect(audit.retriedBy.NodeLost ?? 0).toBeGreaterThan(0);
  }, Math.max(1_800_000, RUNS * 12_000));
});
