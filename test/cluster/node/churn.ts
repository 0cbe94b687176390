// Pod churn on the real node, measured: `node test/cluster/node/churn.ts [N=100] [parallel=20]`.
//
// Starts its own control plane + real node (with-plane.ts, untainted, no storage), then creates N short Pods, at
// most `parallel` at a time, as the dispatcher's caps test does (its Pod shape: restartPolicy Never, no service
// account token, an emptyDir /tmp, 10m/32Mi, the node's busybox running `sleep 0.3`), deletes each one once it has
// Succeeded and starts the next when it is gone. Prints one JSON line: Pods/s, p50/p95 of each stage
//   created -> scheduled -> sandbox (PodReadyToStartContainers) -> started -> succeeded -> gone (after our delete)
// (times as this process saw the watch events), the CPU seconds the node's processes used during the churn (from
// /proc: kubelet, containerd with its children -- the CNI plugins and their iptables --, kube-proxy with its
// iptables-restore children, the shims with their runc children, sampled every 0.5 s as they come and go), kube-proxy's
// rule syncs, and the load average before and after.
import { readFileSync, readdirSync } from 'node:fs';
import { CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { upPlaneWithRealNode } from './with-plane.ts';
import { BUSYBOX_IMAGE } from './real-node.ts';
import { pollUntil } from '../../support/poll.ts';

const N = Number(process.argv[2] ?? 100);
const PARALLEL = Number(process.argv[3] ?? 20);
const NS = 'churn';
const TICKS = 100; // USER_HZ

interface Times { created: number; scheduled?: number; sandbox?: number; started?: number; succeeded?: number; gone?: number }

function cpuOf(pid: number): { self: number; children: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields after the comm: state(0) ... utime(11) stime(12) cutime(13) cstime(14)
    return { self: (Number(f[11]) + Number(f[12])) / TICKS, children: (Number(f[13]) + Number(f[14])) / TICKS };
  } catch {
    return undefined;
  }
}

/** The node's processes by role: pid -> role, from their command lines (they all name the node's directory). */
function nodeProcesses(dir: string): Map<number, string> {
  const out = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (!argv.some((a) => a.includes(dir))) continue;
    const exe = argv[0]!.split('/').pop()!;
    const role = ['kubelet', 'containerd', 'kube-proxy', 'containerd-shim-runc-v2'].find((r) => exe === r);
    if (role) out.set(Number(entry), role === 'containerd-shim-runc-v2' ? 'shims' : role);
  }
  return out;
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};

