// `tcab console`'s sources, from a kubeconfig: its own lean list+watch of Runs (each slimmed to the row's fields as
// it arrives: console/server/run-row.ts slimRun), of Evaluations (slimmed: evaluation-row.ts slimEvaluation) and of
// HarnessConfigs, the apiserver for one Run, its Events and
// the cancel patch. Readiness is the dispatcher's to know (its configured Secrets), not a workstation's.
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../shared/api-group.ts';
import { makeLeanInformer } from '../../kube/lean-informer.ts';
import type { ListPageFn } from '../../kube/lean-informer.ts';
import { leanObject } from '../../kube/lean-transforms.ts';
import type { EvaluationObject, HarnessConfigObject, RunObject } from '../../kube/resources.ts';
import { registryCatalog } from '../../console/server/harness-catalog.ts';
import { cacheConfigsSource, cacheEvaluationsSource, cacheRunsSource, kubeEventsSource, kubeRunDetailSource, kubeRunWriter } from '../../console/server/kube-sources.ts';
import type { WatchedCache } from '../../console/server/kube-sources.ts';
import { slimRun } from '../../console/server/run-row.ts';
import { slimEvaluation } from '../../console/server/evaluation-row.ts';
import type { ConsoleEvaluation, ConsoleRun, ConsoleSources } from '../../console/server/sources.ts';

export const READINESS_UNKNOWN = "known to the dispatcher only (it depends on its Secrets): open the dispatcher's console to see it";

export interface KubeConsoleSources {
  sources: Omit<ConsoleSources, 'activity' | 'feed'>;
  /** Lists the collections and opens their watches. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** @param namespace the Runs of one namespace; undefined = of every namespace the kubeconfig may list. */
export function kubeConsoleSources(config: KubeConfig, namespace: string | undefined): KubeConsoleSources {
  const custom = config.makeApiClient(CustomObjectsApi);
  // One namespace's objects, or every namespace's (no --namespace): the path the watch follows and its paged list.
  const namespaced = <T extends KubernetesObject>(plural: string, transform: (object: T) => T) => {
    const path = namespace ? `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${plural}` : `/apis/${GROUP}/${VERSION}/${plural}`;
    const list = (page: { limit: number; _continue?: string }) =>
      namespace ? custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural, ...page }) : custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural, ...page });
    return makeLeanInformer<T>(config, path, list as unknown as ListPageFn<T>, { transform });
  };
  const runs = namespaced<RunObject>('runs', (r) => slimRun(r as RunObject & ConsoleRun));
  const evaluations = namespaced<EvaluationObject>('evaluations', (e) => slimEvaluation(e as EvaluationObject & ConsoleEvaluation));
  const configs = makeLeanInformer<HarnessConfigObject>(
    config,
    `/apis/${GROUP}/${VERSION}/harnessconfigs`,
    ((page: { limit: number; _continue?: string }) => custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'harnessconfigs', ...page })) as unknown as ListPageFn<HarnessConfigObject>,
    { transform: leanObject },
  );
  // The informers stop on an error other than a watch's normal end: start them again after a second.
  for (const informer of [runs, evaluations, configs]) informer.on('error', () => void setTimeout(() => void informer.start().catch(() => undefined), 1000));
  let retryEvaluations: NodeJS.Timeout | undefined;
  return {
    sources: {
      runs: cacheRunsSource(runs as unknown as WatchedCache<ConsoleRun>),
      evaluations: cacheEvaluationsSource(evaluations as unknown as WatchedCache<ConsoleEvaluation>),
      configs: cacheConfigsSource(configs as unknown as Parameters<typeof cacheConfigsSource>[0]),
      runDetail: kubeRunDetailSource(config),
      kubeEvents: kubeEventsSource(config),
      writer: kubeRunWriter(config),
      harnesses: registryCatalog(() => ({ ready: false, missing: [], unknown: READINESS_UNKNOWN })),
    },
    start: async () => {
      // A cluster without the Evaluation CRD (an older install) or a kubeconfig that may not list them still gets
      // its console: the page shows none until a retry of the list succeeds.
      const startEvaluations = (): Promise<void> => evaluations.start().catch(() => void (retryEvaluations = setTimeout(() => void startEvaluations(), 10_000)));
      await Promise.all([runs.start(), startEvaluations(), configs.start()]);
    },
    stop: async () => {
      clearTimeout(retryEvaluations);
      await Promise.all([runs.stop(), evaluations.stop(), configs.stop()]);
    },
  };
}
