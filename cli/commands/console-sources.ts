// `tcab console`'s sources, from a kubeconfig: its own lean list+watch of Runs (each slimmed to the row's fields as
// it arrives: console/server/run-row.ts slimRun) and of HarnessConfigs, the apiserver for one Run, its Events and
// the cancel patch. Readiness is the dispatcher's to know (its configured Secrets), not a workstation's.
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../shared/api-group.ts';
import { makeLeanInformer } from '../../kube/lean-informer.ts';
import type { ListPageFn } from '../../kube/lean-informer.ts';
import { leanObject } from '../../kube/lean-transforms.ts';
import type { HarnessConfigObject, RunObject } from '../../kube/resources.ts';
import { registryCatalog } from '../../console/server/harness-catalog.ts';
import { cacheConfigsSource, cacheRunsSource, kubeEventsSource, kubeRunDetailSource, kubeRunWriter } from '../../console/server/kube-sources.ts';
import type { WatchedCache } from '../../console/server/kube-sources.ts';
import { slimRun } from '../../console/server/run-row.ts';
import type { ConsoleRun, ConsoleSources } from '../../console/server/sources.ts';

export const READINESS_UNKNOWN = "known to the dispatcher only (it depends on its Secrets): open the dispatcher's console to see it";

export interface KubeConsoleSources {
  sources: Omit<ConsoleSources, 'activity' | 'feed'>;
  /** Lists both collections and opens their watches. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** @param namespace the Runs of one namespace; undefined = of every namespace the kubeconfig may list. */
export function kubeConsoleSources(config: KubeConfig, namespace: string | undefined): KubeConsoleSources {
  const custom = config.makeApiClient(CustomObjectsApi);
  const runsPath = namespace ? `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/runs` : `/apis/${GROUP}/${VERSION}/runs`;
  const listRuns = (page: { limit: number; _continue?: string }) =>
    namespace ? custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: 'runs', ...page }) : custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'runs', ...page });
  const runs = makeLeanInformer<RunObject>(config, runsPath, listRuns as unknown as ListPageFn<RunObject>, { transform: (r) => slimRun(r as RunObject & ConsoleRun) });
  const configs = makeLeanInformer<HarnessConfigObject>(
    config,
    `/apis/${GROUP}/${VERSION}/harnessconfigs`,
    ((page: { limit: number; _continue?: string }) => custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'harnessconfigs', ...page })) as unknown as ListPageFn<HarnessConfigObject>,
    { transform: leanObject },
  );
  // The informers stop on an error other than a watch's normal end: start them again after a second.
  for (const informer of [runs, configs]) informer.on('error', () => void setTimeout(() => void informer.start().catch(() => undefined), 1000));
  return {
    sources: {
      runs: cacheRunsSource(runs as unknown as WatchedCache<ConsoleRun>),
      configs: cacheConfigsSource(configs as unknown as Parameters<typeof cacheConfigsSource>[0]),
      runDetail: kubeRunDetailSource(config),
      kubeEvents: kubeEventsSource(config),
      writer: kubeRunWriter(config),
      harnesses: registryCatalog(() => ({ ready: false, missing: [], unknown: READINESS_UNKNOWN })),
    },
    start: async () => {
      await Promise.all([runs.start(), configs.start()]);
    },
    stop: async () => {
      await Promise.all([runs.stop(), configs.stop()]);
    },
  };
}
