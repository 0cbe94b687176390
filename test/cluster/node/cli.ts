// A control plane of its own plus a real node, by hand (and for the crash-recovery test):
//   node test/cluster/node/cli.ts up      # prints `export KUBECONFIG=... PATH=...`, then one JSON line; runs until SIGTERM/SIGINT
//   node test/cluster/node/cli.ts sweep   # cleans up after real nodes whose owning process died
// Everything dies with this process (parent-death signal) except what containerd daemonized (shims and
// containers): `sweep`, or the next node's start, removes those.
import { sweepStaleNodes } from './real-node.ts';
import { upPlaneWithRealNode } from './with-plane.ts';

const command = process.argv[2];
if (command === 'sweep') {
  const swept = sweepStaleNodes();
  process.stdout.write(`${JSON.stringify({ swept })}\n`);
} else if (command === 'up') {
  const { plane, planeDir, node, nodeBinDir: binDir, down } = await upPlaneWithRealNode(process.env.TCAB_REAL_NODE_NAME ?? 'tcab-real-node-1');
  process.stderr.write(`real node up: ${JSON.stringify(node.timings)}\n`);
  process.stdout.write(`export KUBECONFIG=${plane.kubeconfig} PATH=${plane.binDir}:${binDir}:$PATH\n`);
  process.stdout.write(`${JSON.stringify({ id: node.id, ip: node.ip, dir: node.dir, netns: node.netns, cgroupRoot: node.cgroupRoot, planeDir, kubeconfig: plane.kubeconfig, binDir: plane.binDir })}\n`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await down();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  setInterval(() => undefined, 1 << 30);
} else {
  process.stderr.write('usage: node test/cluster/node/cli.ts up|sweep\n');
  process.exit(2);
}
