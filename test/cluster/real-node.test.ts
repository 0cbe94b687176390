// A real node (issue 20, first slice): kubelet + containerd + runc + the CNI bridge in a network namespace of its
// own, next to a control plane of this file's own (test/cluster/control-plane.ts, so nothing here touches the
// shared one or its node). A busybox image pushed to the node's local registry is pulled through
// containerd and run by runc; the Pod reports its isolation from inside the container, and the kubelet's Events
// are the real kubelet's.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KUBERNETES_SERVICE_IP } from './control-plane.ts';
import type { ControlPlane } from './control-plane.ts';
import { pollUntil } from '../support/poll.ts';
import { BUSYBOX_IMAGE, CLUSTER_DNS_IP, POD_CIDR, STATE_ROOT, STORAGE_CLASS, TAINT_KEY, internals, hostRecord, sweepStaleNodes } from './node/real-node.ts';
import type { RealNode } from './node/real-node.ts';
import { HOST_SERVICES_IP, NODE_UPLINK, RULE_COMMENT_PREFIX, nodeRules } from './node/network.ts';
import { upPlaneWithRealNode } from './node/with-plane.ts';
import type { PlaneWithNode } from './node/with-plane.ts';

const NODE_NAME = 'tcab-real-node-1';
const NS = 'real-node';
/**
 * "At once", in the whole seconds busybox's date gives: a refusal (ICMP, REJECT) takes milliseconds, but nc's own
 * start on a loaded machine (load average 16 seen in CI) may cross two second boundaries; a timeout is `nc -w`'s 5 s
 * or 10 s. The message (Connection refused, No route to host) is what tells a refusal from a timeout.
 */
const FAST_S = 3;

let plane: ControlPlane;
let node: RealNode;
let cluster: PlaneWithNode | undefined;
/** The sysctls as recorded before any live real node's kubelet changed them (what the last node out restores). */
let sysctlsBefore: Record<string, string | undefined>;
/** The host's iptables rules (nat and filter) that name no real node, before this file's node started. */
let hostRulesBefore: string[];

/** The host's rules that name no real node (other test runs' nodes come and go meanwhile; ours are checked apart). */
function hostRulesOfNoNode(): string[] {
  const out: string[] = [];
  for (const table of ['nat', 'filter']) {
    const listing = execFileSync('iptables', ['-w', '5', '-t', table, '-S'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    out.push(...listing.split('\n').filter((rule) => rule && !rule.includes(RULE_COMMENT_PREFIX)).map((rule) => `${table} ${rule}`));
  }
  return out;
}

const kubectl = (...args: string[]) => execFileSync(join(plane.binDir, 'kubectl'), ['--kubeconfig', plane.kubeconfig, ...args], { encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
const apply = (manifest: object) => execFileSync(join(plane.binDir, 'kubectl'), ['--kubeconfig', plane.kubeconfig, 'apply', '-f', '-'], { input: JSON.stringify(manifest), encoding: 'utf8' });
const getJson = <T>(...args: string[]) => JSON.parse(kubectl('get', ...args, '-o', 'json')) as T;

interface PodJson {
  metadata: { uid: string };
  spec: { nodeName?: string };
  status: {
    phase?: string;
    podIP?: string;
    hostIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { containerID?: string; imageID?: string; image?: string; state?: { terminated?: { exitCode: number } } }[];
  };
}
interface EventJson {
  reason: string;
  message: string;
  source?: { component?: string; host?: string };
  reportingComponent?: string;
  reportingInstance?: string;
}

/** The Pod's report, printed from inside its container. */
const PROBE = [
  // NULs between arguments become |, the script's own newlines ~ (one log line).
  `printf 'pid1=%s\\n' "$(tr '\\0\\n' '|~' < /proc/1/cmdline)"`,
  // The shell's own PID (read by the shell itself; Kubernetes would turn a literal $$ into $).
  'read -r self _ < /proc/self/stat; echo "self=$self"',
  'echo "procs=$(ls /proc | grep -c "^[0-9][0-9]*$")"',
  'ip -4 -o addr show dev eth0 | sed "s/^/addr=/"',
  `grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status | tr -d ' \\t' | sed 's/:/=/'`,
  'if touch /written 2>/dev/null; then echo rootfs=writable; else echo rootfs=readonly; fi',
  'if [ -s /var/run/secrets/kubernetes.io/serviceaccount/token ]; then echo token=present; else echo token=absent; fi',
  'echo "hostname=$(hostname)"',
].join('\n');

function podManifest(name: string, command: string[], securityContext: object): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      nodeSelector: { 'kubernetes.io/hostname': NODE_NAME },
      tolerations: [{ key: TAINT_KEY, operator: 'Exists', effect: 'NoSchedule' }],
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'probe', image: BUSYBOX_IMAGE, imagePullPolicy: 'Always', command, securityContext }],
    },
  };
}

