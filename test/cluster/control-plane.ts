// The test control plane: etcd, kube-apiserver (client-cert auth, Node + RBAC authorization, service-account
// token signing), kube-controller-manager and kube-scheduler, all on free loopback ports with their data in one
// directory. `up` returns when the default namespace can take pods; nodes register separately (a real node:
// node/real-node.ts; the test suite's: local-cluster.ts).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { createPki } from './pki.ts';
import type { Pki } from './pki.ts';
import { startOnFreePorts, startProcess, whileRunning } from './processes.ts';
import { pollUntil } from '../support/poll.ts';
import type { Managed } from './processes.ts';

/**
 * ClusterIPs: inside 198.18.0.0/15 (benchmarking space, RFC 2544: collides with nothing this machine routes), clear
 * of a real node's Pod CIDR 198.18.0.0/24 and its transfer nets in 198.19.0.0/16 (node/network.ts).
 */
export const SERVICE_CIDR = '198.18.128.0/20';
/** The first address of SERVICE_CIDR: the `kubernetes` Service, named in the apiserver's certificate. */
export const KUBERNETES_SERVICE_IP = '198.18.128.1';
/** kube-dns's ClusterIP (a real node's CoreDNS; kubelet's clusterDNS). */
export const CLUSTER_DNS_IP = '198.18.128.10';

export interface ControlPlane {
  dir: string;
  kubeconfig: string;
  server: string;
  binDir: string;
  processes: Managed[];
  timings: Record<string, number>;
  down(): Promise<void>;
}

export interface UpOptions {
  dir: string;
  dieWithParent: boolean;
  /** Benchmarks of the API alone leave out the scheduler (default true): Pods stay Pending with no scheduler writes. */
  withScheduler?: boolean;
  /**
   * How long a node may stop renewing its Lease before the node lifecycle controller marks it unreachable (its
   * Pods then go by their not-ready/unreachable tolerations). Kubernetes' default (50 s) unless set: a multi-node
   * test that kills a node sets it short, with its kubelets renewing often (real-node.ts nodeLeaseDurationSeconds).
   */
  nodeMonitorGracePeriodSeconds?: number;
}

/** The binaries, built or reused (prints the cold/warm time on stderr). */
export function clusterBinaries(): string {
  return execFileSync(join(import.meta.dirname, 'build', 'binaries.sh'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

/** A kubeconfig with the client certificate embedded (components, the admin, a real node's kubelet and kube-proxy). */
export function kubeconfig(server: string, caCert: string, user: string, cert: string, key: string): string {
  const b64 = (file: string) => readFileSync(file).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'tcab-test', cluster: { server, 'certificate-authority-data': b64(caCert) } }],
    users: [{ name: user, user: { 'client-certificate-data': b64(cert), 'client-key-data': b64(key) } }],
    contexts: [{ name: 'tcab-test', context: { cluster: 'tcab-test', user, namespace: 'default' } }],
    'current-context': 'tcab-test',
  });
}

