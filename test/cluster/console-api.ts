// The dispatcher's HTTP API with the operator console mounted on it, for the console's browser test.
// PROVISIONAL until the dispatcher's own wiring lands (dispatcher/main.ts mounting console/server): the console's
// Runs and HarnessConfigs come from informers of this module's own instead of the dispatcher's caches.
import { makeInformer } from '@kubernetes/client-node';
import type { KubernetesObject, ListPromise , KubeConfig} from '@kubernetes/client-node';
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { buildApi } from '../../dispatcher/api/server.ts';
import { kubeHarnessConfigStore } from '../../dispatcher/api/kube-store.ts';
import type { Dispatcher } from '../../dispatcher/controller/dispatcher.ts';
import type { DispatcherConfig } from '../../dispatcher/config.ts';
import { listHarnesses } from '../../harnesses/registry.ts';
import { mountConsole } from '../../console/server/mount.ts';
import { cacheConfigsSource, cacheRunsSource, kubeEventsSource, kubeRunDetailSource, kubeRunWriter } from '../../console/server/kube-sources.ts';
import type { WatchedCache } from '../../console/server/kube-sources.ts';
import { registryCatalog } from '../../console/server/harness-catalog.ts';
import { natsSources } from '../../console/server/nats-sources.ts';
import type { ConsoleRun } from '../../console/server/sources.ts';
import type { HarnessConfigSpec } from '../../shared/harness-config.ts';
import { GROUP, VERSION } from '../../shared/api-group.ts';
import { ConsoleNats } from '../../nats/console-reader.ts';
import { natsSettings } from '../../nats/settings.ts';
import type { Logger } from '../../shared/log.ts';
import { clusterConfig } from './support.ts';

export interface ServedApi {
  app: FastifyInstance;
  url: string;
  stop(): Promise<void>;
}

function informer<T extends KubernetesObject>(config: KubeConfig, path: string, list: () => Promise<{ items: T[] }>) {
  const inf = makeInformer<T>(config, path, list as unknown as ListPromise<T>);
  return inf;
}

export async function serveDispatcherApi(options: { dispatcher: Dispatcher; settings: DispatcherConfig; metrics: { registry: Registry }; natsUrl: string; token: string; log: Logger }): Promise<ServedApi> {
  const config = clusterConfig();
  const custom = config.makeApiClient(CustomObjectsApi);
  const ns = options.settings.TCAB_NAMESPACE;
  const runs = informer<ConsoleRun & KubernetesObject>(config, `/apis/${GROUP}/${VERSION}/namespaces/${ns}/runs`, () => custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: 'runs' }) as Promise<{ items: (ConsoleRun & KubernetesObject)[] }>);
  const configs = informer<KubernetesObject & { spec: HarnessConfigSpec }>(config, `/apis/${GROUP}/${VERSION}/harnessconfigs`, () => custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'harnessconfigs' }) as Promise<{ items: (KubernetesObject & { spec: HarnessConfigSpec })[] }>);
  await runs.start();
  await configs.start();
  const nats = await ConsoleNats.connect(natsSettings(options.natsUrl));
  const app = buildApi({
    store: kubeHarnessConfigStore(config),
    slugs: () => listHarnesses().map((h) => h.manifest.slug),
    token: () => options.token,
    metrics: options.metrics.registry,
    readiness: () => ({ informersSynced: options.dispatcher.synced(), natsConnected: true, leader: options.dispatcher.isLeader }),
  });
  const mounted = mountConsole(app, {
    token: () => options.token,
    sources: {
      runs: cacheRunsSource(runs as unknown as WatchedCache<ConsoleRun>),
      configs: cacheConfigsSource(configs as unknown as WatchedCache<KubernetesObject & { spec: HarnessConfigSpec }>),
      runDetail: kubeRunDetailSource(config),
      kubeEvents: kubeEventsSource(config),
      writer: kubeRunWriter(config),
      harnesses: registryCatalog(() => ({ ready: true, mode: 'api-key', missing: [] })),
      ...natsSources(nats),
    },
  });
  await mounted.started;
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    app,
    url,
    stop: async () => {
      await app.close();
      await mounted.stop();
      await runs.stop();
      await configs.stop();
      await nats.close();
    },
  };
}
