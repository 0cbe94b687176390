// A control plane of its own with one real node registered to it: what the real-node test and `cli.ts up` both
// start. Both die with the calling process (parent-death signal); `down()` stops the node, then the plane.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { up } from '../control-plane.ts';
import type { ControlPlane } from '../control-plane.ts';
import { linkNodes } from './network.ts';
import { nodeBinaries, startRealNode } from './real-node.ts';
import type { RealNode, RealNodeOptions } from './real-node.ts';

export interface PlaneWithNode {
  plane: ControlPlane;
  planeDir: string;
  node: RealNode;
  /** The node's binaries (kubelet, containerd, crane, ...). */
  nodeBinDir: string;
  down(): Promise<void>;
}

/** A node's options for the plane in `planeDir`: its own directory, the plane's CA and kubectl; dies with this process. */
function nodeOf(plane: ControlPlane, planeDir: string, nodeBinDir: string, nodeName: string): RealNodeOptions {
  return {
    dir: mkdtempSync(join(tmpdir(), 'tcab-real-node-')),
    binDir: nodeBinDir,
    clusterBinDir: plane.binDir,
    server: plane.server,
    adminKubeconfig: plane.kubeconfig,
    caCert: join(planeDir, 'pki', 'ca.crt'),
    caKey: join(planeDir, 'pki', 'ca.key'),
    nodeName,
    dieWithParent: true,
  };
}

/** `options`: RealNodeOptions' taint and storage (both default true), e.g. `{ taint: false }` for a cluster whose only node it is. */
export async function upPlaneWithRealNode(nodeName: string, options: Pick<RealNodeOptions, 'taint' | 'storage'> = {}): Promise<PlaneWithNode> {
  const nodeBinDir = nodeBinaries();
  const planeDir = mkdtempSync(join(tmpdir(), 'tcab-real-node-plane-'));
  const plane = await up({ dir: planeDir, dieWithParent: true });
  const node = await startRealNode({ ...nodeOf(plane, planeDir, nodeBinDir, nodeName), ...options });
  return {
    plane,
    planeDir,
    node,
    nodeBinDir,
    async down() {
      await node.down();
      await plane.down();
      rmSync(planeDir, { recursive: true, force: true });
    },
  };
}

export interface PlaneWithNodes extends Omit<PlaneWithNode, 'node'> {
  /** The first node holds the cluster's own objects (CoreDNS, the provisioner, the `kubernetes` endpoint): never kill it. */
  nodes: RealNode[];
}

export interface MultiNodeOptions extends Pick<RealNodeOptions, 'taint' | 'storage'> {
  /** control-plane.ts nodeMonitorGracePeriodSeconds: how soon a silent node is unreachable; with it the kubelets renew their Lease often. */
  nodeLostAfterSeconds?: number;
}

/**
 * A control plane with several real nodes (issue 35), each a kubelet + containerd in its own network namespace with
 * a Pod CIDR of its own (198.18.<i>.0/24), linked to every other node directly (network.ts linkNodes): Pods reach
 * each other and Services across nodes without NAT. The first node starts alone (it applies the cluster's objects),
 * the others then together. Every node has its own registry: push images to each (`nodes`).
 */
export async function upPlaneWithRealNodes(nodeNames: string[], options: MultiNodeOptions = {}): Promise<PlaneWithNodes> {
  if (nodeNames.length < 2) throw new Error('upPlaneWithRealNodes: at least two nodes (upPlaneWithRealNode for one)');
  const nodeBinDir = nodeBinaries();
  const planeDir = mkdtempSync(join(tmpdir(), 'tcab-real-nodes-plane-'));
  const lost = options.nodeLostAfterSeconds;
  const plane = await up({ dir: planeDir, dieWithParent: true, ...(lost === undefined ? {} : { nodeMonitorGracePeriodSeconds: lost }) });
  const nodes: RealNode[] = [];
  const start = (nodeName: string, index: number) => startRealNode({
    ...nodeOf(plane, planeDir, nodeBinDir, nodeName),
    taint: options.taint,
    storage: options.storage,
    podSubnet: index,
    clusterServices: index === 0,
    // The kubelet renews every quarter of its Lease: a renewal every fifth of `lost`, so several go missing before the node counts as lost.
    ...(lost === undefined ? {} : { nodeLeaseDurationSeconds: Math.max(4, Math.floor(lost * 0.8)) }),
  }).then((node) => (nodes.push(node), node));
  const down = async () => {
    for (const node of nodes.reverse()) await node.down();
    await plane.down();
    rmSync(planeDir, { recursive: true, force: true });
  };
  try {
    await start(nodeNames[0]!, 0);
    const rest = await Promise.allSettled(nodeNames.slice(1).map((name, i) => start(name, i + 1)));
    const failed = rest.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const ordered = nodeNames.map((name) => nodes.find((n) => n.name === name)!);
    let pair = 0;
    for (let i = 0; i < ordered.length; i++) for (let j = i + 1; j < ordered.length; j++) linkNodes(ordered[i]!, ordered[j]!, pair++);
    return { plane, planeDir, nodes: ordered, nodeBinDir, down };
  } catch (error) {
    await down();
    throw error;
  }
}
