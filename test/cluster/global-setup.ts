// Vitest global setup of the `cluster` project: one control plane per test run, each test file in its own
// namespaces. TCAB_TEST_CLUSTER selects it: `local` (default: local-cluster.ts, the control plane built here with
// three real nodes: kubelet + containerd + runc; TCAB_TEST_NODES=1|2 for fewer), `external` (the cluster KUBECONFIG points at), `k3s`
// (@testcontainers/k3s, where a container engine exists). What tests get about the real node (inject('realNode'))
// is described in real-node-context.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { clusterBinaries } from './control-plane.ts';
import { startLocalCluster } from './local-cluster.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfig: string;
    clusterBinDir: string;
    clusterMode: string;
  }
}

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
  const cluster = await startLocalCluster(dir);
  process.stderr.write(`test control plane + ${cluster.nodes.length} real node(s) up: ${JSON.stringify(cluster.timings)}\n`);
  project.provide('kubeconfig', cluster.plane.kubeconfig);
  project.provide('clusterBinDir', cluster.plane.binDir);
  project.provide('realNode', cluster.context);
  return async () => {
    await cluster.down();
    // TCAB_KEEP_CLUSTER_DIR=1 keeps the logs (etcd, apiserver, ...; the node's beside its directory) of a failed run.
    if (process.env.TCAB_KEEP_CLUSTER_DIR === '1') process.stderr.write(`test control plane logs kept in ${dir}/logs\n`);
    else rmSync(dir, { recursive: true, force: true });
  };
}