/** The CRI log's lines (`<time> <stream> <F|P> <text>`) as key=value pairs. */
function report(log: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of log.split('\n')) {
    const text = line.split(' ').slice(3).join(' ');
    const eq = text.indexOf('=');
    if (eq <= 0) continue;
    const key = text.slice(0, eq);
    out.set(key, [...(out.get(key) ?? []), text.slice(eq + 1)]);
  }
  return out;
}

/** Runs a busybox script in a Pod on the node to completion; its phase and its log as key=value pairs. */
async function runPod(name: string, script: string): Promise<{ phase: string; report: Map<string, string[]>; log: string }> {
  apply(podManifest(name, ['/bin/sh', '-c', script], {}));
  let pod: PodJson | undefined;
  await pollUntil(`pod ${name} to finish`, async () => {
    pod = getJson<PodJson>('pod', name, '-n', NS);
    return pod.status.phase === 'Succeeded' || pod.status.phase === 'Failed';
  }, { timeoutMs: 120_000 });
  const log = node.containerLog(NS, name, pod!.metadata.uid, 'probe');
  return { phase: pod!.status.phase!, report: report(log), log };
}

beforeAll(async () => {
  hostRulesBefore = hostRulesOfNoNode();
  cluster = await upPlaneWithRealNode(NODE_NAME);
  ({ plane, node } = cluster);
  process.stderr.write(`real node up: ${JSON.stringify(node.timings)}\n`);
  // Recorded by the first live node on this machine (maybe another test run's), before its kubelet started.
  sysctlsBefore = hostRecord()!.sysctls;
  kubectl('create', 'namespace', NS);
  await pollUntil('the default ServiceAccount', async () => kubectl('get', 'serviceaccount', 'default', '-n', NS, '-o', 'name').trim() === 'serviceaccount/default', { timeoutMs: 30_000 });
}, 1_800_000);

afterAll(async () => {
  await cluster?.down();
});

