// HarnessConfig objects (cluster-scoped, named by slug) as the HTTP API's store. Updates carry the object's
// resourceVersion, so two concurrent POSTs cannot silently overwrite each other.
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import type { HarnessConfigSpec } from '../../shared/harness-config.ts';
import { GROUP, HARNESS_CONFIGS, VERSION } from '../../kube/resources.ts';
import type { HarnessConfigObject } from '../../kube/resources.ts';
import type { HarnessConfigStore } from './server.ts';
import { isNotFound } from '../../kube/errors.ts';

export function kubeHarnessConfigStore(config: KubeConfig): HarnessConfigStore {
  const custom = config.makeApiClient(CustomObjectsApi);
  const coordinates = { group: GROUP, version: VERSION, plural: HARNESS_CONFIGS };
  return {
    async list() {
      const list = (await custom.listClusterCustomObject(coordinates)) as { items: HarnessConfigObject[] };
      return new Map(list.items.map((c) => [c.metadata!.name!, c.spec]));
    },
    async set(slug: string, spec: HarnessConfigSpec) {
      const body = { apiVersion: `${GROUP}/${VERSION}`, kind: 'HarnessConfig', metadata: { name: slug }, spec };
      try {
        const current = (await custom.getClusterCustomObject({ ...coordinates, name: slug })) as HarnessConfigObject;
        await custom.replaceClusterCustomObject({ ...coordinates, name: slug, body: { ...body, metadata: { name: slug, resourceVersion: current.metadata?.resourceVersion } } });
      } catch (error) {
        if (!isNotFound(error)) throw error;
        await custom.createClusterCustomObject({ ...coordinates, body });
      }
    },
  };
}