async function main(): Promise<void> {
  const loadBefore = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const t0 = Date.now();
  const env = await upPlaneWithRealNode('churn-node', { taint: false, storage: false });
  const setupS = (Date.now() - t0) / 1000;
  try {
    const kc = new KubeConfig();
    kc.loadFromFile(env.plane.kubeconfig);
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NS } } });
    // The default ServiceAccount appears a moment after the namespace; Pods are refused until then.
    await pollUntil(`the default ServiceAccount of ${NS}`, () => core.readNamespacedServiceAccount({ name: 'default', namespace: NS }).then(() => true), { timeoutMs: 60_000 });
    const times = new Map<string, Times>();
    let created = 0;
    let gone = 0;
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    const pod = (name: string): V1Pod => ({
      metadata: { name, labels: { churn: '1' } },
      spec: {
        restartPolicy: 'Never',
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        terminationGracePeriodSeconds: 30,
        securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [{
          name: 'job',
          image: BUSYBOX_IMAGE,
          command: ['/bin/sh', '-c', 'sleep 0.3'],
          resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '32Mi' } },
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
          volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
        }],
        volumes: [{ name: 'tmp', emptyDir: {} }],
      },
    });
    const next = () => {
      if (created >= N) return;
      const name = `churn-${created++}`;
      times.set(name, { created: Date.now() });
      core.createNamespacedPod({ namespace: NS, body: pod(name) }).catch((error: unknown) => {
        console.error(`create ${name}:`, error);
        process.exitCode = 1;
      });
    };
    const watch = await new Watch(kc).watch(`/api/v1/namespaces/${NS}/pods`, { labelSelector: 'churn=1' }, (type: string, obj: V1Pod) => {
      const now = Date.now();
      const name = obj.metadata!.name!;
      const t = times.get(name);
      if (!t) return;
      if (type === 'DELETED') {
        if (t.gone === undefined) {
          t.gone = now;
          gone++;
          if (gone === N) resolveDone();
          else next();
        }
        return;
      }
      const cond = (c: string) => obj.status?.conditions?.some((x) => x.type === c && x.status === 'True');
      if (t.scheduled === undefined && obj.spec?.nodeName) t.scheduled = now;
      if (t.sandbox === undefined && cond('PodReadyToStartContainers')) t.sandbox = now;
      const state = obj.status?.containerStatuses?.[0]?.state;
      if (t.started === undefined && (state?.running || state?.terminated)) t.started = now;
      if (t.succeeded === undefined && (obj.status?.phase === 'Succeeded' || obj.status?.phase === 'Failed')) {
        t.succeeded = now;
        if (obj.status.phase === 'Failed') console.error(`${name} Failed: ${JSON.stringify(obj.status.containerStatuses?.[0]?.state)}`);
        core.deleteNamespacedPod({ name, namespace: NS }).catch((error: unknown) => console.error(`delete ${name}:`, error));
      }
    }, (error: unknown) => {
      if (error && (error as Error).name !== 'AbortError') console.error('watch ended:', error);
    });

    // CPU: cumulative figures per pid, sampled while the churn runs (shims come and go with their Pods).
    const samples = new Map<number, { role: string; first: { self: number; children: number }; last: { self: number; children: number } }>();
    const sample = () => {
      for (const [pid, role] of nodeProcesses(env.node.dir)) {
        const cpu = cpuOf(pid);
        if (!cpu) continue;
        const s = samples.get(pid);
        if (s) s.last = cpu;
        else samples.set(pid, { role, first: role === 'shims' ? { self: 0, children: 0 } : cpu, last: cpu });
      }
    };
    sample();
    const sampler = setInterval(sample, 500);
    const syncsBefore = proxySyncs(env.node.nodeArgv.bind(env.node));
    const start = Date.now();
    for (let i = 0; i < PARALLEL; i++) next();
    await done;
    const seconds = (Date.now() - start) / 1000;
    sample();
    clearInterval(sampler);
    watch.abort();
    const syncs = proxySyncs(env.node.nodeArgv.bind(env.node)) - syncsBefore;

    const cpu: Record<string, { self: number; children: number }> = {};
    for (const { role, first, last } of samples.values()) {
      const c = (cpu[role] ??= { self: 0, children: 0 });
      c.self += last.self - first.self;
      c.children += last.children - first.children;
    }
    for (const c of Object.values(cpu)) {
      c.self = Math.round(c.self * 100) / 100;
      c.children = Math.round(c.children * 100) / 100;
    }
    const all = [...times.values()];
    const stage = (from: keyof Times, to: keyof Times) => {
      const d = all.filter((t) => t[from] !== undefined && t[to] !== undefined).map((t) => t[to]! - t[from]!);
      return { p50: quantile(d, 0.5), p95: quantile(d, 0.95) };
    };
    console.log(JSON.stringify({
      pods: N,
      parallel: PARALLEL,
      seconds,
      pods_per_s: Math.round((N / seconds) * 100) / 100,
      ms: {
        scheduled: stage('created', 'scheduled'),
        sandbox: stage('scheduled', 'sandbox'),
        started: stage('sandbox', 'started'),
        succeeded: stage('started', 'succeeded'),
        gone: stage('succeeded', 'gone'),
        total: stage('created', 'gone'),
        to_succeeded: stage('created', 'succeeded'),
      },
      cpu_s: cpu,
      kube_proxy_syncs: syncs,
      setup_s: setupS,
      load_before: loadBefore,
      load_after: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    }));
  } finally {
    await env.down();
  }
}

/** kube-proxy's full iptables syncs so far (its metrics endpoint inside the node's namespace). */
function proxySyncs(nodeArgv: (argv: string[]) => string[]): number {
  const argv = nodeArgv(['bash', '-c', 'exec 3<>/dev/tcp/127.0.0.1/10249 2>/dev/null || exit 0; printf "GET /metrics HTTP/1.0\\r\\n\\r\\n" >&3; cat <&3']);
  const { spawnSync } = process.getBuiltinModule('node:child_process');
  const out = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8' }).stdout ?? '';
  return Number(/^kubeproxy_sync_proxy_rules_duration_seconds_count(?:\{[^}]*\})? (\d+)/m.exec(out)?.[1] ?? NaN);
}

await main();
