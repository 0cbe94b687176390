// Every informer (list + watch cache) the dispatcher keeps, built in this one place: the memory-lean informer
// (kube/lean-informer.ts: paged lists, a per-object transform) replaces client-node's here and nowhere else.
// Each cache is selected server-side as narrowly as the apiserver allows:
//   - Runs of the namespace; HarnessConfigs (cluster-scoped, one per harness);
//   - driver Pods: labelSelector tcab.dev/run (only Pods this dispatcher made);
//   - kubelet Events: fieldSelector involvedObject.kind=Pod. The apiserver's Event field selectors are exact
//     matches on involvedObject.{kind,namespace,name,uid,apiVersion,resourceVersion,fieldPath}, reason,
//     reportingComponent, source, type (pkg/registry/core/event/strategy.go); there is no prefix match and Events
//     carry no labels, so "Events about our driver Pods" is kind=Pod here plus the pod-name filter in
//     pod-lifecycle.ts. Without it the cache held every Event of the namespace, including the dispatcher's own
//     Events on Runs (one per transition: more Events than Runs);
//   - Secrets: the configured names only, metadata only (kube/metadata-only.ts);
//   - ConfigMaps of test cases: labelSelector tcab.dev/test-cases (any value), so no other ConfigMap is held.
//
// Fields each controller reads (what a slim cached object must keep, besides metadata.name/namespace/
// resourceVersion):
//   Run (run-reconciler, claim-pass, gauges): metadata.uid, creationTimestamp; spec (whole: RunSpec is parsed at the
//     claim and handed to the driver Pod; spec.harness, spec.cancel otherwise); status (whole: the status writer
//     computes the next status from it).
//   Pod (run-reconciler, pod-lifecycle, claim-pass): metadata.uid, creationTimestamp, deletionTimestamp,
//     labels[tcab.dev/run], ownerReferences[kind=Run].uid; spec.nodeName; status.phase, reason, message,
//     conditions[type,status,reason,message] (PodScheduled, DisruptionTarget),
//     containerStatuses[0].state.terminated.exitCode.
//   Event (pod-lifecycle): metadata.uid, creationTimestamp; involvedObject.kind, name, uid; reason, message,
//     lastTimestamp, eventTime.
//   HarnessConfig (claim-pass): metadata.name, spec.maxParallelism. Secret (claim-pass): metadata.name.
//   Evaluation (evaluations/controller): metadata.uid, generation, deletionTimestamp; spec (whole); status (whole:
//     a status PUT sends the cached object back). Run, for it: metadata.ownerReferences (kept whole above).
//   ConfigMap of test cases (evaluations/controller): metadata.resourceVersion; data (binaryData is dropped).
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { makeLeanInformer } from '../../kube/lean-informer.ts';
import type { ListPageFn } from '../../kube/lean-informer.ts';
import { leanEvent, leanObject, leanPod } from '../../kube/lean-transforms.ts';
import type { CoreV1Event, Informer, KubeConfig, KubernetesObject, ObjectCache, V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../shared/log.ts';
import type { DispatcherConfig } from '../config.ts';
import { errorMessage, statusCode } from '../../kube/errors.ts';
import { configuredSecretNames, secretMetadataInformer } from '../../kube/metadata-only.ts';
import { EVALUATIONS, evaluationsPath, GROUP, HARNESS_CONFIGS, harnessConfigsPath, RUNS, runsPath, VERSION } from '../../kube/resources.ts';
import type { EvaluationObject, HarnessConfigObject, RunObject } from '../../kube/resources.ts';
import { RUN_LABEL } from '../pods/driver-pod.ts';
import { TEST_CASES_LABEL } from '../../shared/evaluation/test-case-sources.ts';

export type Cache<T extends KubernetesObject> = Informer<T> & Pick<ObjectCache<T>, 'get' | 'list'>;

/** Only kubelet-side Events about Pods (see above). */
export const POD_EVENTS_FIELD_SELECTOR = 'involvedObject.kind=Pod';

export interface Caches {
  runs: Cache<RunObject>;
  configs: Cache<HarnessConfigObject>;
  pods: Cache<V1Pod>;
  kubeEvents: Cache<CoreV1Event>;
  secrets: Cache<KubernetesObject>;
  evaluations: Cache<EvaluationObject>;
  /** ConfigMaps labelled tcab.dev/test-cases: an Evaluation's spec.testCasesFrom. */
  testCaseConfigMaps: Cache<V1ConfigMap>;
}

/** A ConfigMap of test cases as the Evaluation controller reads it: its identity, version and data. */
export function leanTestCaseConfigMap(configMap: V1ConfigMap): V1ConfigMap {
  const { binaryData: _, ...kept } = leanObject(configMap);
  return kept;
}

export function buildCaches(config: KubeConfig, settings: DispatcherConfig): Caches {
  const ns = settings.TCAB_NAMESPACE;
  const core = config.makeApiClient(CoreV1Api);
  const custom = config.makeApiClient(CustomObjectsApi);
  // Lean informers (kube/lean-informer.ts): paged lists, and each object slimmed to what the controllers read.
  const lean = <T extends KubernetesObject>(path: string, list: (page: { limit: number; _continue?: string }) => Promise<unknown>, transform: (object: T) => T, labelSelector?: string, fieldSelector?: string) =>
    makeLeanInformer<T>(config, path, list as ListPageFn<T>, { transform, labelSelector, fieldSelector });
  return {
    runs: lean<RunObject>(runsPath(ns), (page) => custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: RUNS, ...page }), leanObject),
    configs: lean<HarnessConfigObject>(harnessConfigsPath(), (page) => custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: HARNESS_CONFIGS, ...page }), leanObject),
    pods: lean<V1Pod>(`/api/v1/namespaces/${ns}/pods`, (page) => core.listNamespacedPod({ namespace: ns, labelSelector: RUN_LABEL, ...page }), leanPod, RUN_LABEL),
    kubeEvents: lean<CoreV1Event>(`/api/v1/namespaces/${ns}/events`, (page) => core.listNamespacedEvent({ namespace: ns, fieldSelector: POD_EVENTS_FIELD_SELECTOR, ...page }), leanEvent, undefined, POD_EVENTS_FIELD_SELECTOR),
    // Which of the configured Secrets exist, never what they hold: listed and watched by name, as metadata only.
    secrets: secretMetadataInformer(config, ns, configuredSecretNames(settings)) as unknown as Cache<KubernetesObject>,
    evaluations: lean<EvaluationObject>(evaluationsPath(ns), (page) => custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: EVALUATIONS, ...page }), leanObject),
    testCaseConfigMaps: lean<V1ConfigMap>(`/api/v1/namespaces/${ns}/configmaps`, (page) => core.listNamespacedConfigMap({ namespace: ns, labelSelector: TEST_CASES_LABEL, ...page }), leanTestCaseConfigMap, TEST_CASES_LABEL),
  };
}

