// A real Kubernetes node for the test control plane (issue 20): containerd + runc + the CNI bridge + kubelet, in a
// network namespace of its own, pulling images from a local registry (crane) that also lives in that namespace.
//
// Layout:
//   host netns:   kube-apiserver on 127.0.0.1:<port>  <-  socket-bridge (unix:<dir>/apiserver.sock -> tcp);
//                 veth th-<id> 198.19.<n>.1/30 to the node, NAT for its traffic (network.ts).
//   node netns:   uplink 198.19.<n>.2/30 = the node IP (routes via the host end to the package registries only),
//                 kube-router's network policy controller (NetworkPolicy enforced with iptables + ipset on the
//                 bridged Pod traffic), the stand-in metadata endpoint 169.254.169.254 (stand-ins.ts), socket-bridge (tcp
//                 0.0.0.0:6443 -> unix socket), kubelet (server https://127.0.0.1:6443), containerd (its own
//                 root/state/socket under <dir>), crane registry on 127.0.0.1:5000 (pods name it
//                 registry.tcab.test:5000 through containerd's hosts.toml), CNI bridge tcab0 198.18.0.1/24 with
//                 host-local IPAM, pods in 198.18.0.0/24 (masqueraded to the node IP on the way out).
// Everything runs in the host mount namespace (nsenter --net only), so kubelet's volume mounts are visible to
// containerd and runc. cgroups: cgroupfs driver under /tcab-<id> in every hierarchy (this machine kind boots
// cgroup v1, hybrid). kubelet rewrites a few host-wide sysctls at start (vm.overcommit_memory, kernel.panic,
// kernel.panic_on_oops, ...), Pod egress needs net.ipv4.ip_forward=1, and kubelet makes a few host paths whatever
// its --root-dir (/var/lib/kubelet/device-plugins, /var/log/containers): the first node records the originals in
// STATE_ROOT/host.json and the last one to go restores them.
//
// Cleanup is idempotent and also runs at start for a node whose owner died (state in STATE_ROOT/<id>/state.json):
// processes in the node's cgroups, shims and daemons naming its directory, mounts under its directory, its network
// namespace, its veth and host iptables rules, cgroups, CNI result cache entries, the sysctls.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, rmdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startProcess, whileRunning } from '../processes.ts';
import { pollUntil } from '../../support/poll.ts';
import type { Managed } from '../processes.ts';
import { CLUSTER_DNS_IP, SERVICE_CIDR, kubeconfig } from '../control-plane.ts';
import { HOST_SERVICES_IP, allocateTransfer, cutNodeLinks, egressDestinations, hostResolvers, NODE_UPLINK, removeOrphans, removeUplink, setUpUplink } from './network.ts';
export { HOST_SERVICES_IP };
import { STAND_IN_SERVER, removeStandInNetwork, setUpStandInNetwork, standInHostsEntries } from './stand-ins.ts';
import type { StandIns } from './stand-ins.ts';
import type { Transfer } from './network.ts';

export const STATE_ROOT = '/run/tcab-real-node';
export const REGISTRY = 'registry.tcab.test:5000';
/** Node 0's Pod CIDR (podSubnet 0): the only node of a one-node cluster. */
export const POD_CIDR = '198.18.0.0/24';
/** Every node's Pod CIDR is a /24 of this (kube-proxy's clusterCIDR); the Service CIDR (198.18.128.0/20) is outside it. */
export const CLUSTER_POD_CIDR = '198.18.0.0/17';
const MAX_POD_SUBNET = 127;
/** The Pod CIDR of node `podSubnet` of a cluster: 198.18.<podSubnet>.0/24. */
export function podCidrOf(podSubnet: number): { cidr: string; gateway: string } {
  if (!Number.isInteger(podSubnet) || podSubnet < 0 || podSubnet > MAX_POD_SUBNET) throw new Error(`podSubnet ${podSubnet} is not in 0..${MAX_POD_SUBNET}`);
  return { cidr: `198.18.${podSubnet}.0/24`, gateway: `198.18.${podSubnet}.1` };
}
export const TAINT_KEY = 'tcab.test/real-node';
export const PAUSE_IMAGE = `${REGISTRY}/tcab/pause:3.10.2`;
export const BUSYBOX_IMAGE = `${REGISTRY}/tcab/busybox:1.35`;
export const COREDNS_IMAGE = `${REGISTRY}/tcab/coredns:1.15.0`;
export const LOCAL_PATH_PROVISIONER_IMAGE = `${REGISTRY}/tcab/local-path-provisioner:0.0.30`;
/** The default StorageClass (storage option): rancher's local-path-provisioner, volumes under `<dir>/local-path`. */
export const STORAGE_CLASS = 'local-path';
export const STORAGE_NAMESPACE = 'local-path-storage';
/** kube-dns's ClusterIP, .10 of the control plane's Service CIDR (control-plane.ts). */
export { CLUSTER_DNS_IP };
/** The sysctls kubelet's setupKernelTunables may write (pkg/kubelet/cm/container_manager_linux.go). */
const KUBELET_SYSCTLS = ['vm/overcommit_memory', 'vm/panic_on_oom', 'kernel/panic', 'kernel/panic_on_oops', 'kernel/keys/root_maxkeys', 'kernel/keys/root_maxbytes'];
/** Host sysctls a node changes, recorded by the first live node and restored by the last: kubelet's, and forwarding for Pod egress. */
const HOST_SYSCTLS = [...KUBELET_SYSCTLS, 'net/ipv4/ip_forward'];
const CGROUP_FS = '/sys/fs/cgroup';
const LOCAL_REGISTRY_PORT = 5000;
const APISERVER_PORT_IN_NODE = 6443;
const BRIDGE_SCRIPT = join(import.meta.dirname, 'socket-bridge.ts');
/** kube-router's client certificate's user (its ClusterRole: applyServices). */
const KUBE_ROUTER_USER = 'system:tcab:kube-router';

