// A control plane of its own with one real node registered to it: what the real-node test and `cli.ts up` both
// start. Both die with the calling process (parent-death signal); `down()` stops the node, then the plane.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { up } from '../control-plane.ts';
import type { ControlPlane } from '../control-plane.ts';
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

/** `options`: RealNodeOptions' taint and storage (both default true), e.g. `{ taint: false }` for a cluster whose only node it is. */
export async function upPlaneWithRealNode(nodeName: string, options: Pick<RealNodeOptions, 'taint' | 'storage'> = {}): Promise<PlaneWithNode> {
  const nodeBinDir = nodeBinaries();
  const planeDir = mkdtempSync(join(tmpdir(), 'tcab-real-node-plane-'));
  const plane = await up({ dir: planeDir, dieWithParent: true });
  const node = await startRealNode({
    dir: mkdtempSync(join(tmpdir(), 'tcab-real-node-')),
    binDir: nodeBinDir,
    clusterBinDir: plane.binDir,
    server: plane.server,
    adminKubeconfig: plane.kubeconfig,
    caCert: join(planeDir, 'pki', 'ca.crt'),
    caKey: join(planeDir, 'pki', 'ca.key'),
    nodeName,
    ...options,
    dieWithParent: true,
  });
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