/**
 * Starts and keeps the caches: a watch that fails is restarted after a second (the informer stops on an error).
 * synced() is true once every cache's initial list is done and its watch runs, false while one is down: the
 * readiness endpoint reports it.
 */
export class CacheSet {
  readonly caches: Caches;
  private readonly up = new Map<string, boolean>();
  /**
   * Caches whose resource the apiserver does not serve (404: its CRD not installed) and that readiness may do
   * without: Evaluations. Helm installs a chart's CRDs only at `helm install`, never at `helm upgrade`, so a
   * dispatcher upgraded in place meets no Evaluation CRD until the operator applies it; Runs must still flow.
   */
  private readonly absent = new Set<string>();
  private static readonly OPTIONAL: ReadonlySet<string> = new Set(['evaluations']);
  private stopped = false;
  private readonly log: Logger;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(caches: Caches, log: Logger) {
    this.caches = caches;
    this.log = log;
  }

  async start(): Promise<void> {
    await Promise.all(Object.entries(this.caches).map(async ([name, informer]: [string, Informer<KubernetesObject>]) => {
      let failed = false;
      informer.on('error', (error: unknown) => {
        failed = true;
        this.up.set(name, false);
        if (this.stopped) return; // stopping closes the watches: not an error to recover from
        const absent = CacheSet.OPTIONAL.has(name) && statusCode(error) === 404;
        if (absent && !this.absent.has(name)) this.log.warn({ cache: name }, `the apiserver does not serve ${name} (its CRD is not installed: kubectl apply -f deploy/crds/); retrying, and ready without it`);
        if (absent) this.absent.add(name);
        else this.log.warn({ cache: name, err: error ? errorMessage(error) : 'closed' }, 'watch failed; restarting');
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          if (!this.stopped) void this.startOne(name, informer, () => failed, () => (failed = false));
        }, 1000);
        this.timers.add(timer);
      });
      await this.startOne(name, informer, () => failed, () => (failed = false));
    }));
  }

  private async startOne(name: string, informer: Informer<KubernetesObject>, failed: () => boolean, reset: () => void): Promise<void> {
    reset();
    await informer.start();
    // start() resolves after a failed initial list too (the error callback fired): synced only without one.
    this.up.set(name, !failed() && !this.stopped);
    if (this.up.get(name)) this.absent.delete(name);
  }

  synced(): boolean {
    return Object.keys(this.caches).every((name) => this.up.get(name) === true || this.absent.has(name));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.all(Object.values(this.caches).map((informer: Informer<KubernetesObject>) => informer.stop()));
    for (const name of Object.keys(this.caches)) this.up.set(name, false);
  }
}
