// The local test cluster (issue 35): the control plane (control-plane.ts) with three real nodes registered to it
// (node/real-node.ts: kubelet + containerd + runc, each in its own network namespace with its own Pod CIDR, linked to
// the others by node/network.ts linkNodes, all untainted), the chart's driver and dispatcher images built from
// deploy/images and pushed into every node's registry, and busybox job images on each. Every host port a test
// exposes is bridged into every node, so a test's Pods may land on any of them. The first node holds the cluster's
// own objects (CoreDNS, the provisioner) and is what realNode() describes; a test that looks at a node's own parts
// pins its Pods there (onThisNode()). TCAB_TEST_NODES=1|2 starts fewer. The vitest global setup (global-setup.ts)
// and `npm run cluster:up` (cli.ts) both start it; what tests learn about it is RealNodeContext
// (real-node-context.ts).
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { up } from './control-plane.ts';
import type { ControlPlane } from './control-plane.ts';
import { linkNodes } from './node/network.ts';
import { BUSYBOX_IMAGE, nodeBinaries, startRealNode } from './node/real-node.ts';
import type { RealNode } from './node/real-node.ts';
import { pushImages } from './real-node-context.ts';
import type { RealNodeContext } from './real-node-context.ts';

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
export const REAL_NODE_NAME = 'tcab-node';
/** The chart images every start pushes: the driver (dispatcher test) and the dispatcher (the chart's e2e). */
const PUSHED: ('driver' | 'dispatcher')[] = ['driver', 'dispatcher'];

/** TCAB_TEST_NODES: how many real nodes the local cluster has (1 to 3, default 3). */
export function testNodeCount(value = process.env.TCAB_TEST_NODES): number {
  const count = Number(value || '3');
  if (!Number.isInteger(count) || count < 1 || count > 3) throw new Error(`TCAB_TEST_NODES must be 1, 2 or 3, got "${value}"`);
  return count;
}

export interface LocalCluster {
  plane: ControlPlane;
  /** The first node: what realNode() describes. */
  node: RealNode;
  /** Every node, the first first. */
  nodes: RealNode[];
  /** The node's binaries (kubelet, containerd, crane, ...). */
  nodeBinDir: string;
  context: RealNodeContext;
  timings: Record<string, unknown>;
  down(): Promise<void>;
}

/**
 * Starts it in `dir` (the plane's directory; the node's is `<dir>/node`). Everything dies with this process
 * (parent-death signal): the node's owner is this process, and a node whose owner is gone is swept by the next start.
 */
export async function startLocalCluster(dir: string, nodeCount = testNodeCount()): Promise<LocalCluster> {
  const t0 = Date.now();
  // The chart images build on the host (a cold build needs the package registries) while the plane and node start.
  const built = exec(join(ROOT, 'scripts', 'images', 'build.sh'), ['--only', PUSHED.join(',')], { encoding: 'utf8', maxBuffer: 64 << 20 });
  built.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
  const nodeBinDir = nodeBinaries();
  const plane = await up({ dir, dieWithParent: true });
  const nodes: RealNode[] = [];
  let expose: Server | undefined;
  const down = async () => {
    expose?.close();
    for (const n of nodes.filter(Boolean).reverse()) await n.down();
    await plane.down();
  };
  const start = (index: number) => startRealNode({
    dir: join(dir, index === 0 ? 'node' : `node-${index + 1}`),
    binDir: nodeBinDir,
    clusterBinDir: plane.binDir,
    server: plane.server,
    adminKubeconfig: plane.kubeconfig,
    caCert: join(dir, 'pki', 'ca.crt'),
    caKey: join(dir, 'pki', 'ca.key'),
    nodeName: index === 0 ? REAL_NODE_NAME : `${REAL_NODE_NAME}-${index + 1}`,
    // Every node untainted: every test's Pods land on one of them without a toleration.
    taint: false,
    podSubnet: index,
    // The first node writes the cluster's own objects; the others start after it and use them.
    clusterServices: index === 0,
    dieWithParent: true,
  }).then((started) => (nodes[index] = started));
  try {
    const node = await start(0);
    const others = await Promise.allSettled(Array.from({ length: nodeCount - 1 }, (_, i) => start(i + 1)));
    const failed = others.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    let pair = 0;
    for (let i = 0; i < nodes.length; i++) for (let j = i + 1; j < nodes.length; j++) linkNodes(nodes[i]!, nodes[j]!, pair++);
    const nodeUpMs = Date.now() - t0;
    const { stdout: buildSummary } = await built;
    const imageTag = (JSON.parse(buildSummary.trim().split('\n').at(-1)!) as { tag: string }).tag;
    const context: RealNodeContext = {
      name: node.name,
      ip: node.ip,
      netnsPath: node.netnsPath,
      cgroupRoot: node.cgroupRoot,
      registry: `${node.registry}/tcab`,
      registryInNode: `${node.registryInNode}/tcab`,
      imageTag,
      images: {
        driver: `${node.registry}/tcab/driver:${imageTag}`,
        dispatcher: `${node.registry}/tcab/dispatcher:${imageTag}`,
        busybox: BUSYBOX_IMAGE,
        shortJob: `${node.registry}/tcab/short-job:1`,
        longJob: `${node.registry}/tcab/long-job:1`,
      },
      exposeSocket: join(dir, 'expose.sock'),
      standIns: node.standIns,
      egressDestinations: node.egressDestinations,
      registryHostsDir: join(node.dir, 'containerd', 'certs.d'),
      nodeNames: nodes.map((n) => n.name),
      peers: nodes.slice(1).map((n) => ({ name: n.name, netnsPath: n.netnsPath, registryInNode: `${n.registryInNode}/tcab` })),
    };
    await pushImages(PUSHED, context);
    // Job images: each node's busybox with another entrypoint (crane mutate writes a new config, same layer).
    const crane = join(nodeBinDir, 'crane');
    const jobs = { 'short-job': 'sleep 0.3', 'long-job': 'trap \'exit 143\' TERM; while :; do sleep 1; done' };
    for (const n of nodes) {
      const busyboxInNode = BUSYBOX_IMAGE.replace(n.registry, n.registryInNode);
      for (const [name, script] of Object.entries(jobs)) {
        // crane splits --entrypoint at commas: the scripts have none.
        n.inNode([crane, 'mutate', '--insecure', busyboxInNode, '--entrypoint', `/bin/sh,-c,${script}`, '-t', `${n.registryInNode}/tcab/${name}:1`]);
      }
    }
    // Test workers cannot call node.exposeHostPort (the nodes live in this process): they ask over this socket. A
    // port is bridged into every node (the same address in each), wherever the Pod that dials it lands.
    const exposeEverywhere = (port: number) => Promise.all(nodes.map((n) => n.exposeHostPort(port))).then(([address]) => address!);
    expose = createServer((req, res) => {
      const port = /^\/expose\/(\d+)$/.exec(req.url ?? '')?.[1];
      if (req.method !== 'POST' || !port) {
        res.writeHead(404).end('POST /expose/<port>');
        return;
      }
      exposeEverywhere(Number(port)).then((address) => res.writeHead(200).end(address), (error: unknown) => res.writeHead(500).end((error as Error).message));
    });
    await new Promise<void>((resolve) => expose!.listen(context.exposeSocket, resolve));
    const timings = { plane: plane.timings, node: node.timings, node_up_ms: nodeUpMs, images_ms: Date.now() - t0 - nodeUpMs };
    return { plane, node, nodes, nodeBinDir, context, timings, down };
  } catch (error) {
    await down();
    throw error;
  }
}
