// The operator console in the dispatcher (issue 23): its sources are this replica's own caches (Runs,
// HarnessConfigs), the apiserver for one Run and its Events and the cancel patch, readiness as the claim pass
// decides it, and a NATS connection of the console's own (nats/console-reader.ts) with the dispatcher's identity.
import type { KubeConfig } from '@kubernetes/client-node';
import { getHarness } from '../harnesses/registry.ts';
import type { Readiness } from '../shared/console.ts';
import { registryCatalog } from '../console/server/harness-catalog.ts';
import { cacheConfigsSource, cacheEvaluationsSource, cacheRunsSource, kubeEventsSource, kubeRunDetailSource, kubeRunWriter } from '../console/server/kube-sources.ts';
import type { WatchedCache } from '../console/server/kube-sources.ts';
import { natsSources } from '../console/server/nats-sources.ts';
import type { ConsoleEvaluation, ConsoleRun, ConsoleSources } from '../console/server/sources.ts';
import type { ConsoleNats } from '../nats/console-reader.ts';
import type { DispatcherConfig } from './config.ts';
import type { Dispatcher } from './controller/dispatcher.ts';
import { clusterAvailability } from './pods/availability.ts';

/** Readiness of a harness for a Run with no authMode of its own, as the claim pass would judge it now. */
export function dispatcherReadiness(settings: DispatcherConfig, secretNames: () => ReadonlySet<string>): (slug: string) => Readiness {
  return (slug) => {
    const auth = getHarness(slug).manifest.auth;
    const resolution = clusterAvailability(auth, { harness: slug }, settings, secretNames(), settings.TCAB_DRIVER_ENV);
    if (resolution.available) return { ready: true, mode: resolution.mode, missing: [] };
    return { ready: false, ...(resolution.mode ? { mode: resolution.mode } : {}), missing: [resolution.reason] };
  };
}

export function dispatcherConsoleSources(config: KubeConfig, settings: DispatcherConfig, dispatcher: Dispatcher, nats: ConsoleNats | undefined): ConsoleSources {
  const view = dispatcher.consoleView();
  return {
    runs: cacheRunsSource(view.runs as unknown as WatchedCache<ConsoleRun>),
    configs: cacheConfigsSource(view.configs as unknown as Parameters<typeof cacheConfigsSource>[0]),
    evaluations: cacheEvaluationsSource(view.evaluations as unknown as WatchedCache<ConsoleEvaluation>),
    runDetail: kubeRunDetailSource(config),
    kubeEvents: kubeEventsSource(config),
    writer: kubeRunWriter(config),
    harnesses: registryCatalog(dispatcherReadiness(settings, view.secretNames)),
    ...(view.throttles ? { throttles: view.throttles } : {}),
    ...(nats ? natsSources(nats) : {}),
  };
}
