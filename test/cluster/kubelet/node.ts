// The process kubelet's Node: registered Ready with capacity, its status heartbeat and its Lease in
// kube-node-lease renewed every 10 s, so the node-lifecycle controller keeps it Ready and untainted.
import { cpus, totalmem } from 'node:os';
import { CoordinationV1Api, V1MicroTime } from '@kubernetes/client-node';
import type { V1Node, V1NodeCondition } from '@kubernetes/client-node';
import type { KubeletApi } from './api.ts';

const KUBELET_VERSION = 'v1.37.2';

function conditions(): V1NodeCondition[] {
  const t = new Date();
  const c = (type: string, status: string, reason: string, message: string): V1NodeCondition => ({ type, status, reason, message, lastHeartbeatTime: t, lastTransitionTime: t });
  return [
    c('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
    c('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
    c('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
    c('Ready', 'True', 'KubeletReady', 'process kubelet is posting ready status'),
  ];
}

export async function registerNode(api: KubeletApi): Promise<void> {
  const name = api.nodeName;
  const capacity = { cpu: String(cpus().length), memory: `${Math.floor(totalmem() / 1024)}Ki`, pods: '110', 'ephemeral-storage': '100Gi' };
  const node: V1Node = {
    metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', 'node.kubernetes.io/instance-type': 'process-kubelet' } },
    spec: {},
  };
  try {
    await api.core.createNode({ body: node });
  } catch (error) {
    if ((error as { code?: number }).code !== 409) throw error;
  }
  const current = await api.core.readNode({ name });
  current.status = {
    capacity,
    allocatable: capacity,
    conditions: conditions(),
    addresses: [{ type: 'InternalIP', address: '127.0.0.1' }, { type: 'Hostname', address: name }],
    nodeInfo: { architecture: 'amd64', operatingSystem: 'linux', kubeletVersion: KUBELET_VERSION, kubeProxyVersion: '', containerRuntimeVersion: 'process://1', kernelVersion: '', osImage: 'process kubelet (tcab tests)', machineID: name, systemUUID: name, bootID: name },
  };
  await api.core.replaceNodeStatus({ name, body: current });
}

export function startHeartbeat(api: KubeletApi): () => void {
  const leases = api.config.makeApiClient(CoordinationV1Api);
  const name = api.nodeName;
  const beat = async () => {
    // Lease times are MicroTime (six fractional digits) on the wire.
    const now = new V1MicroTime();
    try {
      const lease = await leases.readNamespacedLease({ name, namespace: 'kube-node-lease' });
      lease.spec = { ...lease.spec, holderIdentity: name, leaseDurationSeconds: 40, renewTime: now };
      await leases.replaceNamespacedLease({ name, namespace: 'kube-node-lease', body: lease });
    } catch (error) {
      if ((error as { code?: number }).code !== 404) throw error;
      await leases.createNamespacedLease({ namespace: 'kube-node-lease', body: { metadata: { name }, spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: now } } });
    }
    const node = await api.core.readNode({ name });
    node.status = { ...node.status, conditions: conditions() };
    await api.core.replaceNodeStatus({ name, body: node });
  };
  const tick = () => void beat().catch((error: unknown) => process.stderr.write(`heartbeat: ${(error as Error).message}\n`));
  tick();
  const timer = setInterval(tick, 10_000);
  return () => clearInterval(timer);
}