describe('a real node', () => {
  it('registers with the real kubelet, tainted so no other test schedules onto it', () => {
    const n = getJson<{ spec: { taints?: { key: string; effect: string }[] }; status: { nodeInfo: { kubeletVersion: string; containerRuntimeVersion: string }; addresses: { type: string; address: string }[] } }>('node', NODE_NAME);
    expect(n.status.nodeInfo.kubeletVersion).toBe('v1.37.2');
    expect(n.status.nodeInfo.containerRuntimeVersion).toBe('containerd://2.4.2');
    expect(n.status.addresses).toContainEqual({ type: 'InternalIP', address: node.ip });
    expect(n.spec.taints).toContainEqual(expect.objectContaining({ key: TAINT_KEY, effect: 'NoSchedule' }));
  });

  it('pulls busybox from the local registry and runs it isolated by runc: own PID and network namespaces, the configured capabilities, seccomp, a read-only root', async () => {
    const name = 'isolation';
    apply(podManifest(name, ['/bin/sh', '-c', PROBE], {
      capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] },
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      seccompProfile: { type: 'RuntimeDefault' },
    }));
    let pod: PodJson | undefined;
    await pollUntil(`pod ${name} to finish`, async () => {
      pod = getJson<PodJson>('pod', name, '-n', NS);
      return pod.status.phase === 'Succeeded' || pod.status.phase === 'Failed';
    }, { timeoutMs: 120_000 });
    const log = node.containerLog(NS, name, pod!.metadata.uid, 'probe');
    expect(pod!.status.phase, log).toBe('Succeeded');
    expect(pod!.spec.nodeName).toBe(NODE_NAME);
    expect(pod!.status.hostIP).toBe(node.ip);
    const status = pod!.status.containerStatuses?.[0];
    expect(status?.containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
    expect(status?.imageID).toBe(`${BUSYBOX_IMAGE.replace(/:[^:/]+$/, '')}@${node.digests.busybox}`);
    expect(status?.state?.terminated?.exitCode).toBe(0);

    const r = report(log);
    // PID namespace: PID 1 is the container's own command, and only its few processes are visible.
    expect(r.get('pid1')).toEqual([`/bin/sh|-c|${PROBE.replaceAll('\n', '~')}|`]);
    expect(r.get('self')).toEqual(['1']);
    expect(Number(r.get('procs')?.[0])).toBeLessThan(6);
    // Network namespace: eth0 holds the Pod's address from the node's Pod CIDR (the host has no such interface).
    const addr = r.get('addr')?.[0] ?? '';
    expect(addr).toMatch(/eth0\s+inet 198\.18\.0\.\d+\/24/);
    expect(addr).toContain(`inet ${pod!.status.podIP}/24`);
    expect(execFileSync('ip', ['-4', '-o', 'addr'], { encoding: 'utf8' })).not.toContain('198.18.0.');
    // Capabilities exactly as configured (drop ALL, add NET_BIND_SERVICE = bit 10), no_new_privs, seccomp filter.
    expect(r.get('CapEff')).toEqual(['0000000000000400']);
    expect(r.get('NoNewPrivs')).toEqual(['1']);
    expect(r.get('Seccomp')).toEqual(['2']);
    expect(r.get('rootfs')).toEqual(['readonly']);
    // kubelet's projected service-account volume, mounted by the real kubelet and bind-mounted by runc.
    expect(r.get('token')).toEqual(['present']);
    expect(r.get('hostname')).toEqual([name]);

    // The kubelet's Events, from the real kubelet on this node.
    let events: EventJson[] = [];
    await pollUntil('the kubelet Events', async () => {
      events = getJson<{ items: EventJson[] }>('events', '-n', NS, '--field-selector', `involvedObject.name=${name}`).items;
      return ['Pulling', 'Pulled', 'Created', 'Started'].every((reason) => events.some((e) => e.reason === reason));
    }, { timeoutMs: 30_000 });
    const byReason = (reason: string) => events.find((e) => e.reason === reason)!;
    for (const reason of ['Pulling', 'Pulled', 'Created', 'Started']) expect(byReason(reason).source, reason).toEqual({ component: 'kubelet', host: NODE_NAME });
    expect(byReason('Pulling').message).toBe(`Pulling image "${BUSYBOX_IMAGE}"`);
    expect(byReason('Pulled').message).toMatch(new RegExp(`^Successfully pulled image "${BUSYBOX_IMAGE.replace(/[.]/g, '\\.')}" in [\\d.]+m?s`));
    expect(byReason('Created').message).toBe('Container created');
    expect(byReason('Started').message).toBe('Container started');
  });

  it('runs a container as a host process in the node\'s cgroups, in namespaces other than the host\'s', async () => {
    const name = 'sleeper';
    apply(podManifest(name, ['/bin/sleep', '3600'], {}));
    await pollUntil(`pod ${name} to run`, async () => getJson<PodJson>('pod', name, '-n', NS).status.phase === 'Running', { timeoutMs: 120_000 });
    // Find it from the host: a process running busybox sleep in the pids cgroup tree under the node's cgroup root.
    const pids = internals.cgroupTree('/sys/fs/cgroup/pids', node.cgroupRoot)
      .flatMap((dir) => readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean))
      .filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8') === '/bin/sleep\u00003600\u0000');
    expect(pids).toHaveLength(1);
    const ns = (pid: string, kind: string) => execFileSync('readlink', [`/proc/${pid}/ns/${kind}`], { encoding: 'utf8' }).trim();
    for (const kind of ['pid', 'net', 'mnt', 'uts', 'ipc']) expect(ns(pids[0]!, kind), kind).not.toBe(ns(String(process.pid), kind));
    kubectl('delete', 'pod', name, '-n', NS, '--wait=true', '--timeout=60s');
    expect(existsSync(`/proc/${pids[0]}`) && readFileSync(`/proc/${pids[0]}/cmdline`, 'utf8').startsWith('/bin/sleep')).toBe(false);
  });

  it('a ClusterIP Service resolves through CoreDNS and answers from another Pod (kube-proxy iptables rules in the node\'s namespace)', async () => {
    apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: NS, labels: { app: 'web' } },
      spec: {
        nodeSelector: { 'kubernetes.io/hostname': NODE_NAME },
        tolerations: [{ key: TAINT_KEY, operator: 'Exists', effect: 'NoSchedule' }],
        terminationGracePeriodSeconds: 1,
        containers: [{
          name: 'httpd',
          image: BUSYBOX_IMAGE,
          command: ['/bin/sh', '-c', 'mkdir /tmp/www && echo "hello from $(hostname)" > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www'],
          readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
        }],
      },
    });
    apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: NS }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } });
    const clusterIP = kubectl('get', 'service', 'web', '-n', NS, '-o', 'jsonpath={.spec.clusterIP}').trim();
    // From the control plane's Service CIDR, 198.18.128.0/20.
    expect(clusterIP).toMatch(/^198\.18\.(12[89]|13\d|14[0-3])\.\d+$/);
    const fqdn = `web.${NS}.svc.cluster.local`;
    // The client retries until the Service has its endpoint and rules (a deadline inside the container).
    const client = [
      // Names are resolved by busybox's own DNS client (nslookup): a static glibc binary cannot load NSS modules
      // in a scratch image, so nc/wget given a name fail (Debian's busybox-static wget even segfaults).
      // The answer's addresses only (busybox prints the server's own first).
      'for i in $(seq 1 60); do',
      `  ip=$(nslookup ${fqdn} 2>/tmp/err | sed -n '/^Name:/,$ s/^Address: *//p' | head -n 1)`,
      `  if [ -n "$ip" ]; then printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 2 "$ip" 80 > /tmp/response 2>>/tmp/err; fi`,
      '  if grep -q "^HTTP/1.[01] 200" /tmp/response; then break; fi; sed "s/^/http-error=/" /tmp/err; sleep 1',
      'done',
      'echo "attempts=$i"',
      'echo "resolved=$ip"',
      'tail -n 1 /tmp/response | sed "s/^/body=/"',
      'sed -n "s/^nameserver /nameserver=/p" /etc/resolv.conf',
    ].join('\n');
    apply(podManifest('client', ['/bin/sh', '-c', client], {}));
    let pod: PodJson | undefined;
    await pollUntil('pod client to finish', async () => {
      pod = getJson<PodJson>('pod', 'client', '-n', NS);
      return pod.status.phase === 'Succeeded' || pod.status.phase === 'Failed';
    }, { timeoutMs: 120_000 });
    const r = report(node.containerLog(NS, 'client', pod!.metadata.uid, 'probe'));
    process.stderr.write(`service client: ${r.get('attempts')?.[0]} attempt(s); ${JSON.stringify(r.get('http-error') ?? [])}\n`);
    expect(r.get('nameserver')).toEqual([CLUSTER_DNS_IP]);
    expect(r.get('resolved')).toEqual([clusterIP]);
    expect(r.get('body'), JSON.stringify([...r])).toEqual(['hello from web']);
  });

  it('kubectl logs, exec and port-forward reach the kubelet through the apiserver (client certificate, kubelet serving certificate verified)', async () => {
    // `web` (the Service test's httpd) still runs; `isolation` finished with its report.
    const uid = getJson<PodJson>('pod', 'isolation', '-n', NS).metadata.uid;
    const fromFile = node.containerLog(NS, 'isolation', uid, 'probe').split('\n').filter(Boolean).map((line) => line.split(' ').slice(3).join(' '));
    expect(kubectl('logs', 'isolation', '-n', NS).split('\n').filter(Boolean)).toEqual(fromFile);

    const status = kubectl('exec', 'web', '-n', NS, '--', 'cat', '/proc/1/status');
    expect(status).toMatch(/^Name:\s+httpd$/m);
    expect(status).toMatch(/^Pid:\s+1$/m);

    const forward = spawn(join(plane.binDir, 'kubectl'), ['--kubeconfig', plane.kubeconfig, 'port-forward', '-n', NS, 'pod/web', '--address', '127.0.0.1', ':8080'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = once(forward, 'exit');
    let output = '';
    forward.stdout.on('data', (d: Buffer) => (output += d.toString()));
    forward.stderr.on('data', (d: Buffer) => (output += d.toString()));
    try {
      let port = 0;
      await pollUntil('kubectl port-forward to listen', async () => {
        if (forward.exitCode !== null) throw new Error(`kubectl port-forward exited ${forward.exitCode}: ${output}`);
        port = Number(/Forwarding from 127\.0\.0\.1:(\d+) -> 8080/.exec(output)?.[1] ?? 0);
        return port > 0;
      }, { timeoutMs: 30_000 });
      const response = await fetch(`http://127.0.0.1:${port}/`);
      expect(response.status).toBe(200);
      expect(await response.text()).toBe('hello from web\n');
    } finally {
      forward.kill('SIGTERM');
      await exited;
    }
  });

  it('the `kubernetes` Service (the first address of the Service CIDR) reaches the apiserver, its certificate verified for that address', () => {
    expect(kubectl('get', 'service', 'kubernetes', '-n', 'default', '-o', 'jsonpath={.spec.clusterIP}').trim()).toBe(KUBERNETES_SERVICE_IP);
    // From inside the node's namespace, through kube-proxy's rules, with kubectl's own TLS verification.
    const readyz = node.inNode([join(plane.binDir, 'kubectl'), '--kubeconfig', plane.kubeconfig, '--server', `https://${KUBERNETES_SERVICE_IP}:443`, 'get', '--raw', '/readyz']);
    expect(readyz).toBe('ok');
  });

  it('a Pod reaches a server on the host\'s loopback through exposeHostPort, at the host-services address (not the node IP)', async () => {
    const token = randomBytes(8).toString('hex');
    const server = createServer((req, res) => res.end(`token=${token} path=${req.url}\n`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const address = await node.exposeHostPort(port);
      expect(address).toBe(`${HOST_SERVICES_IP}:${port}`);
      expect(await node.exposeHostPort(port)).toBe(address);
      const [host] = address.split(':');
      const { phase, report: r, log } = await runPod('host-client', [
        `printf 'GET /from-pod HTTP/1.0\\r\\n\\r\\n' | nc -w 5 ${host} ${port} > /tmp/response`,
        'echo "exit=$?"',
        'tail -n 1 /tmp/response | sed "s/^/body=/"',
      ].join('\n'));
      expect(phase, log).toBe('Succeeded');
      expect(r.get('body'), log).toEqual([`token=${token} path=/from-pod`]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a Pod resolves registry.npmjs.org through cluster DNS and connects to it on 443, through the node\'s NAT on the host (as the host reaches it)', async () => {
    const masqueraded = () => {
      const listing = execFileSync('iptables', ['-w', '5', '-t', 'nat', '-S', 'POSTROUTING', '-v'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      const rule = listing.split('\n').find((line) => line.includes(`${RULE_COMMENT_PREFIX}${node.id}`) && line.includes('MASQUERADE'));
      return Number(/-c (\d+) \d+/.exec(rule ?? '')?.[1] ?? -1);
    };
    // Inside the node: one static rule masquerades the Pod CIDR out of the uplink (no per-Pod CNI chains).
    const podMasquerade = () => {
      const listing = node.inNode(['iptables', '-w', '5', '-t', 'nat', '-S', 'POSTROUTING', '-v']);
      expect(listing).not.toMatch(/-j CNI-/);
      const rule = listing.split('\n').find((line) => line.includes(`-s ${POD_CIDR}`) && line.includes(`-o ${NODE_UPLINK}`) && line.includes('MASQUERADE'));
      return Number(/-c (\d+) \d+/.exec(rule ?? '')?.[1] ?? -1);
    };
    const before = masqueraded();
    expect(before).toBeGreaterThanOrEqual(0);
    const podBefore = podMasquerade();
    expect(podBefore).toBeGreaterThanOrEqual(0);
    const { phase, report: r, log } = await runPod('egress', [
      // busybox's own resolver (nslookup) against the Pod's resolv.conf (cluster DNS); IPv4 answers only.
      'for i in 1 2 3 4 5; do',
      `  ip=$(nslookup registry.npmjs.org 2>>/tmp/err | sed -n '/^Name:/,$ s/^Address: *//p' | grep -v : | head -n 1)`,
      '  if [ -n "$ip" ] && nc -w 5 "$ip" 443 -e /bin/true 2>>/tmp/err; then echo tcp=connected; break; fi',
      'done',
      'echo "resolved=$ip"',
      'sed -n "s/^nameserver /nameserver=/p" /etc/resolv.conf',
      'sed "s/^/error=/" /tmp/err',
    ].join('\n'));
    expect(phase, log).toBe('Succeeded');
    expect(r.get('nameserver')).toEqual([CLUSTER_DNS_IP]);
    expect(r.get('resolved')?.[0], log).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(r.get('tcp'), log).toEqual(['connected']);
    // The node's traffic left through the host's MASQUERADE rule for its transfer subnet.
    expect(masqueraded()).toBeGreaterThan(before);
    expect(podMasquerade()).toBeGreaterThan(podBefore);
  });

  it('Pods reach nothing outside the node but the registries and the host\'s resolvers: no route, refused at once; the stand-ins answer a Pod no NetworkPolicy selects', async () => {
    // Only the registries' and resolvers' addresses are routed out; the default route is `unreachable`.
    const routes = node.inNode(['ip', '-4', 'route', 'show']);
    expect(routes).toMatch(/^unreachable default/m);
    expect(node.egressDestinations.length).toBeGreaterThan(0);
    for (const ip of node.egressDestinations) expect(routes).toContain(`${ip} via `);
    const registry = node.egressDestinations.find((ip) => !ip.startsWith('10.255.'))!;
    const { phase, report: r, log } = await runPod('routes', [
      // 240.0.0.1 (reserved) has no route anywhere: the node answers at once, nothing leaves it.
      's=$(date +%s); nc -w 10 240.0.0.1 80 </dev/null 2>/tmp/e; echo "unrouted.exit=$?"; echo "unrouted.s=$(( $(date +%s) - s ))"; sed "s/^/unrouted.error=/" /tmp/e',
      // A ClusterIP on a port its Service does not list: kube-proxy has no rule for it, and it goes nowhere either.
      `s=$(date +%s); nc -w 10 ${KUBERNETES_SERVICE_IP} 8443 </dev/null 2>/tmp/e; echo "unlisted.exit=$?"; echo "unlisted.s=$(( $(date +%s) - s ))"; sed "s/^/unlisted.error=/" /tmp/e`,
      `nc -w 5 ${registry} 443 -e /bin/true && echo registry=connected`,
      `printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 5 ${node.standIns.metadata.ip} 80 | tail -n 1 | sed 's/^/metadata=/'`,
      `printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 5 ${node.standIns.internet.ip} 80 | tail -n 1 | sed 's/^/internet=/'`,
      `nslookup ${node.standIns.internet.host} | sed -n '/^Name:/,$ s/^Address: *//p' | head -n 1 | sed 's/^/internet.name=/'`,
    ].join('\n'));
    expect(phase, log).toBe('Succeeded');
    expect(r.get('unrouted.exit'), log).not.toEqual(['0']);
    expect(r.get('unrouted.error')?.[0], log).toMatch(/No route to host/);
    expect(Number(r.get('unrouted.s')?.[0]), log).toBeLessThanOrEqual(FAST_S);
    expect(r.get('unlisted.error')?.[0], log).toMatch(/No route to host/);
    expect(Number(r.get('unlisted.s')?.[0]), log).toBeLessThanOrEqual(FAST_S);
    expect(r.get('registry'), log).toEqual(['connected']);
    expect(r.get('metadata'), log).toEqual(['tcab stand-in metadata']);
    expect(r.get('internet'), log).toEqual(['tcab stand-in internet']);
    expect(r.get('internet.name'), log).toEqual([node.standIns.internet.ip]);
  });

  it('NetworkPolicy is enforced (kube-router\'s controller): a Pod its policy seals reaches only the Pod and port it allows; the stand-ins, the node, the apiserver and an unrouted address are refused at once', async () => {
    expect(node.processes.map((p) => p.name)).toContain('kube-router');
    // A server the policy allows, and a policy that allows the sealed Pod nothing else (no DNS either).
    apply({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'np-web', namespace: NS, labels: { app: 'np-web' } }, spec: { nodeSelector: { 'kubernetes.io/hostname': NODE_NAME }, tolerations: [{ key: TAINT_KEY, operator: 'Exists', effect: 'NoSchedule' }], terminationGracePeriodSeconds: 1, containers: [{ name: 'web', image: BUSYBOX_IMAGE, command: ['/bin/sh', '-c', 'mkdir -p /tmp/www && echo web > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www'], readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 } }] } });
    apply({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'np-sealed', namespace: NS }, spec: { podSelector: { matchLabels: { sealed: 'yes' } }, policyTypes: ['Ingress', 'Egress'], egress: [{ to: [{ podSelector: { matchLabels: { app: 'np-web' } } }], ports: [{ protocol: 'TCP', port: 8080 }] }] } });
    apply({ ...(podManifest('np-sealed', ['/bin/sh', '-c', 'sleep 300'], {}) as { metadata: object }), metadata: { name: 'np-sealed', namespace: NS, labels: { sealed: 'yes' } } });
    let web: PodJson | undefined;
    await pollUntil('web and sealed to run', async () => {
      web = getJson<PodJson>('pod', 'np-web', '-n', NS);
      // Ready: httpd listens (Running alone is not).
      return web.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true && getJson<PodJson>('pod', 'np-sealed', '-n', NS).status.phase === 'Running';
    }, { timeoutMs: 120_000 });
    // The engine applies a Pod's policy once it has seen the Pod (its next sync): wait for its chain for `sealed`.
    await pollUntil('kube-router\'s chain for the sealed Pod', async () => /POD name:np-sealed namespace: real-node/.test(node.inNode(['iptables-save', '-t', 'filter'])), { timeoutMs: 30_000 });
    const webIp = web!.status.podIP!;
    const attempt = (key: string, host: string, port: number) => `s=$(date +%s); if nc -w 5 ${host} ${port} </dev/null 2>/tmp/e; then echo ${key}=connected; else echo "${key}=$(head -n 1 /tmp/e)"; fi; echo "${key}.s=$(( $(date +%s) - s ))"`;
    const script = [
      `printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 5 ${webIp} 8080 | tail -n 1 | sed 's/^/web=/'`,
      attempt('other.port', webIp, 8081),
      attempt('internet', node.standIns.internet.ip, 80),
      attempt('metadata', node.standIns.metadata.ip, 80),
      attempt('kubelet', node.ip, 10250),
      attempt('apiserver', KUBERNETES_SERVICE_IP, 443),
      attempt('dns', CLUSTER_DNS_IP, 53),
      attempt('unrouted', '240.0.0.1', 80),
    ].join('\n');
    const out = kubectl('exec', '-n', NS, 'np-sealed', '--', '/bin/sh', '-c', script);
    const r = new Map(out.split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    expect(r.get('web'), out).toBe('web');
    for (const key of ['other.port', 'internet', 'metadata', 'kubelet', 'apiserver', 'dns']) {
      expect(r.get(key), `${key}: ${out}`).toMatch(/Connection refused/);
      expect(Number(r.get(`${key}.s`)), `${key}: ${out}`).toBeLessThanOrEqual(FAST_S);
    }
    expect(r.get('unrouted'), out).toMatch(/No route to host/);
    expect(Number(r.get('unrouted.s')), out).toBeLessThanOrEqual(FAST_S);
    kubectl('delete', 'networkpolicy', 'np-sealed', '-n', NS);
    kubectl('delete', 'pod', 'np-web', 'np-sealed', '-n', NS, '--wait=false');
  });

  it('a claim without a class gets the default StorageClass (local-path-provisioner): written by one Pod as uid 1000, read back by the next, its directory removed with the claim', async () => {
    const sc = getJson<{ metadata: { annotations?: Record<string, string> }; provisioner: string; volumeBindingMode: string; reclaimPolicy: string }>('storageclass', STORAGE_CLASS);
    expect(sc.metadata.annotations?.['storageclass.kubernetes.io/is-default-class']).toBe('true');
    expect([sc.provisioner, sc.volumeBindingMode, sc.reclaimPolicy]).toEqual(['rancher.io/local-path', 'WaitForFirstConsumer', 'Delete']);
    const claim = 'data';
    apply({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: claim, namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '16Mi' } } } });
    // The DefaultStorageClass admission plugin named the class; binding waits for a Pod (WaitForFirstConsumer).
    expect(getJson<{ spec: { storageClassName?: string } }>('pvc', claim, '-n', NS).spec.storageClassName).toBe(STORAGE_CLASS);
    const token = randomBytes(8).toString('hex');
    const withClaim = (name: string, script: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS },
      spec: {
        nodeSelector: { 'kubernetes.io/hostname': NODE_NAME },
        tolerations: [{ key: TAINT_KEY, operator: 'Exists', effect: 'NoSchedule' }],
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 1,
        securityContext: { runAsUser: 1000, runAsGroup: 1000 },
        containers: [{ name: 'probe', image: BUSYBOX_IMAGE, command: ['/bin/sh', '-c', script], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }],
      },
    });
    const finish = async (name: string) => {
      let pod: PodJson | undefined;
      await pollUntil(`pod ${name} to finish`, async () => {
        pod = getJson<PodJson>('pod', name, '-n', NS);
        return pod.status.phase === 'Succeeded' || pod.status.phase === 'Failed';
      }, { timeoutMs: 180_000 });
      const log = node.containerLog(NS, name, pod!.metadata.uid, 'probe');
      return { phase: pod!.status.phase, r: report(log), log };
    };
    apply(withClaim('pv-writer', `echo ${token} > /data/token && echo written=$?; echo uid=$(id -u)`));
    const writer = await finish('pv-writer');
    expect(writer.phase, writer.log).toBe('Succeeded');
    expect(writer.r.get('written')).toEqual(['0']);
    expect(writer.r.get('uid')).toEqual(['1000']);

    // The provisioned volume: a directory under the node's storage dir, pinned to this node, deleted with its claim.
    const pvc = getJson<{ spec: { volumeName: string }; status: { phase: string } }>('pvc', claim, '-n', NS);
    expect(pvc.status.phase).toBe('Bound');
    const pv = getJson<{ spec: { hostPath?: { path: string }; storageClassName: string; persistentVolumeReclaimPolicy: string; nodeAffinity: { required: { nodeSelectorTerms: { matchExpressions: { key: string; values: string[] }[] }[] } } } }>('pv', pvc.spec.volumeName);
    const path = pv.spec.hostPath?.path ?? '';
    expect(path).toBe(join(node.storageDir!, `${pvc.spec.volumeName}_${NS}_${claim}`));
    expect([pv.spec.storageClassName, pv.spec.persistentVolumeReclaimPolicy]).toEqual([STORAGE_CLASS, 'Delete']);
    expect(pv.spec.nodeAffinity.required.nodeSelectorTerms[0]!.matchExpressions[0]).toMatchObject({ key: 'kubernetes.io/hostname', values: [NODE_NAME] });
    expect(readFileSync(join(path, 'token'), 'utf8')).toBe(`${token}\n`);

    kubectl('delete', 'pod', 'pv-writer', '-n', NS, '--wait=true', '--timeout=60s');
    apply(withClaim('pv-reader', 'echo "read=$(cat /data/token)"'));
    const reader = await finish('pv-reader');
    expect(reader.phase, reader.log).toBe('Succeeded');
    expect(reader.r.get('read')).toEqual([token]);

    kubectl('delete', 'pod', 'pv-reader', '-n', NS, '--wait=true', '--timeout=60s');
    kubectl('delete', 'pvc', claim, '-n', NS, '--wait=true', '--timeout=60s');
    // The provisioner's teardown helper Pod (the node's busybox) removes the directory, then the PV goes.
    await pollUntil('the volume and its directory to go', async () => !existsSync(path) && kubectl('get', 'pv', '-o', 'name').trim() === '', { timeoutMs: 120_000 });
    expect(existsSync(node.storageDir!)).toBe(true);
  }, 300_000);

  it('down() leaves nothing behind: network namespace, cgroups, mounts, processes, state; kubelet\'s sysctls restored', async () => {
    const { dir, netns, cgroupRoot, id } = node;
    await node.down();
    expect(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })).not.toContain(netns);
    for (const hierarchy of internals.cgroupHierarchies()) expect(existsSync(join(hierarchy, cgroupRoot)), hierarchy).toBe(false);
    expect(internals.mountsUnder(dir)).toEqual([]);
    expect(internals.hostLeftovers(dir)).toEqual([]);
    expect(internals.processesNaming(dir)).toEqual([]);
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(join(STATE_ROOT, id))).toBe(false);
    // Another live real node on this machine (another test run) defers the restore to the last one standing.
    // The host's network: no veth, address or iptables rule of this node; no other rule added or removed.
    expect(execFileSync('ip', ['-o', 'link'], { encoding: 'utf8' })).not.toContain(`th-${id}`);
    expect(execFileSync('ip', ['-4', '-o', 'addr'], { encoding: 'utf8' })).not.toContain(`${node.ip.replace(/\.2$/, '.1')}/30`);
    expect(nodeRules((ruleId) => ruleId === id)).toEqual([]);
    expect(hostRulesOfNoNode()).toEqual(hostRulesBefore);
    const othersLive = hostRecord() !== undefined;
    const now = Object.fromEntries(internals.HOST_SYSCTLS.map((name) => [name, internals.readSysctl(name)]));
    expect(now).toEqual(othersLive ? now : sysctlsBefore);
  });
});

