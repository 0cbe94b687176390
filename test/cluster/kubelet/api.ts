// The process kubelet's calls to the apiserver, as the node identity (system:node:<name>, so the Node authorizer
// and NodeRestriction apply): objects its pods reference, ServiceAccount tokens, pod status, Events.
import { randomBytes } from 'node:crypto';
import { CoreV1Api } from '@kubernetes/client-node';
import type { CoreV1Event, KubeConfig, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { ObjectSource } from './env.ts';
import type { TokenSource } from './volumes.ts';

const notFound = (error: unknown) => (error as { code?: number }).code === 404;
const conflict = (error: unknown) => (error as { code?: number }).code === 409;

export class KubeletApi implements ObjectSource, TokenSource {
  readonly core: CoreV1Api;
  readonly config: KubeConfig;
  readonly nodeName: string;

  constructor(config: KubeConfig, nodeName: string) {
    this.config = config;
    this.nodeName = nodeName;
    this.core = config.makeApiClient(CoreV1Api);
  }

  async secret(namespace: string, name: string): Promise<Record<string, Buffer> | undefined> {
    try {
      const secret = await this.core.readNamespacedSecret({ name, namespace });
      return Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
    } catch (error) {
      if (notFound(error)) return undefined;
      throw error;
    }
  }

  async configMap(namespace: string, name: string): Promise<Record<string, Buffer> | undefined> {
    try {
      const map = await this.core.readNamespacedConfigMap({ name, namespace });
      return {
        ...Object.fromEntries(Object.entries(map.data ?? {}).map(([k, v]) => [k, Buffer.from(v)])),
        ...Object.fromEntries(Object.entries(map.binaryData ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
      };
    } catch (error) {
      if (notFound(error)) return undefined;
      throw error;
    }
  }

  async token(pod: V1Pod, audience: string | undefined, expirationSeconds: number): Promise<string> {
    const request = await this.core.createNamespacedServiceAccountToken({
      name: pod.spec?.serviceAccountName ?? 'default',
      namespace: pod.metadata!.namespace!,
      body: {
        spec: {
          audiences: audience ? [audience] : [],
          expirationSeconds,
          boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata!.name!, uid: pod.metadata!.uid! },
        },
      },
    });
    return request.status!.token!;
  }

  /** Writes the pod's status; on a conflict re-reads and retries. Returns false when the pod is gone. */
  async writeStatus(pod: V1Pod, status: V1PodStatus): Promise<boolean> {
    const { name, namespace, uid } = pod.metadata!;
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const current = await this.core.readNamespacedPod({ name: name!, namespace: namespace! });
        if (current.metadata?.uid !== uid) return false;
        // Conditions the scheduler owns (PodScheduled) stay; the kubelet's own are replaced.
        const kept = (current.status?.conditions ?? []).filter((c) => !(status.conditions ?? []).some((n) => n.type === c.type));
        current.status = { ...current.status, ...status, conditions: [...kept, ...(status.conditions ?? [])] };
        await this.core.replaceNamespacedPodStatus({ name: name!, namespace: namespace!, body: current });
        return true;
      } catch (error) {
        if (notFound(error)) return false;
        if (!conflict(error)) throw error;
      }
    }
    throw new Error(`could not write the status of ${namespace}/${name}: conflicts`);
  }

  async deletePodNow(pod: V1Pod): Promise<void> {
    try {
      await this.core.deleteNamespacedPod({ name: pod.metadata!.name!, namespace: pod.metadata!.namespace!, body: { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata!.uid } } });
    } catch (error) {
      if (!notFound(error) && !conflict(error)) throw error;
    }
  }

  /** A kubelet Event on the pod (or one of its containers); failures to record are not fatal. */
  async event(pod: V1Pod, type: 'Normal' | 'Warning', reason: string, message: string, container?: string): Promise<void> {
    const now = new Date();
    const body: CoreV1Event = {
      metadata: { name: `${pod.metadata!.name}.${randomBytes(8).toString('hex')}`, namespace: pod.metadata!.namespace },
      involvedObject: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata!.name, namespace: pod.metadata!.namespace, uid: pod.metadata!.uid, fieldPath: container ? `spec.containers{${container}}` : undefined },
      reason,
      message,
      type,
      source: { component: 'kubelet', host: this.nodeName },
      reportingComponent: 'kubelet',
      reportingInstance: this.nodeName,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    await this.core.createNamespacedEvent({ namespace: pod.metadata!.namespace!, body }).catch((error: unknown) => {
      process.stderr.write(`event ${reason} for ${pod.metadata!.name} not recorded: ${(error as Error).message}\n`);
    });
  }
}
