// Issue 35, parts 2 and 4: a cluster of three real nodes (test/cluster/node/with-plane.ts upPlaneWithRealNodes),
// each a kubelet + containerd + kube-proxy + kube-router in its own network namespace with a Pod CIDR of its own,
// linked to each other directly; this file's own control plane (the suite's shared one and its node are not
// touched). The chart as users install it on it (two dispatcher replicas, NATS as a JetStream cluster of 3, the npm
// cache), gg and Claude Code Runs against the in-cluster stub, fed while six faults on real parts are injected one
// after the other (node/faults.ts): a node drained (kubectl drain: evictions through the Eviction API and the PDBs),
// the NATS server leading the run stream deleted, the dispatcher leader's process SIGKILLed, the npm cache down for
// 30 s, a node's image registry answering 503 for 30 s (the driver image gone from it), and a node killed outright
// (its kubelet, containerd, shims and Pods SIGKILLed, its links cut). Afterwards every Run is final, each fault's
// attempts succeeded or ended the way that fault ends one and were retried, and the audit of soak-audit.ts holds.
// TCAB_MULTI_NODE_RUNS: at least that many Runs (`npm run soak`: 300).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstreamManager } from '@nats-io/jetstream';
import type { RunObject } from '../../kube/resources.ts';
import { isFinal } from '../../dispatcher/status/transitions.ts';
import { READER_INBOX_PREFIX } from '../../nats/auth/index.ts';
import { connectNats, natsSettings } from '../../nats/settings.ts';
import type { NatsSettings } from '../../nats/settings.ts';
import { STREAM_NAME } from '../../nats/stream.ts';
import { forwardService, writeReaderCreds } from '../e2e/real-chart.ts';
import { installChartOnNodes } from '../e2e/chart-on-nodes.ts';
import type { ClusterAccess } from '../e2e/real-chart.ts';
import { pollUntil } from '../support/poll.ts';
import { registryOutage, sigkillContainer } from './node/faults.ts';
import { BUSYBOX_IMAGE } from './node/real-node.ts';
import { upPlaneWithRealNodes } from './node/with-plane.ts';
import type { PlaneWithNodes } from './node/with-plane.ts';
import { auditSoak, runReader } from './soak-audit.ts';

/** At least this many Runs in the soak (TCAB_MULTI_NODE_RUNS; `npm run soak` sets 300): more when the faults take longer. */
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
  await pollUntil(`pod ${name} to finish`, async () => ['Succeeded', 'Failed'].includes(pod(name).status.phase ?? ''), { timeoutMs: 90_000 });
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
    await pollUntil('the server Pod to be Ready', async () => ready(pod('server')), { timeoutMs: 90_000 });
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