describe('after a crash', () => {
  it('the next start (sweepStaleNodes) removes what a SIGKILLed owner left: running containers and shims, mounts, the network namespace, cgroups, state', async () => {
    const child = spawn(process.execPath, [join(import.meta.dirname, 'node', 'cli.ts'), 'up'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TCAB_REAL_NODE_NAME: 'tcab-real-node-crash' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise((resolve) => child.on('exit', resolve));
    let info: { id: string; dir: string; netns: string; cgroupRoot: string; planeDir: string } | undefined;
    try {
      await pollUntil('the crash node to be up', async () => {
        if (child.exitCode !== null) throw new Error(`cli.ts up exited ${child.exitCode}: ${stderr}`);
        const line = stdout.split('\n').find((l) => l.startsWith('{'));
        if (line) info = JSON.parse(line) as typeof info;
        return info !== undefined;
      }, { timeoutMs: 180_000 });
      // CoreDNS runs there: its container and shim are what containerd daemonized, outside the parent-death chain.
      const shims = () => internals.processesNaming(info!.dir).filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('containerd-shim-runc-v2'));
      expect(shims().length).toBeGreaterThan(0);
      const recorded = hostRecord()!.sysctls;
      child.kill('SIGKILL');
      await exited;
      // The parent-death signal took the daemons; containerd's shims and the containers are still there.
      await pollUntil('kubelet and containerd to die with their parent', async () => internals.processesNaming(info!.dir).every((pid) => shims().includes(pid)), { timeoutMs: 20_000 });
      expect(shims().length).toBeGreaterThan(0);
      expect(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })).toContain(info!.netns);
      expect(internals.mountsUnder(info!.dir).length).toBeGreaterThan(0);
      expect(internals.hostLeftovers(info!.dir).length).toBeGreaterThan(1);
      // Its host side: the veth to the host and the NAT/FORWARD rules naming it.
      expect(execFileSync('ip', ['-o', 'link'], { encoding: 'utf8' })).toContain(`th-${info!.id}@`);
      expect(nodeRules((ruleId) => ruleId === info!.id).map((r) => r.table).sort()).toEqual(['filter', 'nat']);

      // Any node start on this machine (another test run's) sweeps dead owners' nodes too, and a second sweeper waits
      // for the first: either this call swept it or one that ran before it did.
      const swept = sweepStaleNodes();
      expect(swept.includes(info!.id) || !existsSync(join(STATE_ROOT, info!.id, 'state.json')), JSON.stringify(swept)).toBe(true);
      expect(internals.processesNaming(info!.dir)).toEqual([]);
      expect(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })).not.toContain(info!.netns);
      for (const hierarchy of internals.cgroupHierarchies()) expect(existsSync(join(hierarchy, info!.cgroupRoot)), hierarchy).toBe(false);
      expect(internals.mountsUnder(info!.dir)).toEqual([]);
      expect(internals.hostLeftovers(info!.dir)).toEqual([]);
      expect(execFileSync('ip', ['-o', 'link'], { encoding: 'utf8' })).not.toContain(`th-${info!.id}@`);
      expect(nodeRules((ruleId) => ruleId === info!.id)).toEqual([]);
      expect(existsSync(info!.dir)).toBe(false);
      expect(existsSync(join(STATE_ROOT, info!.id))).toBe(false);
      const othersLive = hostRecord() !== undefined;
      const now = Object.fromEntries(internals.HOST_SYSCTLS.map((name) => [name, internals.readSysctl(name)]));
      expect(now).toEqual(othersLive ? now : recorded);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      sweepStaleNodes();
      if (info) rmSync(info.planeDir, { recursive: true, force: true });
    }
  }, 300_000);
});
