// The console's Kubernetes sources on @kubernetes/client-node: one Run whole and live (get, then watch it by
// name), the Kubernetes Events about a Run and its driver Pod (list + watch by involvedObject), the cancel patch,
// and adapters from a list+watch cache (the dispatcher's own Run and HarnessConfig caches, or `tcab console`'s).
import { CoreV1Api, CustomObjectsApi, PatchStrategy, Watch, setHeaderOptions } from '@kubernetes/client-node';
import type { CoreV1Event, KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../shared/api-group.ts';
import type { HarnessConfigSpec } from '../../shared/harness-config.ts';
import type { KubeEventRow } from '../../shared/console.ts';
import type { ConsoleEvaluation, EvaluationsSource, ConsoleRun, HarnessConfigsSource, KubeEventsSource, RunDetailSource, RunWriter, RunsSource, Unsubscribe } from './sources.ts';

const RUNS = 'runs';
const runsPath = (namespace: string) => `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${RUNS}`;
/** After a watch ends (the apiserver closes them every few minutes, or an error), resume after this long. */
const REWATCH_MS = 1000;

const statusCode = (error: unknown) => (error as { code?: number; statusCode?: number } | undefined)?.code ?? (error as { statusCode?: number } | undefined)?.statusCode;

/** The part of client-node's Informer / the dispatcher's lean informer a cache adapter needs. */
export interface WatchedCache<T> {
  list(): T[];
  on(verb: 'add' | 'update' | 'delete', cb: (object: T) => void): void;
  off(verb: 'add' | 'update' | 'delete', cb: (object: T) => void): void;
}

/** Adds and updates as upserts, deletions as deletes, from a cache's handlers; returns the unsubscribe. */
function followCache<T>(cache: WatchedCache<T>, upsert: (object: T) => void, remove: (object: T) => void): Unsubscribe {
  cache.on('add', upsert);
  cache.on('update', upsert);
  cache.on('delete', remove);
  return () => {
    cache.off('add', upsert);
    cache.off('update', upsert);
    cache.off('delete', remove);
  };
}

export function cacheRunsSource(cache: WatchedCache<ConsoleRun>): RunsSource {
  return {
    list: () => cache.list(),
    subscribe: (onChange) => followCache(cache, (run) => onChange({ type: 'upsert', run }), (run) => onChange({ type: 'delete', run })),
  };
}

/** Evaluations from a list+watch cache: the dispatcher's own Evaluation informer, or `tcab console`'s. */
export function cacheEvaluationsSource(cache: WatchedCache<ConsoleEvaluation>): EvaluationsSource {
  return {
    list: () => cache.list(),
    subscribe: (onChange) => followCache(cache, (evaluation) => onChange({ type: 'upsert', evaluation }), (evaluation) => onChange({ type: 'delete', evaluation })),
  };
}

export function cacheConfigsSource(cache: WatchedCache<KubernetesObject & { spec: HarnessConfigSpec }>): HarnessConfigsSource {
  return {
    list: () => new Map(cache.list().map((c) => [c.metadata!.name!, c.spec])),
    subscribe(onChange) {
      const changed = () => onChange();
      for (const verb of ['add', 'update', 'delete'] as const) cache.on(verb, changed);
      return () => {
        for (const verb of ['add', 'update', 'delete'] as const) cache.off(verb, changed);
      };
    },
  };
}

/**
 * Watches `path` from `resourceVersion` until unsubscribed, resuming from the last version seen when the watch ends
 * (a 410 Gone or an error: `relist` is called again, which lists and returns the version to watch from).
 */
function keepWatching(config: KubeConfig, path: string, params: Record<string, string>, relist: () => Promise<string>, onEvent: (type: string, object: KubernetesObject) => void): Unsubscribe {
  const watch = new Watch(config);
  let stopped = false;
  let request: AbortController | undefined;
  let timer: NodeJS.Timeout | undefined;
  const run = async (resourceVersion: string | undefined) => {
    if (stopped) return;
    let version = resourceVersion;
    try {
      version ??= await relist();
      if (stopped) return;
      request = await watch.watch(
        path,
        { ...params, resourceVersion: version, allowWatchBookmarks: 'true' },
        (type, object: KubernetesObject & { code?: number }) => {
          if (type === 'ERROR') {
            version = undefined;
            return;
          }
          version = object.metadata?.resourceVersion ?? version;
          if (type !== 'BOOKMARK') onEvent(type, object);
        },
        (error) => {
          if (statusCode(error) === 410) version = undefined;
          if (!stopped) timer = setTimeout(() => void run(error ? undefined : version), REWATCH_MS);
        },
      );
    } catch {
      if (!stopped) timer = setTimeout(() => void run(undefined), REWATCH_MS);
    }
  };
  void run(undefined);
  return () => {
    stopped = true;
    clearTimeout(timer);
    request?.abort();
  };
}

export function kubeRunDetailSource(config: KubeConfig): RunDetailSource {
  const custom = config.makeApiClient(CustomObjectsApi);
  return {
    watch(namespace, name, onChange) {
      const relist = async () => {
        try {
          const run = (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: RUNS, name })) as ConsoleRun & KubernetesObject;
          onChange(run);
          return run.metadata.resourceVersion ?? '';
        } catch (error) {
          if (statusCode(error) !== 404) throw error;
          onChange(undefined);
          // A list's version: the watch then reports the Run if it is created later.
          const list = (await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: RUNS, fieldSelector: `metadata.name=${name}` })) as { metadata?: { resourceVersion?: string } };
          return list.metadata?.resourceVersion ?? '';
        }
      };
      return keepWatching(config, runsPath(namespace), { fieldSelector: `metadata.name=${name}` }, relist, (type, object) => onChange(type === 'DELETED' ? undefined : (object as ConsoleRun & KubernetesObject)));
    },
  };
}

