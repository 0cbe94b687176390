// Vitest global setup of the `cluster` project: one control plane per test run, each test file in its own
// namespaces. TCAB_TEST_CLUSTER selects it: `local` (default: built here, test/cluster/control-plane.ts, with one
// real node: kubelet + containerd + runc, test/cluster/node/real-node.ts), `external` (the cluster KUBECONFIG
// points at), `k3s` (@testcontainers/k3s, where a container engine exists). What tests get about the real node
// (inject('realNode')) is described in real-node-context.ts.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { NODE_NAME, clusterBinaries, up } from './control-plane.ts';
import { BUSYBOX_IMAGE, nodeBinaries, startRealNode } from './node/real-node.ts';
import type { RealNode } from './node/real-node.ts';
import { pushImages } from './real-node-context.ts';
import type { RealNodeContext } from './real-node-context.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfig: string;
    clusterBinDir: string;
    clusterMode: string;
  }
}

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
export const REAL_NODE_NAME = 'tcab-node';
/** The chart images every local run pushes: the driver (dispatcher test) and the dispatcher (the chart's e2e). */
const PUSHED: ('driver' | 'dispatcher')[] = ['driver', 'dispatcher'];

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const mode = process.env.TCAB_TEST_CLUSTER || 'local';
  project.provide('clusterMode', mode);
  project.provide('realNode', undefined);
  if (mode === 'external') {
    const kubeconfig = process.env.KUBECONFIG;
    if (!kubeconfig) throw new Error('TCAB_TEST_CLUSTER=external needs KUBECONFIG');
    project.provide('kubeconfig', kubeconfig);
    project.provide('clusterBinDir', clusterBinaries());
    return async () => undefined;
  }
  if (mode === 'k3s') {
    // Optional: installed only where a container engine exists (npm install --no-save @testcontainers/k3s).
    const moduleName = '@testcontainers/k3s';
    const { K3sContainer } = (await import(moduleName).catch(() => {
      throw new Error('TCAB_TEST_CLUSTER=k3s needs @testcontainers/k3s (npm install --no-save @testcontainers/k3s) and a container engine');
    })) as { K3sContainer: new (image: string) => { start(): Promise<{ getKubeConfig(): string; stop(): Promise<unknown> }> } };
    const container = await new K3sContainer('rancher/k3s:v1.37.2-k3s1').start();
    const dir = mkdtempSync(join(tmpdir(), 'tcab-k3s-'));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, container.getKubeConfig());
    project.provide('kubeconfig', kubeconfig);
    project.provide('clusterBinDir', clusterBinaries());
    return async () => {
      await container.stop();
      rmSync(dir, { recursive: true, force: true });
    };
  }
  if (mode !== 'local') throw new Error(`TCAB_TEST_CLUSTER must be local, external or k3s, got "${mode}"`);
  const dir = mkdtempSync(join(tmpdir(), 'tcab-cluster-'));
  const t0 = Date.now();
  // The chart images build on the host (a cold build needs the package registries) while the plane and node start.
  const built = exec(join(ROOT, 'scripts', 'images', 'build.sh'), ['--only', PUSHED.join(',')], { encoding: 'utf8', maxBuffer: 64 << 20 });
  built.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
  const nodeBinDir = nodeBinaries();
  const plane = await up({ dir, dieWithParent: true });
  let node: RealNode | undefined;
  let expose: ReturnType<typeof createServer> | undefined;
  const down = async () => {
    expose?.close();
    await node?.down();
    await plane.down();
  };
  try {
    // Until control-plane.ts stops starting it: the process kubelet's node must not take Pods (it goes, with its Node).
    const processKubelet = plane.processes.find((p) => p.name === 'process-kubelet');
    if (processKubelet) {
      await processKubelet.stop();
      await exec(join(plane.binDir, 'kubectl'), ['--kubeconfig', plane.kubeconfig, 'delete', 'node', NODE_NAME]);
    }
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
    process.stderr.write(`test control plane + real node up: ${JSON.stringify({ plane: plane.timings, node: node.timings, node_up_ms: nodeUpMs, images_ms: Date.now() - t0 - nodeUpMs })}\n`);
    project.provide('kubeconfig', plane.kubeconfig);
    project.provide('clusterBinDir', plane.binDir);
    project.provide('realNode', context);
  } catch (error) {
    await down();
    throw error;
  }
  return async () => {
    await down();
    // TCAB_KEEP_CLUSTER_DIR=1 keeps the logs (etcd, apiserver, ...; the node's beside its directory) of a failed run.
    if (process.env.TCAB_KEEP_CLUSTER_DIR === '1') process.stderr.write(`test control plane logs kept in ${dir}/logs\n`);
    else rmSync(dir, { recursive: true, force: true });
  };
}