/** The node binaries, built or reused (build/node-binaries.sh; prints the cold/warm time on stderr). */
export function nodeBinaries(): string {
  return execFileSync(join(import.meta.dirname, '..', 'build', 'node-binaries.sh'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

export interface RealNodeOptions {
  /** The node's directory (created; removed by down()). */
  dir: string;
  /** node-binaries.sh's bin directory. */
  binDir: string;
  /** kubectl's directory (the control plane's bin dir). */
  clusterBinDir: string;
  /** The apiserver URL on the host's loopback, e.g. https://127.0.0.1:34567. */
  server: string;
  /** An admin kubeconfig for the control plane (waits for the node to be Ready). */
  adminKubeconfig: string;
  /** The control plane's CA: signs the kubelet's client certificate. */
  caCert: string;
  caKey: string;
  nodeName: string;
  /** kube-proxy (iptables mode, in the node's namespace) and CoreDNS as a Deployment + the kube-dns Service (default true). */
  withServices?: boolean;
  /** Registered with a NoSchedule taint TAINT_KEY=true so other tests' Pods never land here (default true). */
  taint?: boolean;
  /**
   * Dynamic PersistentVolumes as an operator's cluster has them (default true; needs withServices): rancher's
   * local-path-provisioner as a Deployment in STORAGE_NAMESPACE and the default StorageClass STORAGE_CLASS
   * (WaitForFirstConsumer, reclaim Delete), each volume a directory under `<dir>/local-path` made and removed by a
   * helper Pod of the node's busybox.
   */
  storage?: boolean;
  /**
   * Which /24 of CLUSTER_POD_CIDR the node's Pods get (podCidrOf; default 0). The nodes of one cluster need distinct
   * ones: linkNodes routes each node's Pod CIDR to the others.
   */
  podSubnet?: number;
  /**
   * Whether this node writes the cluster's own objects (the `kubernetes` Service's endpoint at this node's IP,
   * CoreDNS, the provisioner, kube-router's RBAC), pinned to it (default true). The further nodes of a multi-node
   * cluster: false (they start after the first, whose objects they use).
   */
  clusterServices?: boolean;
  /**
   * The kubelet's node Lease duration (it renews every quarter of it; Kubernetes' default 40 s). A cluster whose
   * control plane declares nodes lost quickly (control-plane.ts nodeMonitorGracePeriodSeconds) needs it short.
   */
  nodeLeaseDurationSeconds?: number;
  dieWithParent: boolean;
}

export interface RealNode {
  id: string;
  name: string;
  dir: string;
  /** The node's IP: Pods reach the node (and exposeHostPort's servers) there; it is the Node's InternalIP. */
  ip: string;
  /** Its Pods' addresses (podCidrOf(podSubnet).cidr). */
  podCidr: string;
  /** The registry name Pods' images use (`${registry}/tcab/<name>:<tag>`), served by the node's local registry. */
  registry: string;
  /** The local registry's address inside the node's network namespace, for pushes run through nodeArgv/inNode. */
  registryInNode: string;
  /** The network namespace's name (`ip netns`) and its path (`nsenter --net=<netnsPath>`). */
  netns: string;
  netnsPath: string;
  cgroupRoot: string;
  /** The digests the local registry serves for PAUSE_IMAGE, BUSYBOX_IMAGE, COREDNS_IMAGE (and LOCAL_PATH_PROVISIONER_IMAGE with storage). */
  digests: { pause: string; busybox: string; coredns: string; localPathProvisioner?: string };
  /** Where the provisioner makes volumes (`<dir>/local-path`), with the storage option; removed with the node. */
  storageDir?: string;
  /** The hosts a sealed run must not reach, stood in on the node (stand-ins.ts): the metadata endpoint, "the internet". */
  standIns: StandIns;
  /** The addresses outside the node Pods may reach (the registries' and the host resolvers'); nothing else is routed. */
  egressDestinations: string[];
  timings: Record<string, number>;
  processes: Managed[];
  /** The kubelet's log file for a container (CRI format: `<time> <stream> <F|P> <line>`). */
  containerLog(namespace: string, pod: string, uid: string, container: string, restart?: number): string;
  /** Runs a command inside the node's network namespace (synchronously; returns its stdout). */
  inNode(argv: string[]): string;
  /** The argv that runs `argv` inside the node's network namespace (for spawn). */
  nodeArgv(argv: string[]): string[];
  /**
   * Makes a TCP server listening on the host's 127.0.0.1:<port> reachable from Pods at `<HOST_SERVICES_IP>:<port>`
   * (a socket bridge per port; idempotent). Returns that `host:port`.
   */
  exposeHostPort(port: number): Promise<string>;
  /**
   * The node loses power: every process of it (kubelet, containerd, shims, Pods, bridges) SIGKILLed at once and its
   * links down, so the apiserver and the other nodes hear nothing more from it (no refusals). Its Node object and
   * Pods stay in the API for the control plane to deal with, as after a real power cut. down() still cleans up.
   */
  kill(): void;
  down(): Promise<void>;
}

interface State {
  id: string;
  pid: number;
  dir: string;
  netns: string;
  cgroupRoot: string;
  cniNetwork: string;
  /** The node's veth to the host (absent in states of nodes from before it existed). */
  transfer?: Transfer;
}

const sh = (argv: string[], options: { input?: string } = {}) =>
  execFileSync(argv[0]!, argv.slice(1), { encoding: 'utf8', stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], input: options.input });
const quiet = (argv: string[]) => spawnSync(argv[0]!, argv.slice(1), { stdio: 'ignore' }).status === 0;
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Every cgroup v1 hierarchy (plus the unified one) this machine mounts under /sys/fs/cgroup. */
function cgroupHierarchies(): string[] {
  const seen = new Set<string>();
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const fields = line.split(' ');
    const mountPoint = fields[4];
    const fsType = fields[fields.indexOf('-') + 1];
    if (mountPoint?.startsWith(`${CGROUP_FS}/`) && (fsType === 'cgroup' || fsType === 'cgroup2')) seen.add(mountPoint);
  }
  return [...seen];
}

/** Every cgroup directory below `root` in one hierarchy, deepest first. */
function cgroupTree(hierarchy: string, root: string): string[] {
  const top = join(hierarchy, root);
  if (!existsSync(top)) return [];
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) walk(join(dir, entry.name));
    out.push(dir);
  };
  walk(top);
  return out;
}