interface PodItem {
  metadata: { name: string; uid: string; creationTimestamp: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec: { nodeName?: string };
  status: { phase?: string; conditions?: { type: string; status: string }[]; containerStatuses?: { restartCount: number; state?: { running?: { startedAt?: string } } }[] };
}
const podsIn = (namespace: string, selector: string): PodItem[] => (JSON.parse(kubectl(['get', 'pods', '-n', namespace, '-l', selector, '-o', 'json'])) as { items: PodItem[] }).items;
const runsIn = (namespace: string): RunObject[] => (JSON.parse(kubectl(['get', 'runs', '-n', namespace, '-o', 'json'])) as { items: RunObject[] }).items;
const isReady = (p: PodItem) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
const RUN_LABEL = 'tcab.dev/run';
const ATTEMPT_LABEL = 'tcab.dev/attempt';
const HARNESS_LABEL = 'tcab.dev/harness';

/** The polls here look once a second (each look lists up to a few hundred Runs through kubectl: not every 100 ms). */
const LOOK_EVERY_MS = 1000;

type FaultKind = 'drain' | 'nats-stream-leader' | 'dispatcher-leader' | 'npm-cache' | 'image-registry' | 'node-kill';
type AttemptRef = { run: string; attempt: number };
interface Fault {
  kind: FaultKind;
  node?: string;
  at: number;
  /** The driver attempts the fault met (running, or for the outages, started while it lasted). */
  attempts: AttemptRef[];
  /** From the fault to: every attempt it met final or followed by the next, and the broken part back. */
  recoveredMs?: number;
  detail: Record<string, unknown>;
}

describe('the chart on three nodes: six faults on real parts while Runs run', () => {
  const CHART_NS = 'tcab-chaos';
  const MAX_IN_FLIGHT = 9;
  /** Every eighth Run is Claude Code: it installs from the chart's npm cache (Verdaccio), which one fault takes away. */
  const CLAUDE_EVERY = 8;
  const OUTAGE_MS = 30_000;
  let workDir: string;
  let access: ClusterAccess;
  let driverImage: string;
  const closers: (() => Promise<void> | void)[] = [];

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
        // imagePullGraceSeconds 15: a pull failing for 15 s ends its attempt (ImagePullFailed), within the registry's 30 s outage.
        dispatcher: { replicas: 2, maxInFlight: MAX_IN_FLIGHT, retry: { backoffSeconds: 1, backoffMaxSeconds: 5, imagePullGraceSeconds: 15 } },
        // A lost node's driver Pods go 5 s after it is declared unreachable (15 s of silence here), not 300 s.
        driver: { nodeLostTolerationSeconds: 5 },
      },
    });
    expect(install.code, install.stderr).toBe(0);
    driverImage = install.images.driver!;
    // The stub models on the first node, which no fault touches: a Run must not fail because its model went away.
    kubectl(['patch', 'deployment', 'stub-models', '-n', CHART_NS, '--type', 'merge', '-p', JSON.stringify({ spec: { template: { spec: { nodeSelector: { 'kubernetes.io/hostname': NODES[0] } } } } })]);
    kubectl(['rollout', 'status', 'deployment/stub-models', '-n', CHART_NS, '--timeout=300s']);
    await writeReaderCreds(access, CHART_NS, join(workDir, 'reader.creds'));
  }, 1_200_000);

  afterAll(async () => {
    for (const close of closers) await close();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  /** The dispatcher replica holding the Lease, its node, and when the Lease was last renewed. */
  const leader = () => {
    const lease = JSON.parse(kubectl(['get', 'lease', 'tcab-dispatcher', '-n', CHART_NS, '-o', 'json'])) as { spec: { holderIdentity?: string; renewTime?: string } };
    const holder = lease.spec.holderIdentity ?? '';
    const pod = podsIn(CHART_NS, 'app.kubernetes.io/component=dispatcher').find((p) => p.metadata.name === holder);
    return { holder, pod, node: pod?.spec.nodeName, renewedAt: Date.parse(lease.spec.renewTime ?? '') };
  };
  const drivers = () => podsIn(CHART_NS, RUN_LABEL).filter((p) => !p.metadata.deletionTimestamp);
  const running = () => drivers().filter((p) => p.status.phase === 'Running');
  const attemptOf = (p: PodItem): AttemptRef => ({ run: p.metadata.labels![RUN_LABEL]!, attempt: Number(p.metadata.labels![ATTEMPT_LABEL]) });
  const startedAt = (p: PodItem) => Date.parse(p.status.containerStatuses?.[0]?.state?.running?.startedAt ?? '');
  const natsPods = () => podsIn(CHART_NS, 'app.kubernetes.io/component=nats');
  const npmCacheNode = () => podsIn(CHART_NS, 'app.kubernetes.io/component=npm-cache')[0]?.spec.nodeName;
  const seenNodes = new Set<string>();

  /**
   * Waits until a driver Pod runs that `want` accepts on one of `nodes` (with `freshMs`, one whose container started
   * that recently, so its session is still ahead: a fault must find it mid-run, not finishing); the drivers there then.
   */
  const driversOn = async (nodes: readonly string[], want: (p: PodItem) => boolean = () => true, freshMs?: number) => {
    let found: { node: string; pods: PodItem[] } | undefined;
    await pollUntil(`a driver Pod running on ${nodes.join(' or ')}`, () => {
      const now = running();
      for (const p of now) seenNodes.add(p.spec.nodeName!);
      for (const node of nodes) {
        const pods = now.filter((p) => p.spec.nodeName === node && want(p));
        if (pods.length > 0 && (freshMs === undefined || pods.some((p) => Date.now() - startedAt(p) < freshMs))) found = { node, pods };
        if (found) return true;
      }
      return false;
    }, { timeoutMs: 300_000, intervalMs: LOOK_EVERY_MS });
    return found!;
  };
  /** Until every attempt of `attempts` is final or followed by the next: how long after `at` that was. */
  const movedOn = async (at: number, attempts: AttemptRef[]) => {
    await pollUntil('the disrupted Runs to move on', () => {
      const byName = new Map(runsIn(CHART_NS).map((r) => [r.metadata!.name!, r]));
      return attempts.every(({ run, attempt }) => {
        const status = byName.get(run)?.status ?? {};
        return isFinal(status) || (status.attempts?.length ?? 0) > attempt;
      });
    }, { timeoutMs: 300_000, intervalMs: LOOK_EVERY_MS });
    return Date.now() - at;
  };
  /** Samples the driver Pods `want` accepts until `until` resolves: every attempt seen. */
  const sampleWhile = async (until: Promise<unknown>, want: (p: PodItem) => boolean) => {
    const seen = new Map<string, AttemptRef>();
    let done = false;
    void until.finally(() => (done = true));
    while (!done) {
      for (const p of drivers().filter(want)) seen.set(`${attemptOf(p).run}#${attemptOf(p).attempt}`, attemptOf(p));
      await Promise.race([until, delay(1000)]);
    }
    return [...seen.values()];
  };
  /** The run stream's cluster state as the NATS server `pod` sees it (a port-forward of its own). */
  const streamState = async (pod: string) => {
    const forward = await forwardService(access, CHART_NS, pod, 4222, 30_000, 'pod');
    try {
      const nc = await connectNats(natsSettings(`nats://${forward.address}`, { credsFile: join(workDir, 'reader.creds'), inboxPrefix: READER_INBOX_PREFIX }), { name: 'multi-node-soak' });
      try {
        const info = await (await jetstreamManager(nc)).streams.info(STREAM_NAME);
        return { replicas: info.config.num_replicas, leader: info.cluster?.leader, current: (info.cluster?.replicas ?? []).every((r) => r.current) };
      } finally {
        await nc.close();
      }
    } finally {
      forward.close();
    }
  };

  it('spreads the replicas: two dispatchers on two nodes, the three NATS servers on three', () => {
    const dispatchers = podsIn(CHART_NS, 'app.kubernetes.io/component=dispatcher');
    expect(dispatchers).toHaveLength(2);
    expect(new Set(dispatchers.map((p) => p.spec.nodeName)).size).toBe(2);
    expect(natsPods()).toHaveLength(3);
    expect(new Set(natsPods().map((p) => p.spec.nodeName)).size).toBe(3);
  });

  it(`at least ${RUNS} Runs (gg, every ${CLAUDE_EVERY}th Claude Code) through a drain, the NATS stream leader deleted, the dispatcher leader SIGKILLed, the npm cache down ${OUTAGE_MS / 1000} s, the image registry answering 503 ${OUTAGE_MS / 1000} s and a node's death: every Run final, the infrastructure failures retried, nothing else, no event or result lost or doubled`, async () => {
    const runOf = (i: number) => ({ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', metadata: { name: `mn-${i}`, namespace: CHART_NS }, spec: { harness: i % CLAUDE_EVERY === CLAUDE_EVERY - 1 ? 'claude' : 'gg', model: 'claude-sonnet-4-5', prompt: `multi-node ${i}`, maxRuntimeSeconds: 300, retries: RETRIES } });
    let submitted = 0;
    const submit = (count: number) => {
      kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: Array.from({ length: count }, (_, k) => runOf(submitted + k)) }));
      submitted += count;
    };
    const started = Date.now();
    // Runs keep coming while the faults are injected (two slots' worth waiting), then up to RUNS in all.
    let injecting = true;
    const feeder = (async () => {
      while (injecting) {
        try {
          if (runsIn(CHART_NS).filter((r) => !isFinal(r.status ?? {})).length < 2 * MAX_IN_FLIGHT) submit(MAX_IN_FLIGHT);
        } catch (error) {
          // An apiserver answer missed (the node holding it is busy): the next look tops up.
          process.stderr.write(`multi-node soak feeder: ${(error as Error).message.split('\n')[0]}\n`);
        }
        await delay(2000);
      }
    })();
    const faults: Fault[] = [];
    const claude = (p: PodItem) => p.metadata.labels?.[HARNESS_LABEL] === 'claude';
    const npmNode = npmCacheNode();
    // Neither the drain nor the kill takes the npm cache's node (its volume is there): the npm fault is its own.
    const spare = NODES.slice(1).filter((n) => n !== npmNode);

    try {
      // 1. A drain (maintenance: cordon, evict everything through the Eviction API and the PDBs), then uncordon; its
      // NATS server (its volume is on that node) comes back. Not the leader's node when there is a choice.
      const first = leader();
      const drained = await driversOn(spare.filter((n) => n !== first.node).length > 0 ? spare.filter((n) => n !== first.node) : spare, () => true, 3_000);
      const drainAt = Date.now();
      const drain = execFileSync(join(cluster.plane.binDir, 'kubectl'), ['--kubeconfig', cluster.plane.kubeconfig, 'drain', drained.node, '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=180s'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      expect(drain).toContain(`node/${drained.node} drained`);
      const drainFault: Fault = { kind: 'drain', node: drained.node, at: drainAt, attempts: drained.pods.map(attemptOf), detail: { dispatcherLeaderThere: first.node === drained.node } };
      faults.push(drainFault);
      drainFault.recoveredMs = await movedOn(drainAt, drainFault.attempts);
      kubectl(['uncordon', drained.node]);
      await pollUntil('the NATS servers Ready again (3)', () => natsPods().filter(isReady).length === 3, { timeoutMs: 300_000, intervalMs: LOOK_EVERY_MS });
      drainFault.detail.natsReadyMs = Date.now() - drainAt;

      // 2. The NATS server leading the run stream deleted (its Pod, with its usual grace), while drivers publish.
      const natsBefore = natsPods();
      // The drained node's server is Ready before it has caught up: until it has, the stream has two current replicas.
      let streamBefore: Awaited<ReturnType<typeof streamState>> | undefined;
      await pollUntil('the run stream led and current on 3 servers', async () => {
        streamBefore = await streamState(natsBefore.find((p) => p.spec.nodeName === NODES[0])!.metadata.name);
        return streamBefore.replicas === 3 && streamBefore.current && streamBefore.leader !== undefined;
      }, { timeoutMs: 120_000, intervalMs: LOOK_EVERY_MS });
      const natsCaughtUpMs = Date.now() - drainAt;
      const natsVictim = natsBefore.find((p) => p.metadata.name === streamBefore!.leader)!;
      drainFault.detail.natsCaughtUpMs = natsCaughtUpMs;
      const natsAttempts = (await driversOn(NODES)).pods.map(attemptOf);
      const natsAt = Date.now();
      kubectl(['delete', 'pod', natsVictim.metadata.name, '-n', CHART_NS, '--wait=false']);
      const natsFault: Fault = { kind: 'nats-stream-leader', node: natsVictim.spec.nodeName, at: natsAt, attempts: natsAttempts, detail: { deleted: natsVictim.metadata.name } };
      faults.push(natsFault);
      await pollUntil('the NATS server back (a new Pod, Ready) and the stream led and current on 3', async () => {
        const now = natsPods();
        if (now.filter(isReady).length !== 3 || now.some((p) => p.metadata.uid === natsVictim.metadata.uid)) return false;
        const state = await streamState(now.find((p) => p.metadata.name !== natsVictim.metadata.name)!.metadata.name);
        natsFault.detail.newLeader = state.leader;
        return state.leader !== undefined && state.current && state.replicas === 3;
      }, { timeoutMs: 300_000, intervalMs: LOOK_EVERY_MS });
      natsFault.recoveredMs = Math.max(Date.now() - natsAt, await movedOn(natsAt, natsAttempts));

      // 3. The dispatcher leader's process SIGKILLed (no SIGTERM, no Lease handed over): the kubelet restarts it, and
      // leadership resumes (the other replica takes the Lease once it expires, or the restarted one renews it).
      const boss = leader();
      const bossNode = cluster.nodes.find((n) => n.name === boss.node)!;
      const bossAttempts = (await driversOn(NODES)).pods.map(attemptOf);
      const bossRestarts = boss.pod!.status.containerStatuses?.[0]?.restartCount ?? 0;
      const bossAt = Date.now();
      const killed = sigkillContainer(bossNode, boss.pod!.metadata.uid, 'dispatcher/main.ts');
      expect(killed.length, `the dispatcher's processes in Pod ${boss.holder}`).toBeGreaterThan(0);
      const bossFault: Fault = { kind: 'dispatcher-leader', node: boss.node, at: bossAt, attempts: bossAttempts, detail: { pod: boss.holder } };
      faults.push(bossFault);
      // Both watched in one loop, each time taken when first seen (the kubelet's restart can wait on its back-off).
      await pollUntil('the Lease renewed after the kill and the killed dispatcher restarted', () => {
        const now = leader();
        // A renewal in flight as the kill came could land just after it: a second's margin, or another holder.
        if (bossFault.detail.leadershipBackMs === undefined && (now.renewedAt > bossAt + 1000 || (now.holder !== boss.holder && now.renewedAt > bossAt))) Object.assign(bossFault.detail, { leadershipBackMs: Date.now() - bossAt, newLeader: now.holder });
        const restarts = podsIn(CHART_NS, 'app.kubernetes.io/component=dispatcher').find((p) => p.metadata.uid === boss.pod!.metadata.uid)?.status.containerStatuses?.[0]?.restartCount ?? 0;
        if (bossFault.detail.restartedMs === undefined && restarts > bossRestarts) bossFault.detail.restartedMs = Date.now() - bossAt;
        return bossFault.detail.leadershipBackMs !== undefined && bossFault.detail.restartedMs !== undefined;
      }, { timeoutMs: 180_000, intervalMs: LOOK_EVERY_MS });
      bossFault.recoveredMs = Math.max(Date.now() - bossAt, await movedOn(bossAt, bossAttempts));

      // 4. The npm cache (Verdaccio) down for 30 s while a Claude Code driver installs from it: scaled to 0, then 1.
      const installing = await driversOn(NODES, claude, 3_000);
      const npmSet = kubectl(['get', 'statefulset', '-n', CHART_NS, '-l', 'app.kubernetes.io/component=npm-cache', '-o', 'name']).trim();
      const npmAt = Date.now();
      kubectl(['scale', npmSet, '-n', CHART_NS, '--replicas=0']);
      // The outage lasts 30 s from the scale-down: the fault's length, not a wait for something to happen.
      const npmAttempts = await sampleWhile(delay(OUTAGE_MS), claude);
      kubectl(['scale', npmSet, '-n', CHART_NS, '--replicas=1']);
      const npmUpAt = Date.now();
      await pollUntil('the npm cache Ready again', () => podsIn(CHART_NS, 'app.kubernetes.io/component=npm-cache').some(isReady), { timeoutMs: 300_000, intervalMs: LOOK_EVERY_MS });
      const npmFault: Fault = { kind: 'npm-cache', node: npmNode, at: npmAt, attempts: [...new Map([...installing.pods.map(attemptOf), ...npmAttempts].map((a) => [`${a.run}#${a.attempt}`, a])).values()], detail: { downMs: npmUpAt - npmAt, readyAfterUpMs: Date.now() - npmUpAt } };
      faults.push(npmFault);
      npmFault.recoveredMs = await movedOn(npmAt, npmFault.attempts);

      // 5. The image registry of a node answering 503 for 30 s, the driver image gone from that node (as after an
      // image GC, or on a new node): its driver Pods cannot pull until the registry is back.
      const pullNode = cluster.nodes.find((n) => n.name === (spare[0] ?? NODES[1]))!;
      const outage = await registryOutage(pullNode, cluster.nodeBinDir, driverImage);
      closers.push(() => outage.close());
      const pullAt = Date.now();
      const onPullNode = (p: PodItem) => p.spec.nodeName === pullNode.name && Date.parse(p.metadata.creationTimestamp) >= Math.floor(pullAt / 1000) * 1000;
      const pullAttempts = await sampleWhile(delay(OUTAGE_MS), onPullNode);
      await outage.restore();
      const pullUpAt = Date.now();
      const pullFault: Fault = { kind: 'image-registry', node: pullNode.name, at: pullAt, attempts: pullAttempts, detail: { requestsAnswered503: outage.requests().filter((r) => r.status === 503).length } };
      faults.push(pullFault);
      expect(pullFault.detail.requestsAnswered503, 'the node\'s containerd met the outage').not.toBe(0);
      await driversOn([pullNode.name], (p) => startedAt(p) >= Math.floor(pullUpAt / 1000) * 1000);
      pullFault.detail.driverRunningAgainAfterUpMs = Date.now() - pullUpAt;
      pullFault.recoveredMs = Math.max(Date.now() - pullAt, await movedOn(pullAt, pullAttempts));

      // 6. A node dies: the dispatcher leader's, when it may (not the first node's: CoreDNS and the stub; not the npm cache's).
      const now = leader();
      const victim = await driversOn(now.node && spare.includes(now.node) ? [now.node] : spare);
      const dying = cluster.nodes.find((n) => n.name === victim.node)!;
      const killAt = Date.now();
      const killedAttempts = running().filter((p) => p.spec.nodeName === victim.node).map(attemptOf);
      dying.kill();
      const killFault: Fault = { kind: 'node-kill', node: victim.node, at: killAt, attempts: killedAttempts, detail: { dispatcherLeaderThere: now.node === victim.node } };
      faults.push(killFault);
      killFault.recoveredMs = await movedOn(killAt, killedAttempts);
    } finally {
      injecting = false;
      await feeder;
    }
    if (submitted < RUNS) submit(RUNS - submitted);

    await pollUntil(`all ${submitted} Runs final`, () => {
      const all = runsIn(CHART_NS);
      return all.length === submitted && all.every((r) => isFinal(r.status ?? {}));
    }, { timeoutMs: Math.max(900_000, submitted * 6_000), intervalMs: LOOK_EVERY_MS });
    const wallMs = Date.now() - started;
    const done = runsIn(CHART_NS);
    const byName = new Map(done.map((r) => [r.metadata!.name!, r]));
    const attemptStatus = ({ run, attempt }: AttemptRef) => byName.get(run)!.status!.attempts![attempt - 1]!;

    // Each fault's attempts: what the fault may do to them. An attempt succeeded, or ended the way that fault ends
    // one and was retried. The NATS leader's and the dispatcher leader's loss end none.
    const allowed: Record<FaultKind, string | undefined> = { 'drain': 'PodEvicted', 'nats-stream-leader': undefined, 'dispatcher-leader': undefined, 'npm-cache': 'InstallFailed', 'image-registry': 'ImagePullFailed', 'node-kill': 'NodeLost' };
    const unexpected: string[] = [];
    const figures = faults.map((f) => {
      const outcomes: Record<string, number> = {};
      for (const ref of f.attempts) {
        const a = attemptStatus(ref);
        const key = a.outcome === 'succeeded' ? 'succeeded' : `${a.reason}${a.retried ? ' (retried)' : ''}`;
        outcomes[key] = (outcomes[key] ?? 0) + 1;
        const expected = a.outcome === 'succeeded' || (allowed[f.kind] !== undefined && a.outcome === 'infrastructure_failed' && a.reason === allowed[f.kind] && a.retried === true);
        if (!expected) unexpected.push(`${f.kind} ${ref.run} #${ref.attempt}: ${JSON.stringify(a)}`);
      }
      return { kind: f.kind, node: f.node, attempts: f.attempts.length, outcomes, recoveredMs: f.recoveredMs, ...f.detail };
    });
    for (const f of figures) process.stderr.write(`multi-node soak fault: ${JSON.stringify(f)}\n`);
    // The stream, read from a NATS server on the first node (the killed node's server is gone for good).
    const natsPod = natsPods().find((p) => p.spec.nodeName === NODES[0])!.metadata.name;
    const forward = await forwardService(access, CHART_NS, natsPod, 4222, 60_000, 'pod');
    closers.push(forward.close);
    const settings: NatsSettings = natsSettings(`nats://${forward.address}`, { credsFile: join(workDir, 'reader.creds'), inboxPrefix: READER_INBOX_PREFIX });
    const audit = await auditSoak(done, CHART_NS, runReader(settings), RETRIES + 1);
    process.stderr.write(`multi-node soak: ${submitted} Runs (${done.filter((r) => r.spec.harness === 'claude').length} Claude Code) on ${NODES.length} nodes (drivers seen on ${[...seenNodes].sort().join(', ')}), ${audit.attempts} attempts (${audit.retried} retried: ${JSON.stringify(audit.retriedBy)}), attempts used up ${audit.exhausted.length}, events read ${audit.eventsRead}, events lost (gaps) ${audit.gaps}, duplicate results ${audit.duplicateResults}, wall ${Math.round(wallMs / 1000)} s\n`);
    expect(unexpected).toEqual([]);
    expect(done.every((r) => r.status!.phase === 'Succeeded'), JSON.stringify(done.filter((r) => r.status!.phase !== 'Succeeded').map((r) => [r.metadata!.name, r.status!.message]))).toBe(true);
    expect(audit.gaps).toBe(0);
    expect(audit.duplicateResults).toBe(0);
    expect(seenNodes.size).toBeGreaterThanOrEqual(2);
    // Every fault met attempts under way (the outages: attempts that started while they lasted).
    for (const f of faults) expect(f.attempts.length, f.kind).toBeGreaterThan(0);
    // Not required: PodEvicted > 0. An evicted driver whose session ends within its termination grace (the harness
    // finishes the command it is in) publishes a succeeded result, and the Run is done. Each drained Pod's attempt
    // is checked above (succeeded, or PodEvicted and retried).
    expect(audit.retriedBy.NodeLost ?? 0).toBeGreaterThan(0);
  }, Math.max(2_400_000, RUNS * 12_000));
});