const iso = (t: Date | string | undefined | null) => (t ? new Date(t).toISOString() : undefined);

export function kubeEventRow(e: CoreV1Event): KubeEventRow {
  const row: KubeEventRow = { type: e.type ?? 'Normal', reason: e.reason ?? '', message: e.message ?? '', count: e.count ?? e.series?.count ?? 1 };
  const first = iso(e.firstTimestamp ?? e.eventTime);
  const last = iso(e.lastTimestamp ?? e.series?.lastObservedTime ?? e.eventTime ?? e.firstTimestamp);
  if (first) row.firstAt = first;
  if (last) row.lastAt = last;
  const source = e.reportingComponent || e.source?.component;
  if (source) row.source = source;
  return row;
}

/** Oldest first, as `kubectl describe` shows them. */
export function sortedEventRows(events: Iterable<CoreV1Event>): KubeEventRow[] {
  return [...events].map(kubeEventRow).sort((a, b) => (a.lastAt ?? a.firstAt ?? '').localeCompare(b.lastAt ?? b.firstAt ?? ''));
}

export function kubeEventsSource(config: KubeConfig): KubeEventsSource {
  const core = config.makeApiClient(CoreV1Api);
  return {
    watch({ namespace, runUid, pod }, onChange) {
      // The Run's own Events (the dispatcher's transitions) and its driver Pod's (kubelet: pulls, starts, kills).
      const selectors = [`involvedObject.uid=${runUid}`, ...(pod ? [`involvedObject.kind=Pod,involvedObject.name=${pod}`] : [])];
      const byUid = new Map<string, CoreV1Event>();
      const emit = () => onChange(sortedEventRows(byUid.values()));
      const stops = selectors.map((fieldSelector) =>
        keepWatching(
          config,
          `/api/v1/namespaces/${namespace}/events`,
          { fieldSelector },
          async () => {
            const list = await core.listNamespacedEvent({ namespace, fieldSelector });
            for (const e of list.items) byUid.set(e.metadata.uid!, e);
            emit();
            return list.metadata?.resourceVersion ?? '';
          },
          (type, object) => {
            const e = object as CoreV1Event;
            if (type === 'DELETED') byUid.delete(e.metadata.uid!);
            else byUid.set(e.metadata.uid!, e);
            emit();
          },
        ),
      );
      return () => stops.forEach((s) => s());
    },
  };
}

export function kubeRunWriter(config: KubeConfig): RunWriter {
  const custom = config.makeApiClient(CustomObjectsApi);
  return {
    async cancel(namespace, name) {
      try {
        await custom.patchNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: RUNS, name, body: { spec: { cancel: true } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
        return 'cancelled';
      } catch (error) {
        if (statusCode(error) === 404) return 'not-found';
        throw error;
      }
    },
  };
}