function killCgroupProcesses(cgroupRoot: string): void {
  for (let round = 0; round < 50; round++) {
    let found = 0;
    for (const hierarchy of cgroupHierarchies()) {
      for (const dir of cgroupTree(hierarchy, cgroupRoot)) {
        const procs = readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
        for (const pid of procs) {
          found++;
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      }
    }
    if (found === 0) return;
    // Frozen or exiting tasks leave cgroup.procs a little after SIGKILL; poll until it is empty.
    spawnSync('sleep', ['0.1']);
  }
}

/** Processes whose command line names `needle` (the node's directory or namespace): shims, daemons, bridges. */
function processesNaming(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').some((arg) => arg.includes(needle))) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

function mountsUnder(dir: string): string[] {
  const decode = (s: string) => s.replace(/\\(\d{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => decode(line.split(' ')[4] ?? ''))
    .filter((mountPoint) => mountPoint === dir || mountPoint.startsWith(`${dir}/`));
}

function readSysctl(name: string): string | undefined {
  try {
    return readFileSync(`/proc/sys/${name}`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

function liveStates(exceptId?: string): State[] {
  if (!existsSync(STATE_ROOT)) return [];
  const out: State[] = [];
  for (const id of readdirSync(STATE_ROOT)) {
    if (id === exceptId) continue;
    try {
      const state = JSON.parse(readFileSync(join(STATE_ROOT, id, 'state.json'), 'utf8')) as State;
      if (alive(state.pid)) out.push(state);
    } catch {
      // not a state dir
    }
  }
  return out;
}

/**
 * Host paths kubelet uses whatever its --root-dir: the device-plugin socket directory and the
 * /var/log/containers symlinks. Removed (when empty of anything but ours) if no node found them there.
 */
const KUBELET_HOST_PATHS = ['/var/lib/kubelet', '/var/lib/kubelet/device-plugins', '/var/log/containers'];

interface HostRecord {
  sysctls: Record<string, string | undefined>;
  /** Host paths that did not exist before the first live node. */
  created: string[];
}

/**
 * A machine-wide lock (mkdir is atomic; a holder that died is broken once its pid is gone). The host lock guards
 * the host record and the transfer-net allocation: one node's start (state + record) and another's last-one-out
 * restore never interleave. A sweep lock per stale node keeps two starts from cleaning up the same node at once.
 */
function withLock<T>(lock: string, timeoutMs: number, fn: () => T): T {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      let holder = 0; // 0: the holder has not written its pid yet, or just released the lock
      try {
        holder = Number(readFileSync(join(lock, 'pid'), 'utf8') || '0');
      } catch {
        // no pid file (yet, or any more)
      }
      if (holder > 0 && !alive(holder)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`${lock} held by pid ${holder} for ${timeoutMs / 1000} s`, { cause: error });
      else spawnSync('sleep', ['0.05']);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

const withHostLock = <T>(fn: () => T): T => withLock(join(STATE_ROOT, 'host.lock'), 30_000, fn);

function recordHost(): void {
  const file = join(STATE_ROOT, 'host.json');
  // Another live node (or a crashed one) may have recorded the originals first: keep them, adding only what an
  // older record lacks (a node of a previous version did not change it, so its value now is the original).
  const record: HostRecord = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as HostRecord)
    : { sysctls: {}, created: KUBELET_HOST_PATHS.filter((path) => !existsSync(path)) };
  for (const name of HOST_SYSCTLS) if (!(name in record.sysctls)) record.sysctls[name] = readSysctl(name);
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
}

/** Once no live node remains: restores the recorded sysctls and removes the host paths kubelet made. */
/** The host record of the live nodes (what the last one to go restores), if any. */
export function hostRecord(): HostRecord | undefined {
  const file = join(STATE_ROOT, 'host.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as HostRecord) : undefined;
}

/** Call with the host lock held. */
function restoreHost(exceptId?: string): Record<string, string> {
  const file = join(STATE_ROOT, 'host.json');
  if (!existsSync(file) || liveStates(exceptId).length > 0) return {};
  const recorded = JSON.parse(readFileSync(file, 'utf8')) as HostRecord;
  const restored: Record<string, string> = {};
  for (const [name, value] of Object.entries(recorded.sysctls)) {
    if (value === undefined || readSysctl(name) === value) continue;
    writeFileSync(`/proc/sys/${name}`, value);
    restored[name] = value;
  }
  if (recorded.created.includes('/var/lib/kubelet/device-plugins')) rmSync('/var/lib/kubelet/device-plugins/kubelet.sock', { force: true });
  for (const path of [...recorded.created].sort((a, b) => b.length - a.length)) {
    try {
      rmdirSync(path);
    } catch {
      // not empty: something else uses it now; leave it
    }
  }
  rmSync(file, { force: true });
  return restored;
}

/** Removes everything a node made. Idempotent; safe on a half-started node. */
export function cleanupNode(state: State): void {
  // 1. Pods' processes (in the node's cgroups), then shims, daemons and bridges naming the node's directory.
  killCgroupProcesses(state.cgroupRoot);
  for (let round = 0; round < 50; round++) {
    const pids = [...processesNaming(state.dir), ...processesNaming(`/run/netns/${state.netns}`)];
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    spawnSync('sleep', ['0.1']);
  }
  killCgroupProcesses(state.cgroupRoot);
  // 2. Mounts under the directory (rootfs overlays, shm, pod volumes, netns bind mounts), deepest first.
  for (let round = 0; round < 5; round++) {
    const mounts = mountsUnder(state.dir).sort((a, b) => b.length - a.length);
    if (mounts.length === 0) break;
    for (const mountPoint of mounts) quiet(['umount', '-l', mountPoint]);
  }
  // 3. The network namespace (its bridge, veths and iptables rules go with it), the host end of its uplink and the
  // host's NAT/FORWARD rules naming it.
  quiet(['ip', 'netns', 'del', state.netns]);
  removeStandInNetwork(state.netns);
  removeUplink(state.id, state.transfer?.hostIf);
  // 4. cgroups, deepest first, in every hierarchy.
  for (const hierarchy of cgroupHierarchies()) {
    for (const dir of cgroupTree(hierarchy, state.cgroupRoot)) {
      try {
        rmdirSync(dir);
      } catch {
        // a task still exiting; swept again next start
      }
    }
  }
  // 5. libcni's result cache (always /var/lib/cni/results, entries <network>-<container>-<ifname>): a Pod never
  // torn down (killed with its node) leaves its entry; ours are those of our network or naming our directory.
  const results = '/var/lib/cni/results';
  for (const entry of existsSync(results) ? readdirSync(results) : []) {
    let ours = entry.startsWith(`${state.cniNetwork}-`);
    try {
      ours ||= ((JSON.parse(readFileSync(join(results, entry), 'utf8')) as { netns?: string }).netns ?? '').startsWith(`${state.dir}/`);
    } catch {
      // not a cache entry
    }
    if (ours) rmSync(join(results, entry), { force: true });
  }
  // 6. kubelet's /var/log/containers links into the node's pod log directory.
  const links = '/var/log/containers';
  for (const entry of existsSync(links) ? readdirSync(links) : []) {
    try {
      if (readlinkSync(join(links, entry)).startsWith(`${state.dir}/`)) rmSync(join(links, entry), { force: true });
    } catch {
      // not a link
    }
  }
  rmSync(state.dir, { recursive: true, force: true });
  rmSync(join(STATE_ROOT, state.id), { recursive: true, force: true });
  withHostLock(() => restoreHost(state.id));
}

/** Cleans up after nodes whose owning process died (a crashed or killed test run). */
export function sweepStaleNodes(): string[] {
  if (!existsSync(STATE_ROOT)) return [];
  const swept: string[] = [];
  for (const id of readdirSync(STATE_ROOT)) {
    const file = join(STATE_ROOT, id, 'state.json');
    if (!existsSync(file)) continue;
    const stale = JSON.parse(readFileSync(file, 'utf8')) as State;
    if (alive(stale.pid)) continue;
    // Another start may be sweeping the same node: wait for it (then the state is gone) rather than race it.
    withLock(join(STATE_ROOT, `${id}.sweep`), 120_000, () => {
      if (!existsSync(file)) return;
      cleanupNode(stale);
      swept.push(id);
    });
  }
  withHostLock(() => {
    removeOrphans(new Set(liveStates().map((live) => live.id)));
    restoreHost();
  });
  return swept;
}

/** A certificate from the control plane's CA: a client's (clientAuth), or with `sans` a server's (serverAuth). */
function signedCert(dir: string, name: string, subject: string, ca: { cert: string; key: string }, sans?: string[]): { cert: string; key: string } {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.crt`);
  const ext = join(dir, `${name}.ext`);
  sh(['openssl', 'genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key]);
  const usage = sans ? `extendedKeyUsage=serverAuth\nsubjectAltName=${sans.join(',')}\n` : 'extendedKeyUsage=clientAuth\n';
  writeFileSync(ext, `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n${usage}`);
  sh(['openssl', 'req', '-new', '-key', key, '-subj', subject, '-out', csr]);
  sh(['openssl', 'x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-CAserial', join(dir, 'ca.srl'), '-days', '7', '-sha256', '-extfile', ext, '-out', cert]);
  return { cert, key };
}

/**
 * A one-layer image tarball: `files` maps a path in the image to a host file (copied), `->target` (a symlink) or
 * `dir:<octal mode>` (a directory, e.g. `tmp`: `dir:1777`).
 */
function layerTarball(stage: string, tarball: string, files: Record<string, string>): void {
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  for (const [path, source] of Object.entries(files)) {
    const target = join(stage, path);
    mkdirSync(join(target, '..'), { recursive: true });
    if (source.startsWith('->')) symlinkSync(source.slice(2), target);
    else if (source.startsWith('dir:')) {
      mkdirSync(target, { recursive: true });
      chmodSync(target, parseInt(source.slice(4), 8));
    }
    else {
      writeFileSync(target, readFileSync(source));
      chmodSync(target, statSync(source).mode & 0o777);
    }
  }
  // Numeric root ownership and a fixed mtime: the same inputs give the same layer digest.
  sh(['tar', '--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '-C', stage, '-cf', tarball, '.']);
}

export async function startRealNode(options: RealNodeOptions): Promise<RealNode> {
  const timings: Record<string, number> = {};
  const t0 = Date.now();
  const mark = (name: string) => (timings[name] = Date.now() - t0);
  mkdirSync(STATE_ROOT, { recursive: true, mode: 0o700 });
  const swept = sweepStaleNodes();
  if (swept.length > 0) process.stderr.write(`real node: swept stale nodes ${swept.join(', ')}\n`);
  mark('sweep_ms');

  const id = `rn${randomBytes(4).toString('hex')}`;
  const dir = options.dir;
  const state: State = { id, pid: process.pid, dir, netns: `tcab-${id}`, cgroupRoot: `/tcab-${id}`, cniNetwork: `tcab-${id}` };
  mkdirSync(join(STATE_ROOT, id), { recursive: true });
  // Written before anything exists, so a crash at any later point is swept by the next start.
  // The host record (sysctls, host paths) is taken under the same lock, before kubelet can change anything, and
  // so is the transfer subnet (unique among live nodes: several test runs may hold nodes at once).
  withHostLock(() => {
    state.transfer = allocateTransfer(id, liveStates(id).flatMap((live) => (live.transfer ? [live.transfer.index] : [])));
    writeFileSync(join(STATE_ROOT, id, 'state.json'), `${JSON.stringify(state)}\n`);
    recordHost();
  });
  const transfer = state.transfer!;
  const nodeIp = transfer.nodeIp;
  const pods = podCidrOf(options.podSubnet ?? 0);
  const logDir = join(dir, 'logs');
  for (const d of [dir, logDir, join(dir, 'pki'), join(dir, 'images')]) mkdirSync(d, { recursive: true, mode: 0o700 });
  const processes: Managed[] = [];
  const bin = (name: string) => join(options.binDir, name);
  const netnsPath = `/run/netns/${state.netns}`;
  const inNodeArgv = (argv: string[]) => ['nsenter', `--net=${netnsPath}`, '--', ...argv];
  const inNode = (argv: string[]) => sh(inNodeArgv(argv));
  const env = { ...process.env, PATH: `${options.binDir}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}` };
  const start = (name: string, argv: string[]) => {
    const p = startProcess(name, inNodeArgv(argv), { logDir, dieWithParent: options.dieWithParent, env });
    processes.push(p);
    return p;
  };
  // Host servers (NATS, stub models) for Pods: the same two bridges per port, the node side on HOST_SERVICES_IP
  // only (0.0.0.0 would collide with the namespace's own loopback listeners: the registry, kubelet's healthz, ...),
  // an address of their own so a NetworkPolicy can let Pods reach the test's servers without the node itself (the
  // kubelet and the apiserver's bridge listen on the node IP).
  const exposed = new Map<number, Promise<string>>();
  const exposeHostPort = (port: number): Promise<string> => {
    if (!Number.isInteger(port) || port < 1 || port > 65535) return Promise.reject(new Error(`exposeHostPort: bad port ${port}`));
    let done = exposed.get(port);
    if (!done) {
      done = (async () => {
        mkdirSync(join(dir, 'expose'), { recursive: true });
        const socketPath = join(dir, 'expose', `${port}.sock`);
        const host = startProcess(`expose-${port}-host`, [process.execPath, BRIDGE_SCRIPT, '--listen', `unix:${socketPath}`, '--to', `tcp:127.0.0.1:${port}`], { logDir, dieWithParent: options.dieWithParent });
        processes.push(host);
        await pollUntil(`the host side of exposed port ${port}`, async () => readFileSync(host.log, 'utf8').includes('bridging'), { timeoutMs: 20_000, ...whileRunning(host) });
        const inside = start(`expose-${port}-node`, [process.execPath, BRIDGE_SCRIPT, '--listen', `tcp:${HOST_SERVICES_IP}:${port}`, '--to', `unix:${socketPath}`]);
        await pollUntil(`the node side of exposed port ${port}`, async () => readFileSync(inside.log, 'utf8').includes('bridging'), { timeoutMs: 20_000, ...whileRunning(inside) });
        return `${HOST_SERVICES_IP}:${port}`;
      })();
      exposed.set(port, done);
      done.catch(() => exposed.delete(port)); // a failed attempt (port taken in the namespace) may be retried
    }
    return done;
  };
  let stopped = false;
  const down = async () => {
    if (stopped) return;
    stopped = true;
    // kubelet first (so it does not restart what we stop), then the rest; cleanupNode kills what is left.
    for (const p of [...processes].reverse()) await p.stop(3000);
    // TCAB_KEEP_CLUSTER_DIR=1 keeps the node's logs (kubelet, containerd, registry, bridges) beside its directory.
    if (process.env.TCAB_KEEP_CLUSTER_DIR === '1' && existsSync(logDir)) {
      cpSync(logDir, `${dir}-logs`, { recursive: true });
      process.stderr.write(`real node logs kept in ${dir}-logs\n`);
    }
    cleanupNode(state);
  };

  try {
    // The network namespace: loopback up, the uplink to the host (node IP, default route, NAT on the host).
    sh(['ip', 'netns', 'add', state.netns]);
    sh(['ip', '-n', state.netns, 'link', 'set', 'lo', 'up']);
    const destinations = egressDestinations();
    setUpUplink(state.netns, id, transfer, destinations, SERVICE_CIDR);
    // Bridged Pod-to-Pod traffic through iptables (per namespace): what the NetworkPolicy engine filters.
    inNode(['sysctl', '-q', '-w', 'net.bridge.bridge-nf-call-iptables=1']);
    // A destination with no route answers "No route to host" at once, also to a Pod a NetworkPolicy selects: the
    // node's ICMP error belongs to no confirmed connection (the packet it answers never got past routing), so
    // kube-router's per-Pod chain would drop it as INVALID and the Pod's connect would wait for its own timeout;
    // untracked, the chain's accept for traffic from the node lets it through. No per-destination ICMP rate limit
    // in this namespace either (1 s by default: a burst of connects would mostly time out).
    inNode(['iptables', '-w', '5', '-t', 'raw', '-A', 'OUTPUT', '-p', 'icmp', '--icmp-type', 'host-unreachable', '-j', 'CT', '--notrack']);
    inNode(['sysctl', '-q', '-w', 'net.ipv4.icmp_ratelimit=0']);
    const { standIns, internetArgv } = setUpStandInNetwork(state.netns);
    inNode(['ip', 'addr', 'add', `${HOST_SERVICES_IP}/32`, 'dev', 'lo']);
    // Pod egress: one static rule masquerades the Pod CIDR to the node IP on its way out of the uplink (it goes with
    // the namespace). The CNI bridge's own ipMasq did the same per Pod with ~20 iptables runs at each Pod's start and
    // stop (chain, rules, teardown, each under the xtables lock): the largest share of a sandbox's CPU (churn.ts).
    inNode(['iptables', '-w', '5', '-t', 'nat', '-A', 'POSTROUTING', '-s', pods.cidr, '-o', NODE_UPLINK, '-j', 'MASQUERADE']);
    // Host-wide, recorded in host.json above; the last node out restores it.
    if (readSysctl('net/ipv4/ip_forward') !== '1') writeFileSync('/proc/sys/net/ipv4/ip_forward', '1');
    mark('netns_ms');
    const metadataServer = start('stand-in-metadata', [process.execPath, STAND_IN_SERVER, '--listen', `${standIns.metadata.ip}:${standIns.metadata.port}`, '--name', 'metadata']);
    const internetServer = startProcess('stand-in-internet', internetArgv([process.execPath, STAND_IN_SERVER, '--listen', `${standIns.internet.ip}:${standIns.internet.port}`, '--name', 'internet']), { logDir, dieWithParent: options.dieWithParent });
    processes.push(internetServer);
    for (const server of [metadataServer, internetServer]) await pollUntil(`${server.name} to listen`, async () => readFileSync(server.log, 'utf8').includes('listening'), { timeoutMs: 20_000, ...whileRunning(server) });

    // The apiserver, reachable at 127.0.0.1:6443 inside the namespace through a Unix socket (and at nodeIp:6443
    // from pods, which route to the node's namespace through the bridge: the `kubernetes` Service's endpoint).
    const apiserver = new URL(options.server);
    const apiSocket = join(dir, 'apiserver.sock');
    const hostBridge = startProcess('apiserver-bridge-host', [process.execPath, BRIDGE_SCRIPT, '--listen', `unix:${apiSocket}`, '--to', `tcp:${apiserver.hostname}:${apiserver.port}`], { logDir, dieWithParent: options.dieWithParent });
    processes.push(hostBridge);
    const nodeBridge = start('apiserver-bridge-node', [process.execPath, BRIDGE_SCRIPT, '--listen', `tcp:0.0.0.0:${APISERVER_PORT_IN_NODE}`, '--to', `unix:${apiSocket}`]);
    await pollUntil('the apiserver bridge', async () => existsSync(apiSocket) && readFileSync(nodeBridge.log, 'utf8').includes('bridging'), { timeoutMs: 20_000, ...whileRunning(nodeBridge) });

    // The local registry, inside the namespace; images pushed from there too.
    const registryDir = join(dir, 'registry');
    mkdirSync(registryDir, { recursive: true });
    const registryAddress = `127.0.0.1:${LOCAL_REGISTRY_PORT}`;
    const registry = start('registry', [bin('crane'), 'registry', 'serve', '--address', registryAddress, '--disk', registryDir]);
    await pollUntil('the local registry', async () => quiet(inNodeArgv([bin('crane'), 'catalog', '--insecure', registryAddress])), { timeoutMs: 20_000, ...whileRunning(registry) });
    mark('registry_ms');
    const push = (name: string, tag: string, files: Record<string, string>, entrypoint: string[]) => {
      const tarball = join(dir, 'images', `${name}.tar`);
      layerTarball(join(dir, 'images', `${name}-root`), tarball, files);
      const ref = `${registryAddress}/tcab/${name}:${tag}`;
      inNode([bin('crane'), 'append', '--insecure', '--platform', 'linux/amd64', '-f', tarball, '-t', ref]);
      inNode([bin('crane'), 'mutate', '--insecure', ref, '--entrypoint', entrypoint.join(','), '--set-platform', 'linux/amd64', '-t', ref]);
      return inNode([bin('crane'), 'digest', '--insecure', ref]).trim();
    };
    const busyboxFiles: Record<string, string> = { 'bin/busybox': '/bin/busybox', tmp: 'dir:1777' };
    for (const applet of sh(['/bin/busybox', '--list']).split('\n').filter((a) => a && a !== 'busybox')) busyboxFiles[`bin/${applet}`] = '->busybox';
    const withServices = options.withServices !== false;
    const withStorage = withServices && options.storage !== false;
    const clusterServices = options.clusterServices !== false;
    const digests: RealNode['digests'] = {
      pause: push('pause', '3.10.2', { pause: bin('pause') }, ['/pause']),
      busybox: push('busybox', '1.35', busyboxFiles, ['/bin/sh']),
      coredns: push('coredns', '1.15.0', { coredns: bin('coredns') }, ['/coredns']),
    };
    if (withStorage) digests.localPathProvisioner = push('local-path-provisioner', '0.0.30', { 'local-path-provisioner': bin('local-path-provisioner') }, ['/local-path-provisioner']);
    mark('images_ms');
    const storageDir = withStorage ? join(dir, 'local-path') : undefined;
    if (storageDir) mkdirSync(storageDir, { recursive: true, mode: 0o755 });

    // containerd: its own root, state and socket; the registry under a stable name; runc with cgroupfs.
    const containerdDir = join(dir, 'containerd');
    const hostsDir = join(containerdDir, 'certs.d', REGISTRY);
    mkdirSync(hostsDir, { recursive: true });
    writeFileSync(join(hostsDir, 'hosts.toml'), `server = "http://${registryAddress}"\n\n[host."http://${registryAddress}"]\n  capabilities = ["pull", "resolve"]\n`);
    const cniConfDir = join(dir, 'cni', 'net.d');
    mkdirSync(cniConfDir, { recursive: true });
    writeFileSync(join(cniConfDir, '10-tcab.conflist'), `${JSON.stringify({
      cniVersion: '1.0.0',
      name: state.cniNetwork,
      plugins: [
        // No ipMasq (the static MASQUERADE rule above) and no portmap plugin (nothing here uses hostPort; portmap ran
        // iptables and ip6tables at every Pod's teardown even without port mappings).
        { type: 'bridge', bridge: 'tcab0', isGateway: true, ipMasq: false, hairpinMode: true, ipam: { type: 'host-local', ranges: [[{ subnet: pods.cidr, gateway: pods.gateway }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: join(dir, 'cni', 'ipam') } },
      ],
    }, null, 2)}\n`);
    const socket = join(containerdDir, 'containerd.sock');
    const q = (s: string) => JSON.stringify(s);
    writeFileSync(join(containerdDir, 'config.toml'), [
      'version = 3',
      `root = ${q(join(containerdDir, 'root'))}`,
      `state = ${q(join(containerdDir, 'state'))}`,
      `[grpc]\n  address = ${q(socket)}`,
      `[ttrpc]\n  address = ${q(`${socket}.ttrpc`)}`,
      `[debug]\n  address = ""`,
      `[metrics]\n  address = ""`,
      `[plugins.'io.containerd.internal.v1.opt']\n  path = ${q(join(containerdDir, 'opt'))}`,
      // Shim sockets (default /run/containerd/s; at most 42 characters) and runc's state (default
      // /run/containerd/runc) in the node's own directories, so a killed node leaves nothing there.
      `[plugins.'io.containerd.shim.v1.manager']\n  socket_dir = ${q(join(STATE_ROOT, id, 's'))}`,
      `[plugins.'io.containerd.nri.v1.nri']\n  disable = true`,
      `[plugins.'io.containerd.grpc.v1.cri']\n  stream_server_address = "127.0.0.1"`,
      `[plugins.'io.containerd.cri.v1.images']\n  snapshotter = "overlayfs"`,
      `[plugins.'io.containerd.cri.v1.images'.pinned_images]\n  sandbox = ${q(PAUSE_IMAGE)}`,
      `[plugins.'io.containerd.cri.v1.images'.registry]\n  config_path = ${q(join(containerdDir, 'certs.d'))}`,
      // This machine kind runs us without CAP_SYS_RESOURCE: no oom_score_adj below our own (pause wants -998).
      `[plugins.'io.containerd.cri.v1.runtime']\n  netns_mounts_under_state_dir = true\n  restrict_oom_score_adj = true`,
      `[plugins.'io.containerd.cri.v1.runtime'.containerd]\n  default_runtime_name = "runc"`,
      `[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]\n  runtime_type = "io.containerd.runc.v2"`,
      `[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]\n  BinaryName = ${q(bin('runc'))}\n  Root = ${q(join(containerdDir, 'runc'))}\n  SystemdCgroup = false`,
      // use_internal_loopback: containerd brings lo up itself (no loopback plugin call, no cache entry for it).
      `[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dirs = [${q(join(options.binDir, 'cni'))}]\n  conf_dir = ${q(cniConfDir)}\n  use_internal_loopback = true`,
      '',
    ].join('\n'));
    const containerd = start('containerd', [bin('containerd'), '--config', join(containerdDir, 'config.toml'), '--log-level', 'info']);
    await pollUntil('containerd', async () => quiet([bin('ctr'), '--address', socket, 'version']), { timeoutMs: 30_000, ...whileRunning(containerd) });
    mark('containerd_ms');

    // kubelet: a client certificate from the control plane's CA, cgroupfs under /tcab-<id>, its own root dir.
    const pkiDir = join(dir, 'pki');
    const client = signedCert(pkiDir, 'kubelet', `/O=system:nodes/CN=system:node:${options.nodeName}`, { cert: options.caCert, key: options.caKey });
    const kubeletKubeconfig = join(dir, 'kubelet.kubeconfig');
    writeFileSync(kubeletKubeconfig, kubeconfig(`https://127.0.0.1:${APISERVER_PORT_IN_NODE}`, options.caCert, `system:node:${options.nodeName}`, client.cert, client.key), { mode: 0o600 });
    for (const hierarchy of cgroupHierarchies()) {
      const cg = join(hierarchy, state.cgroupRoot);
      mkdirSync(cg, { recursive: true });
      // A new cpuset cgroup has no CPUs or memory nodes: copy the root's, or nothing can join it.
      if (existsSync(join(cg, 'cpuset.cpus'))) for (const f of ['cpuset.cpus', 'cpuset.mems']) writeFileSync(join(cg, f), readFileSync(join(hierarchy, f), 'utf8').trim());
    }
    // Its serving certificate, from the same CA for the node IP: the apiserver verifies it (logs, exec, port-forward).
    const serving = signedCert(pkiDir, 'kubelet-serving', `/CN=${options.nodeName}`, { cert: options.caCert, key: options.caKey }, [`IP:${nodeIp}`, `DNS:${options.nodeName}`]);
    const kubeletDir = join(dir, 'kubelet');
    const podLogsDir = join(dir, 'pod-logs');
    mkdirSync(kubeletDir, { recursive: true });
    const kubeletConfig = join(dir, 'kubelet-config.yaml');
    writeFileSync(kubeletConfig, stringify({
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      failCgroupV1: false,
      cgroupDriver: 'cgroupfs',
      cgroupRoot: state.cgroupRoot,
      containerRuntimeEndpoint: `unix://${socket}`,
      address: nodeIp,
      port: 10250,
      readOnlyPort: 0,
      tlsCertFile: serving.cert,
      tlsPrivateKeyFile: serving.key,
      healthzBindAddress: '127.0.0.1',
      healthzPort: 10248,
      authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: options.caCert } },
      authorization: { mode: 'Webhook' },
      clusterDomain: 'cluster.local',
      clusterDNS: [CLUSTER_DNS_IP],
      resolvConf: '/etc/resolv.conf',
      rotateCertificates: false,
      serverTLSBootstrap: false,
      registerWithTaints: options.taint === false ? [] : [{ key: TAINT_KEY, value: 'true', effect: 'NoSchedule' }],
      podLogsDir,
      volumePluginDir: join(kubeletDir, 'volume-plugins'),
      maxPods: 40,
      // The disk of this machine kind has been seen nearly full: evict only when it really is.
      evictionHard: { 'memory.available': '50Mi', 'nodefs.available': '1%', 'nodefs.inodesFree': '1%', 'imagefs.available': '1%' },
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      failSwapOn: false,
      serializeImagePulls: false,
      enforceNodeAllocatable: ['pods'],
      syncFrequency: '10s',
      nodeStatusUpdateFrequency: '5s',
      ...(options.nodeLeaseDurationSeconds === undefined ? {} : { nodeLeaseDurationSeconds: options.nodeLeaseDurationSeconds }),
    }));
    const kubelet = start('kubelet', [
      bin('kubelet'), '--config', kubeletConfig, '--kubeconfig', kubeletKubeconfig, '--root-dir', kubeletDir,
      '--hostname-override', options.nodeName, '--node-ip', nodeIp, '--v=2',
    ]);
    const kubectl: Kubectl = (args, input) => execFileSync(join(options.clusterBinDir, 'kubectl'), ['--kubeconfig', options.adminKubeconfig, ...args], { encoding: 'utf8', input, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    await pollUntil(`node ${options.nodeName} to be Ready`, async () => kubectl(['get', 'node', options.nodeName, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']) === 'True', { timeoutMs: 90_000, ...whileRunning(kubelet) });
    mark('ready_ms');
    if (withServices) {
      const proxyClient = signedCert(pkiDir, 'kube-proxy', '/CN=system:kube-proxy', { cert: options.caCert, key: options.caKey });
      const proxyKubeconfig = join(dir, 'kube-proxy.kubeconfig');
      writeFileSync(proxyKubeconfig, kubeconfig(`https://127.0.0.1:${APISERVER_PORT_IN_NODE}`, options.caCert, 'system:kube-proxy', proxyClient.cert, proxyClient.key), { mode: 0o600 });
      const proxyConfig = join(dir, 'kube-proxy-config.yaml');
      writeFileSync(proxyConfig, stringify({
        apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
        kind: 'KubeProxyConfiguration',
        clientConnection: { kubeconfig: proxyKubeconfig },
        hostnameOverride: options.nodeName,
        mode: 'iptables',
        clusterCIDR: CLUSTER_POD_CIDR,
        detectLocalMode: 'ClusterCIDR',
        // nf_conntrack_max is read-only outside the initial network namespace (and host-wide): leave it alone.
        conntrack: { maxPerCore: 0, min: 0 },
        healthzBindAddress: '127.0.0.1:10256',
        metricsBindAddress: '127.0.0.1:10249',
        // minSyncPeriod 1s (upstream's default): a burst of Service/EndpointSlice changes is one iptables-restore, not one each.
        iptables: { syncPeriod: '10s', minSyncPeriod: '1s' },
      }));
      const proxy = start('kube-proxy', [bin('kube-proxy'), '--config', proxyConfig, '--v=2']);
      await pollUntil('kube-proxy\'s first iptables sync', async () => /^:KUBE-SERVICES /m.test(inNode(['iptables-save', '-t', 'nat'])), { timeoutMs: 30_000, ...whileRunning(proxy) });
      mark('kube_proxy_ms');
      if (clusterServices) applyServices(kubectl, options.nodeName, nodeIp, storageDir);
      // NetworkPolicy: kube-router's network policy controller alone (no routing, no service proxy), in the node's
      // namespace as kube-proxy is. Its RBAC came with applyServices.
      const routerClient = signedCert(pkiDir, 'kube-router', `/CN=${KUBE_ROUTER_USER}`, { cert: options.caCert, key: options.caKey });
      const routerKubeconfig = join(dir, 'kube-router.kubeconfig');
      writeFileSync(routerKubeconfig, kubeconfig(`https://127.0.0.1:${APISERVER_PORT_IN_NODE}`, options.caCert, KUBE_ROUTER_USER, routerClient.cert, routerClient.key), { mode: 0o600 });
      const router = start('kube-router', [
        bin('kube-router'), '--kubeconfig', routerKubeconfig, '--hostname-override', options.nodeName,
        '--run-firewall=true', '--run-router=false', '--run-service-proxy=false',
        '--service-cluster-ip-range', SERVICE_CIDR, '--health-port', '0', '--metrics-port', '0', '--v', '1',
      ]);
      await pollUntil('kube-router\'s network policy chains', async () => /^:KUBE-ROUTER-FORWARD /m.test(inNode(['iptables-save', '-t', 'filter'])), { timeoutMs: 60_000, ...whileRunning(router) });
      mark('network_policy_ms');
      if (clusterServices) await pollUntil('CoreDNS to be ready', async () => kubectl(['get', 'deployment', 'coredns', '-n', 'kube-system', '-o', 'jsonpath={.status.readyReplicas}']) === '1', { timeoutMs: 120_000, ...whileRunning(kubelet) });
      mark('coredns_ms');
      if (storageDir && clusterServices) {
        await pollUntil('the local-path provisioner to be ready', async () => kubectl(['get', 'deployment', 'local-path-provisioner', '-n', STORAGE_NAMESPACE, '-o', 'jsonpath={.status.readyReplicas}']) === '1', { timeoutMs: 120_000, ...whileRunning(kubelet) });
        mark('storage_ms');
      }
    }
    return {
      id,
      name: options.nodeName,
      dir,
      ip: nodeIp,
      podCidr: pods.cidr,
      registry: REGISTRY,
      registryInNode: registryAddress,
      netns: state.netns,
      netnsPath,
      cgroupRoot: state.cgroupRoot,
      digests,
      storageDir,
      standIns,
      egressDestinations: destinations,
      timings,
      processes,
      containerLog: (namespace, pod, uid, container, restart = 0) => readFileSync(join(podLogsDir, `${namespace}_${pod}_${uid}`, container, `${restart}.log`), 'utf8'),
      inNode,
      nodeArgv: inNodeArgv,
      exposeHostPort,
      kill: () => {
        cutNodeLinks(state.netns);
        for (const p of processes) p.child.kill('SIGKILL');
        killCgroupProcesses(state.cgroupRoot);
        for (const pid of processesNaming(dir)) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone
          }
        }
      },
      down,
    };
  } catch (error) {
    const logs = processes.map((p) => `--- ${p.name} (${p.log}):\n${tail(p.log)}`).join('\n');
    await down();
    throw new Error(`${(error as Error).message}\n${logs}`, { cause: error });
  }
}

type Kubectl = (args: string[], input?: string) => string;

/**
 * The cluster side of Services: the `kubernetes` Service's endpoint (the control plane runs with
 * --endpoint-reconciler-type=none, so it is written here: nodeIp:6443, the bridge in the node's namespace) and
 * CoreDNS (RBAC, Corefile, Deployment pinned to this node, the kube-dns Service at CLUSTER_DNS_IP). CoreDNS
 * forwards other names to the host's resolver (through the node's NAT, as the host reaches it).
 */
function applyServices(kubectl: Kubectl, nodeName: string, nodeIp: string, storageDir?: string): void {
  const upstream = hostResolvers();
  if (upstream.length === 0) process.stderr.write('real node: /etc/resolv.conf names no nameserver a Pod can reach (loopback only): CoreDNS answers cluster names only\n');
  const placement = { nodeSelector: { 'kubernetes.io/hostname': nodeName }, tolerations: [{ key: TAINT_KEY, operator: 'Exists', effect: 'NoSchedule' }] };
  const corefile = [
    '.:53 {',
    '    errors',
    '    health :8080',
    '    ready :8181',
    '    kubernetes cluster.local in-addr.arpa ip6.arpa {',
    '        pods insecure',
    '        fallthrough in-addr.arpa ip6.arpa',
    '    }',
    // The stand-ins' names (stand-ins.ts), as a public DNS would give them.
    '    hosts {',
    ...standInHostsEntries().map((line) => `        ${line}`),
    '        fallthrough',
    '    }',
    // The host's resolver, reached through the node's NAT as the host reaches it (Pods resolve the registries).
    ...(upstream.length > 0 ? [`    forward . ${upstream.join(' ')}`] : []),
    '    cache 30',
    '    loop',
    '    loadbalance',
    '}',
    '',
  ].join('\n');
  const items = [
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'kubernetes-tcab-real-node', namespace: 'default', labels: { 'kubernetes.io/service-name': 'kubernetes', 'endpointslice.kubernetes.io/managed-by': 'tcab.test-real-node' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: [nodeIp], conditions: { ready: true } }],
      ports: [{ name: 'https', port: APISERVER_PORT_IN_NODE, protocol: 'TCP' }],
    },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'coredns', namespace: 'kube-system' } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'system:coredns' },
      rules: [
        { apiGroups: [''], resources: ['endpoints', 'services', 'pods', 'namespaces'], verbs: ['list', 'watch'] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'system:coredns' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
      subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace: 'kube-system' }],
    },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'coredns', namespace: 'kube-system' }, data: { Corefile: corefile } },
    // kube-router's network policy controller: what its upstream ClusterRole grants the firewall (read Pods,
    // Namespaces, Nodes and NetworkPolicies; it also watches Services and Endpoints it does not proxy here).
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'tcab:kube-router' },
      rules: [
        { apiGroups: [''], resources: ['namespaces', 'pods', 'services', 'nodes', 'endpoints'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'tcab:kube-router' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'tcab:kube-router' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: KUBE_ROUTER_USER }],
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'coredns', namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { 'k8s-app': 'kube-dns' } },
        template: {
          metadata: { labels: { 'k8s-app': 'kube-dns' } },
          spec: {
            ...placement,
            serviceAccountName: 'coredns',
            dnsPolicy: 'Default',
            containers: [{
              name: 'coredns',
              image: COREDNS_IMAGE,
              args: ['-conf', '/etc/coredns/Corefile'],
              ports: [{ name: 'dns', containerPort: 53, protocol: 'UDP' }, { name: 'dns-tcp', containerPort: 53, protocol: 'TCP' }],
              readinessProbe: { httpGet: { path: '/ready', port: 8181 }, periodSeconds: 1 },
              livenessProbe: { httpGet: { path: '/health', port: 8080 }, periodSeconds: 10 },
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } },
              volumeMounts: [{ name: 'config', mountPath: '/etc/coredns', readOnly: true }],
            }],
            volumes: [{ name: 'config', configMap: { name: 'coredns' } }],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'kube-dns', namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' } },
      spec: {
        selector: { 'k8s-app': 'kube-dns' },
        clusterIP: CLUSTER_DNS_IP,
        ports: [{ name: 'dns', port: 53, protocol: 'UDP' }, { name: 'dns-tcp', port: 53, protocol: 'TCP' }],
      },
    },
    ...(storageDir ? storageObjects(placement, storageDir) : []),
  ];
  kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
}

/**
 * rancher's local-path-provisioner as its deploy/local-path-storage.yaml installs it (v0.0.30), pinned to this node,
 * with the node's images: the provisioner (built by node-binaries.sh) and the node's busybox as its helper Pod, which
 * runs the setup/teardown scripts below on the node (`mkdir -m 0777` / `rm -rf` of `<storageDir>/<pv>_<ns>_<claim>`).
 * The StorageClass is the cluster's default, so a claim without a class (the chart's volumeClaimTemplates) gets it.
 */
function storageObjects(placement: object, storageDir: string): object[] {
  const ns = STORAGE_NAMESPACE;
  const sa = 'local-path-provisioner-service-account';
  const labels = { app: 'local-path-provisioner' };
  const helperPod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'helper-pod' },
    spec: {
      priorityClassName: 'system-node-critical',
      tolerations: [{ key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' }],
      containers: [{ name: 'helper-pod', image: BUSYBOX_IMAGE, imagePullPolicy: 'IfNotPresent' }],
    },
  };
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace: ns } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'local-path-provisioner-role', namespace: ns },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'local-path-provisioner-role' },
      rules: [
        { apiGroups: [''], resources: ['nodes', 'persistentvolumeclaims', 'configmaps', 'pods', 'pods/log'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['persistentvolumes'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'] },
        { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
        { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get', 'list', 'watch'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'local-path-provisioner-bind', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'local-path-provisioner-role' },
      subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ns }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'local-path-provisioner-bind' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'local-path-provisioner-role' },
      subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ns }],
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'local-path-config', namespace: ns },
      data: {
        'config.json': JSON.stringify({ nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [storageDir] }] }),
        setup: '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"\n',
        teardown: '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"\n',
        'helperPod.yaml': stringify(helperPod),
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'local-path-provisioner', namespace: ns },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            ...placement,
            serviceAccountName: sa,
            containers: [{
              name: 'local-path-provisioner',
              image: LOCAL_PATH_PROVISIONER_IMAGE,
              command: ['/local-path-provisioner', '--debug', 'start', '--config', '/etc/config/config.json', '--helper-image', BUSYBOX_IMAGE],
              env: [
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                { name: 'CONFIG_MOUNT_PATH', value: '/etc/config/' },
              ],
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, runAsUser: 65534, capabilities: { drop: ['ALL'] } },
              volumeMounts: [{ name: 'config-volume', mountPath: '/etc/config/' }],
            }],
            volumes: [{ name: 'config-volume', configMap: { name: 'local-path-config' } }],
          },
        },
      },
    },
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: STORAGE_CLASS, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'rancher.io/local-path',
      volumeBindingMode: 'WaitForFirstConsumer',
      reclaimPolicy: 'Delete',
    },
  ];
}

function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

// Symbols used only by tests of this module.
/** libcni result cache entries that name `dir` (a Pod network namespace under it). */
function cniCacheEntriesUnder(dir: string): string[] {
  const results = '/var/lib/cni/results';
  if (!existsSync(results)) return [];
  return readdirSync(results).filter((entry) => {
    try {
      return readFileSync(join(results, entry), 'utf8').includes(`${dir}/`);
    } catch {
      return false;
    }
  });
}

/** What a node may leave on the host outside its directory, naming it: CNI cache entries, /var/log/containers links. */
function hostLeftovers(dir: string): string[] {
  const links = '/var/log/containers';
  const ours = (existsSync(links) ? readdirSync(links) : []).filter((entry) => {
    try {
      return readlinkSync(join(links, entry)).startsWith(`${dir}/`);
    } catch {
      return false;
    }
  });
  return [...cniCacheEntriesUnder(dir), ...ours.map((entry) => join(links, entry))];
}

export const internals = { hostLeftovers, cgroupHierarchies, cgroupTree, processesNaming, mountsUnder, readSysctl, liveStates, KUBELET_SYSCTLS, HOST_SYSCTLS };
