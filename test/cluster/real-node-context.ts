// The real nodes every cluster test (and test/e2e) runs its Pods on: kubelet + containerd + runc from
// node/real-node.ts, registered with the shared control plane by local-cluster.ts (for global-setup.ts and
// `npm run cluster:up`; three by default), with the chart's images built from deploy/images (scripts/images/build.sh)
// and pushed into each node's local registry. What is below describes the first node; Pods land on any.
//
// What tests get, through `inject('realNode')` (a plain, serialisable object; undefined when TCAB_TEST_CLUSTER is
// external or k3s, where there is no node of ours):
//   name        the first Node's name; every node is untainted, so Pods need no nodeSelector or toleration
//   ip          the node IP (its InternalIP): Pods reach servers the test exposes on it (exposeHostPort below)
//   netnsPath   `nsenter --net=<netnsPath> -- ...` runs a command inside the node's network namespace
//   cgroupRoot  the node's cgroup root (cgroupfs driver): a container's processes are in
//               /sys/fs/cgroup/<hierarchy><cgroupRoot>/kubepods/.../pod<uid>/<container id>
//   registry    the image prefix Pods use: `${registry}/<name>:<tag>` (registry.tcab.test:5000/tcab)
//   registryInNode  the same registry as a push target from inside the node's namespace (127.0.0.1:5000/tcab)
//   imageTag    the tag the chart's images carry (package.json's version, the chart's appVersion)
//   images      full refs Pods can name:
//                 driver, dispatcher  deploy/images/Dockerfile.{driver,dispatcher}, built by scripts/images/build.sh
//                 busybox             Debian's busybox-static (entrypoint /bin/sh)
//                 shortJob            busybox that sleeps 0.3 s and exits 0 (a stand-in driver where only the
//                                     dispatcher's decisions are under test)
//                 longJob             busybox that runs until SIGTERM, then exits 143
//   exposeSocket  the control socket of the process that owns the node (exposeHostPort below talks to it)
//   standIns    hosts a sealed run must not reach (node/stand-ins.ts): `metadata` (169.254.169.254:80 in the
//               node's namespace) and `internet` (198.51.100.10:80, named internet.tcab.test by CoreDNS); each
//               answers `tcab stand-in <name>`; Pods without a NetworkPolicy reach both
//   egressDestinations  the only addresses outside the node Pods' traffic is routed to (registries, resolvers)
//   nodeNames   every node's name, the first (this one) first: three unless TCAB_TEST_NODES says otherwise
//               (local-cluster.ts); a test whose Pods must be on this node (it looks at the node's cgroups, its
//               containerd, its registry hosts) pins them with onThisNode()
//   peers       the other nodes, as pushImages needs them (each has a registry of its own)
//   registryHostsDir  containerd's registry hosts directory (certs.d): containerd reads
//               <registryHostsDir>/<registry name>/hosts.toml at each pull, so a test can add a registry name that
//               is served by something of its own inside the node's namespace (and must remove what it adds)
// The nats, npm-cache and egress-proxy images are not pushed at start (no test/cluster test needs them); pushImages()
// adds them.
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import type { StandIns } from './node/stand-ins.ts';
import { nodeBinaries } from './node/real-node.ts';

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');

export interface RealNodeContext {
  name: string;
  ip: string;
  netnsPath: string;
  cgroupRoot: string;
  registry: string;
  registryInNode: string;
  imageTag: string;
  images: { driver: string; dispatcher: string; busybox: string; shortJob: string; longJob: string };
  exposeSocket: string;
  standIns: StandIns;
  egressDestinations: string[];
  registryHostsDir: string;
  nodeNames: string[];
  peers: PeerNodeContext[];
}

/** Another node of the test cluster: where pushImages also pushes. */
export interface PeerNodeContext {
  name: string;
  netnsPath: string;
  registryInNode: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    realNode: RealNodeContext | undefined;
  }
}