function httpsOk(url: string, pki: Pki, client: { cert: string; key: string }): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, { ca: readFileSync(pki.caCert), cert: readFileSync(client.cert), key: readFileSync(client.key), timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

export async function up(options: UpOptions): Promise<ControlPlane> {
  const timings: Record<string, number> = {};
  const t0 = Date.now();
  const mark = (name: string) => (timings[name] = Date.now() - t0);
  const binDir = clusterBinaries();
  mark('binaries_ms');
  const dir = options.dir;
  const pkiDir = join(dir, 'pki');
  const logDir = join(dir, 'logs');
  for (const d of [pkiDir, logDir, join(dir, 'etcd')]) mkdirSync(d, { recursive: true, mode: 0o700 });
  const pki = createPki(pkiDir, {
    admin: { user: 'kubernetes-admin', groups: ['system:masters'] },
    'controller-manager': { user: 'system:kube-controller-manager' },
    scheduler: { user: 'system:kube-scheduler' },
    // The apiserver's identity towards kubelets (logs, exec, port-forward): kubelet's webhook authorizer asks the
    // apiserver, which allows system:masters the kubelet API (nodes/proxy, nodes/log, ...).
    'apiserver-kubelet-client': { user: 'kube-apiserver-kubelet-client', groups: ['system:masters'] },
  }, [KUBERNETES_SERVICE_IP]);
  mark('pki_ms');
  const processes: Managed[] = [];
  const start = (name: string, argv: string[]) => {
    const p = startProcess(name, argv, { logDir, dieWithParent: options.dieWithParent });
    processes.push(p);
    return p;
  };
  const bin = (name: string) => join(binDir, name);
  const down = async () => {
    // Reverse order: etcd last.
    for (const p of [...processes].reverse()) await p.stop();
  };
  try {
    const { ports: [etcdClient] } = await startOnFreePorts(2, ([etcdClient, etcdPeer]) => (rmSync(join(dir, 'etcd'), { recursive: true, force: true }), start('etcd', [
      bin('etcd'), '--name', 'default', '--data-dir', join(dir, 'etcd'),
      '--listen-client-urls', `http://127.0.0.1:${etcdClient}`, '--advertise-client-urls', `http://127.0.0.1:${etcdClient}`,
      '--listen-peer-urls', `http://127.0.0.1:${etcdPeer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${etcdPeer}`,
      '--initial-cluster', `default=http://127.0.0.1:${etcdPeer}`, '--listen-metrics-urls', '',
      // Test data: durability across power loss does not matter, speed does.
      '--unsafe-no-fsync', '--log-level', 'warn',
      // The 100,000-Run dispatcher bench writes ~1.5 GB of revisions between compactions; the 2 GB default is tight.
      '--quota-backend-bytes', String(8 * 2 ** 30),
    ])), ([etcdClient], etcd) => pollUntil('etcd health', async () => (await fetch(`http://127.0.0.1:${etcdClient}/health`)).ok, { timeoutMs: 20_000, ...whileRunning(etcd) }));
    mark('etcd_ms');

    const admin = pki.client('admin');
    const { ports: [apiPort] } = await startOnFreePorts(1, ([apiPort]) => start('kube-apiserver', [
      bin('kube-apiserver'), '--etcd-servers', `http://127.0.0.1:${etcdClient}`,
      '--bind-address', '127.0.0.1', '--advertise-address', '127.0.0.1', '--secure-port', String(apiPort), '--cert-dir', pkiDir,
      '--tls-cert-file', pki.serverCert, '--tls-private-key-file', pki.serverKey, '--client-ca-file', pki.caCert,
      '--authorization-mode', 'Node,RBAC', '--enable-admission-plugins', 'NodeRestriction',
      // To kubelets (a real node's, at its InternalIP, which the host routes to): our client certificate, and their
      // serving certificates verified against our CA (a real node's is signed by it for its IP). The Hostname
      // address a kubelet also reports resolves nowhere.
      '--kubelet-client-certificate', pki.client('apiserver-kubelet-client').cert, '--kubelet-client-key', pki.client('apiserver-kubelet-client').key,
      '--kubelet-certificate-authority', pki.caCert, '--kubelet-preferred-address-types', 'InternalIP',
      '--service-account-key-file', pki.serviceAccountPub, '--service-account-signing-key-file', pki.serviceAccountKey,
      '--service-account-issuer', 'https://kubernetes.default.svc.cluster.local', '--service-cluster-ip-range', SERVICE_CIDR,
      // Loopback cannot back the `kubernetes` Service's endpoints; pods reach the apiserver through KUBERNETES_SERVICE_HOST.
      '--endpoint-reconciler-type', 'none', '--allow-privileged=false', '--profiling=false', '--v=1',
    ]), ([apiPort], apiserver) => pollUntil('kube-apiserver /readyz', () => httpsOk(`https://127.0.0.1:${apiPort}/readyz`, pki, admin), { timeoutMs: 60_000, ...whileRunning(apiserver) }));
    const server = `https://127.0.0.1:${apiPort}`;
    mark('apiserver_ms');

    const writeConfig = (name: string, user: string) => {
      const c = pki.client(name);
      const path = join(dir, `${name}.kubeconfig`);
      writeFileSync(path, kubeconfig(server, pki.caCert, user, c.cert, c.key), { mode: 0o600 });
      return path;
    };
    const adminConfig = writeConfig('admin', 'kubernetes-admin');
    const cmConfig = writeConfig('controller-manager', 'system:kube-controller-manager');
    const schedulerConfig = writeConfig('scheduler', 'system:kube-scheduler');

    start('kube-controller-manager', [
      bin('kube-controller-manager'), '--kubeconfig', cmConfig, '--authentication-kubeconfig', cmConfig, '--authorization-kubeconfig', cmConfig,
      '--bind-address', '127.0.0.1', '--secure-port', '0', '--leader-elect=false', '--use-service-account-credentials=true',
      '--service-account-private-key-file', pki.serviceAccountKey, '--root-ca-file', pki.caCert,
      '--cluster-signing-cert-file', pki.caCert, '--cluster-signing-key-file', pki.caKey, '--service-cluster-ip-range', SERVICE_CIDR,
      ...(options.nodeMonitorGracePeriodSeconds === undefined ? [] : ['--node-monitor-grace-period', `${options.nodeMonitorGracePeriodSeconds}s`]),
      '--v=1',
    ]);
    if (options.withScheduler !== false) start('kube-scheduler', [
      bin('kube-scheduler'), '--kubeconfig', schedulerConfig, '--authentication-kubeconfig', schedulerConfig, '--authorization-kubeconfig', schedulerConfig,
      '--bind-address', '127.0.0.1', '--secure-port', '0', '--leader-elect=false', '--v=1',
    ]);
    // Ready = the default ServiceAccount exists (pods can be admitted).
    const kubectl = (...args: string[]) => execFileSync(bin('kubectl'), ['--kubeconfig', adminConfig, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    await pollUntil('the default ServiceAccount', async () => kubectl('get', 'serviceaccount', 'default', '-o', 'name').trim() === 'serviceaccount/default', { timeoutMs: 30_000 });
    mark('ready_ms');
    return { dir, kubeconfig: adminConfig, server, binDir, processes, timings, down };
  } catch (error) {
    await down();
    throw error;
  }
}
