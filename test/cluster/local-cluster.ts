// The local test cluster: the control plane (control-plane.ts) with one real node registered to it
// (node/real-node.ts: kubelet + containerd + runc, untainted, the only node), the chart's driver and dispatcher
// images built from deploy/images and pushed into the node's registry, and busybox job images. The vitest global
// setup (global-setup.ts) and `npm run cluster:up` (cli.ts) both start it; what tests learn about it is
// RealNodeContext (real-node-context.ts).
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { up } from './control-plane.ts';
import type { ControlPlane } from './control-plane.ts';
import { BUSYBOX_IMAGE, nodeBinaries, startRealNode } from './node/real-node.ts';
import type { RealNode } from './node/real-node.ts';
import { pushImages } from './real-node-context.ts';
import type { RealNodeContext } from './real-node-context.ts';

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
export const REAL_NODE_NAME = 'tcab-node';
/** The chart images every start pushes: the driver (dispatcher test) and the dispatcher (the chart's e2e). */
const PUSHED: ('driver' | 'dispatcher')[] = ['driver', 'dispatcher'];

export interface LocalCluster {
  plane: ControlPlane;
  node: RealNode;
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
export async function startLocalCluster(dir: string): Promise<LocalCluster> {
  const t0 = Date.now();
  // The chart images build on the host (a cold build needs the package registries) while the plane and node start.
  const built = exec(join(ROOT, 'scripts', 'images', 'build.sh'), ['--only', PUSHED.join(',')], { encoding: 'utf8', maxBuffer: 64 << 20 });
  built.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
  const nodeBinDir = nodeBinaries();
  const plane = await up({ dir, dieWithParent: true });
  let node: RealNode | undefined;
  let expose: Server | undefined;
  const down = async () => {
    expose?.close();
    await node?.down();
    await plane.down();
  };
  try {
    node = await startRealNode({
      dir: join(dir, 'node'),
      binDir: nodeBinDir,
      clusterBinDir: plane.binDir,
      server: plane.server,
      adminKubeconfig: plane.kubeconfig,
      caCert: join(dir, 'pki', 'ca.crt'),
      caKey: join(dir, 'pki', 'ca.key'),
      nodeName: REAL_NODE_NAME,
      // The only node: every test's Pods land here without a toleration.
      taint: false,
      dieWithParent: true,
    });
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
    };
    await pushImages(PUSHED, context);
    // Job images: the node's busybox with another entrypoint (crane mutate writes a new config, same layer).
    const crane = join(nodeBinDir, 'crane');
    const busyboxInNode = BUSYBOX_IMAGE.replace(node.registry, node.registryInNode);
    const jobs = { 'short-job': 'sleep 0.3', 'long-job': 'trap \'exit 143\' TERM; while :; do sleep 1; done' };
    for (const [name, script] of Object.entries(jobs)) {
      // crane splits --entrypoint at commas: the scripts have none.
      node.inNode([crane, 'mutate', '--insecure', busyboxInNode, '--entrypoint', `/bin/sh,-c,${script}`, '-t', `${node.registryInNode}/tcab/${name}:1`]);
    }
    // Test workers cannot call node.exposeHostPort (the node lives in this process): they ask over this socket.
    const live = node;
    expose = createServer((req, res) => {
      const port = /^\/expose\/(\d+)$/.exec(req.url ?? '')?.[1];
      if (req.method !== 'POST' || !port) {
        res.writeHead(404).end('POST /expose/<port>');
        return;
      }
      live.exposeHostPort(Number(port)).then((address) => res.writeHead(200).end(address), (error: unknown) => res.writeHead(500).end((error as Error).message));
    });
    await new Promise<void>((resolve) => expose!.listen(context.exposeSocket, resolve));
    const timings = { plane: plane.timings, node: node.timings, node_up_ms: nodeUpMs, images_ms: Date.now() - t0 - nodeUpMs };
    return { plane, node, nodeBinDir, context, timings, down };
  } catch (error) {
    await down();
    throw error;
  }
}