/** The real node, or a clear failure where the cluster is not ours (TCAB_TEST_CLUSTER=external|k3s). */
export function realNode(): RealNodeContext {
  const node = inject('realNode');
  if (!node) throw new Error('this test runs Pods on the test suite\'s real node (TCAB_TEST_CLUSTER=local, the default)');
  return node;
}

/** The chart's images (driver, dispatcher, nats, npm-cache, egress-proxy) global-setup.ts does not push by default. */
export type ChartImage = 'driver' | 'dispatcher' | 'nats' | 'npm-cache' | 'egress-proxy';

/**
 * Builds (cached: 1-3 s warm) and pushes chart images into the node's registry; returns their refs as Pods name
 * them. The build runs on the host (a cold build needs the package registries, which the node's namespace does
 * not reach); the push runs inside the namespace, where the registry listens.
 */
export async function pushImages(names: ChartImage[], node: Pick<RealNodeContext, 'netnsPath' | 'registry' | 'registryInNode' | 'imageTag'> & { peers?: PeerNodeContext[] } = realNode()): Promise<Record<string, string>> {
  const build = join(ROOT, 'scripts', 'images', 'build.sh');
  const only = names.join(',');
  const options = { encoding: 'utf8' as const, maxBuffer: 64 << 20 };
  await exec(build, ['--only', only, '--tag', node.imageTag], options);
  // Every node's registry: a Pod pulls from the registry of the node it lands on.
  for (const target of [node, ...(node.peers ?? [])]) await exec('nsenter', [`--net=${target.netnsPath}`, '--', build, '--only', only, '--tag', node.imageTag, '--push', target.registryInNode], options);
  return Object.fromEntries(names.map((name) => [name, `${node.registry}/${name}:${node.imageTag}`]));
}

/**
 * Copies an image the registries hold to another name there, in every node's registry (a registry that "comes
 * back" with an image it did not serve before); both refs as Pods name them (realNode().registry/...).
 */
export async function copyImageInRegistry(from: string, to: string, node: Pick<RealNodeContext, 'netnsPath' | 'registry' | 'registryInNode'> & { peers?: PeerNodeContext[] } = realNode()): Promise<void> {
  for (const target of [node, ...(node.peers ?? [])]) {
    const inNode = (ref: string) => ref.replace(node.registry, target.registryInNode);
    await exec('nsenter', [`--net=${target.netnsPath}`, '--', join(nodeBinaries(), 'crane'), 'copy', '--insecure', inNode(from), inNode(to)], { encoding: 'utf8' as const });
  }
}

/**
 * Pins a Pod spec to the first node (what realNode() describes), for a test that looks at the node's own parts
 * (its cgroups, its containerd, its registry hosts) or its stand-ins; a no-op on a one-node cluster but for the
 * selector. As a nodeSelector on the node's name label, which also works in the chart's driver.nodeSelector.
 */
export function onThisNode(): Record<string, string> {
  return { 'kubernetes.io/hostname': realNode().name };
}

/**
 * Makes a server on the host's 127.0.0.1:<port> (NATS, a stub model) reachable from Pods; returns the `host:port`
 * Pods use (HOST_SERVICES_IP, the same on every node). The bridges belong to the nodes (node/real-node.ts
 * exposeHostPort, called on every node by local-cluster.ts on request) and live as long as they do.
 */
export function exposeHostPort(port: number): Promise<string> {
  const socketPath = realNode().exposeSocket;
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: 'POST', path: `/expose/${port}` }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => {
        if (res.statusCode === 200) resolve(body);
        else reject(new Error(`exposeHostPort(${port}): ${res.statusCode} ${body}`));
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** A URL on the host's loopback (http://127.0.0.1:<port>/..., nats://127.0.0.1:<port>) as Pods reach it. */
export async function podUrl(hostUrl: string): Promise<string> {
  const url = new URL(hostUrl);
  if (url.hostname !== '127.0.0.1') throw new Error(`podUrl: ${hostUrl} is not on 127.0.0.1`);
  const address = await exposeHostPort(Number(url.port));
  return hostUrl.replace(`//127.0.0.1:${url.port}`, `//${address}`);
}
