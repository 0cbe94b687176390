// `tcab-dispatcher`: the cluster half. Configuration from the environment (dispatcher/config.ts), Kubernetes
// credentials in-cluster (its ServiceAccount) or from KUBECONFIG, NATS from TCAB_NATS_URL (+ credentials).
// Every replica serves the HTTP API and keeps its caches warm; only the Lease holder claims and writes Run status.
import { hostname } from 'node:os';
import { readFileSync } from 'node:fs';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { listHarnesses } from '../harnesses/registry.ts';
import { createLogger, logLevelFrom } from '../shared/log.ts';
import type { Logger } from '../shared/log.ts';
import { buildApi, closeApi } from '../console/api/server.ts';
import { buildMetricsServer } from './api/metrics.ts';
import { startNatsAuth } from './auth/nats-identity.ts';
import type { DispatcherNatsAuth } from './auth/nats-identity.ts';
import { kubeHarnessConfigStore } from '../console/api/harness-config-store.ts';
import { clusterGateway, dispatcherConfig } from './config.ts';
import type { DispatcherConfig } from './config.ts';
import { Dispatcher } from './controller/dispatcher.ts';
import { dispatcherMetrics } from './controller/metrics.ts';
import { errorMessage } from '../kube/errors.ts';
import { electDispatcher } from './leadership.ts';
import type { LeaderElector } from '../kube/leader.ts';
import { RunStream } from '../nats/result-consumer.ts';
import { natsSettingsFromEnv } from '../nats/settings.ts';
import type { NatsSettings } from '../nats/settings.ts';
import { shutdownInOrder } from './shutdown.ts';
import type { ShutdownStep } from './shutdown.ts';
import { dispatcherConsoleSources } from './console.ts';
import { mountConsole } from '../console/server/mount.ts';
import type { MountedConsole } from '../console/server/mount.ts';
import type { ConsoleSources } from '../console/server/sources.ts';
import { ConsoleNats } from '../nats/console-reader.ts';

export async function dispatcherMain(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const { settings, gateway, identity, log } = readSettings(env);
  const config = kubeConfigFrom(env);
  if (gateway) log.info({ gateway: gateway.url }, 'runs whose key can go through the model gateway get per-run tokens');
  const metrics = dispatcherMetrics();
  // The API (and /healthz, /readyz) first: the first NATS connect may wait a while (a bundled NATS starts only once
  // this dispatcher has created its auth Secret), and a process that is alive but not ready must not be restarted.
  const live: LiveParts = {};
  const { api, operatorConsole, consoleSources } = await serveApi(env, settings, config, { identity, log, live });
  const metricsServer = await serveMetrics(settings, metrics.registry, identity, log);

  const { natsSettings, natsAuth, runStream } = await connectRunStream(env, settings, config, log);
  live.stream = runStream;
  const running = new Dispatcher({ config, settings, events: runStream, results: runStream, metrics, log, natsAuth, gateway });
  live.dispatcher = running;
  await running.start();
  const consoleNats = operatorConsole ? startConsoleFeed(operatorConsole, consoleSources, natsSettings, (nats) => dispatcherConsoleSources(config, settings, running, nats), log) : () => undefined;

  const elector = electDispatcher(config, {
    dispatcher: running,
    stream: runStream,
    namespace: settings.TCAB_NAMESPACE,
    name: settings.TCAB_LEADER_LEASE,
    identity,
    leaseDurationSeconds: settings.TCAB_LEASE_DURATION_SECONDS,
    retryMs: settings.TCAB_LEASE_RETRY_MS,
    log,
  });

  stopOnSignals(identity, log, () => shutdownSteps({ running, runStream, elector, operatorConsole, api, metricsServer, natsAuth, consoleNats }));
}

/** What /readyz reports on, each part set once it is up. */
interface LiveParts {
  stream?: RunStream;
  dispatcher?: Dispatcher;
}

/** The configuration (its errors stop the start, each naming its variable) and the logger that names this replica. */
function readSettings(env: NodeJS.ProcessEnv) {
  const settings = dispatcherConfig(env);
  // The gateway's signing key and admin token, read now: a missing or bad file stops the start, its variable named.
  const gateway = clusterGateway(settings);
  const identity = settings.TCAB_DISPATCHER_ID ?? settings.POD_NAME ?? hostname();
  const log = createLogger({ component: 'tcab-dispatcher', level: settings.TCAB_LOG_LEVEL, bindings: { identity } });
  return { settings, gateway, identity, log };
}

/** Kubernetes credentials: KUBECONFIG's when set (a dispatcher run by hand), else the Pod's ServiceAccount. */
function kubeConfigFrom(env: NodeJS.ProcessEnv): KubeConfig {
  const config = new KubeConfig();
  if (env.KUBECONFIG) config.loadFromFile(env.KUBECONFIG);
  else config.loadFromCluster();
  return config;
}

/**
 * Each token from its Secret's file, read per request (a rotated Secret applies without a restart), else from
 * the environment (a dispatcher run by hand); '' = none, which matches nothing.
 */
function tokenFrom(env: NodeJS.ProcessEnv, file: string, variable: string): () => string {
  return () => {
    try {
      return readFileSync(file, 'utf8').trim();
    } catch {
      return env[variable] ?? '';
    }
  };
}

/** The HTTP API, listening, with the operator console's routes when it is enabled (its sources come later). */
async function serveApi(env: NodeJS.ProcessEnv, settings: DispatcherConfig, config: KubeConfig, on: { identity: string; log: Logger; live: LiveParts }) {
  const { identity, log, live } = on;
  const token = tokenFrom(env, settings.TCAB_API_TOKEN_FILE, 'TCAB_API_TOKEN');
  const readToken = tokenFrom(env, settings.TCAB_API_READ_TOKEN_FILE, 'TCAB_API_READ_TOKEN');
  const authMode = settings.TCAB_CONSOLE_AUTH_MODE;
  if (authMode === 'open') log.warn('console.auth.mode is open: anyone who reaches the API port reads every Run (prompts, events, results) and the harness configs, without a credential');
  else if (!readToken()) log.warn({ file: settings.TCAB_API_READ_TOKEN_FILE }, 'no read token: reads accept only the write token');
  const api = buildApi({
    store: kubeHarnessConfigStore(config),
    slugs: () => listHarnesses().map((h) => h.manifest.slug),
    token,
    readAuth: { mode: authMode, readToken, trustedCidrs: settings.TCAB_CONSOLE_TRUSTED_CIDRS, proxyUserHeader: settings.TCAB_CONSOLE_PROXY_USER_HEADER, sessionMaxAgeSeconds: settings.TCAB_CONSOLE_SESSION_SECONDS },
    readiness: () => ({ informersSynced: live.dispatcher?.synced() ?? false, natsConnected: live.stream?.connected() ?? false, leader: live.dispatcher?.isLeader ?? false }),
  });
  // The console's routes exist from the start (fastify takes no route after listen); its sources once the caches
  // and NATS do: a page opened before then waits (console/server/routes.ts).
  const consoleSources = Promise.withResolvers<ConsoleSources>();
  const operatorConsole = settings.TCAB_CONSOLE_ENABLED ? mountConsole(api, { sources: consoleSources.promise, token, stalledAfterSeconds: settings.TCAB_CONSOLE_STALLED_AFTER_SECONDS }) : undefined;
  await api.listen({ port: settings.TCAB_API_PORT, host: settings.TCAB_API_HOST });
  log.info({ port: settings.TCAB_API_PORT, readAuth: authMode }, `${identity} serving the HTTP API on ${settings.TCAB_API_PORT}`);
  return { api, operatorConsole, consoleSources };
}

/** /metrics on its own port when TCAB_METRICS_PORT is set. */
async function serveMetrics(settings: DispatcherConfig, registry: Parameters<typeof buildMetricsServer>[0], identity: string, log: Logger) {
  const metricsServer = settings.TCAB_METRICS_PORT === undefined ? undefined : buildMetricsServer(registry);
  if (metricsServer) {
    await metricsServer.listen({ port: settings.TCAB_METRICS_PORT, host: settings.TCAB_API_HOST });
    log.info({ port: settings.TCAB_METRICS_PORT }, `${identity} serving /metrics on ${settings.TCAB_METRICS_PORT}`);
  } else log.info('TCAB_METRICS_PORT is unset: /metrics is not served');
  return metricsServer;
}

/** The run stream, connected as the dispatcher's NATS user; the settings for that user are the console's too. */
async function connectRunStream(env: NodeJS.ProcessEnv, settings: DispatcherConfig, config: KubeConfig, log: Logger): Promise<{ natsSettings: NatsSettings; natsAuth: DispatcherNatsAuth | undefined; runStream: RunStream }> {
  const natsBase = natsSettingsFromEnv(env, settings.TCAB_NATS_URL)!;
  // With auth: the install's keys first (created on the first start), then NATS as the dispatcher's own user.
  const natsAuth = settings.TCAB_NATS_AUTH_SECRET ? await startNatsAuth(config.makeApiClient(CoreV1Api), settings, natsBase, log.child({ part: 'nats-auth' })) : undefined;
  const natsSettings = natsAuth?.settings ?? natsBase;
  const runStream = await RunStream.connect(natsSettings, {
    waitOnFirstConnect: true,
    streamReplicas: settings.TCAB_NATS_STREAM_REPLICAS,
    onStreamRetry: (error, attempt) => log.warn({ err: error.message, attempt }, `JetStream not up yet (${error.message}): trying the run stream again`),
  });
  return { natsSettings, natsAuth, runStream };
}

/**
 * The operator console's NATS connection and, once it is up, its sources; not awaited (the console's failure is
 * logged, not the dispatcher's). Returns the connection as far as it got, for shutdown to close.
 */
function startConsoleFeed(operatorConsole: MountedConsole, consoleSources: PromiseWithResolvers<ConsoleSources>, natsSettings: NatsSettings, sourcesOf: (nats: ConsoleNats) => ConsoleSources, log: Logger): () => ConsoleNats | undefined {
  let consoleNats: ConsoleNats | undefined;
  // A connection of its own (a slow browser's feed never delays a result's ack), as the dispatcher's identity.
  const consoleLog = log.child({ part: 'console' });
  void ConsoleNats.connect(natsSettings, { waitOnFirstConnect: true })
    .then((nats) => {
      consoleNats = nats;
      consoleSources.resolve(sourcesOf(nats));
      return operatorConsole.started;
    })
    .then(() => consoleLog.info('operator console serving'))
    .catch((error: unknown) => consoleLog.error({ err: errorMessage(error) }, 'operator console failed to start'));
  return () => consoleNats;
}

/** What a shutdown stops. */
interface RunningParts {
  running: Dispatcher;
  runStream: RunStream;
  elector: LeaderElector;
  operatorConsole: MountedConsole | undefined;
  api: ReturnType<typeof buildApi>;
  metricsServer: ReturnType<typeof buildMetricsServer> | undefined;
  natsAuth: DispatcherNatsAuth | undefined;
  consoleNats: () => ConsoleNats | undefined;
}

/** Bounded steps (shutdown.ts): well inside the Pod's 30 s grace period, so the kubelet never has to SIGKILL. */
function shutdownSteps(parts: RunningParts): ShutdownStep[] {
  const { running, runStream, elector, operatorConsole, api, metricsServer, natsAuth, consoleNats } = parts;
  return [
    {
      name: 'stop leading',
      ms: 2000,
      run: async () => {
        running.setLeading(false);
        await runStream.stopConsuming();
      },
    },
    { name: 'finish the reconciles in flight (status writes) and stop the watches', ms: 8000, run: () => running.stop() },
    { name: 'release the Lease', ms: 3000, run: () => elector.stop() },
    { name: 'stop the console', ms: 1000, run: async () => operatorConsole?.stop() },
    { name: 'close the HTTP API', ms: 2000, run: async () => Promise.all([closeApi(api, 1000), metricsServer && closeApi(metricsServer, 1000)]) },
    { name: 'close NATS', ms: 4000, run: async () => Promise.all([runStream.close(2000), natsAuth?.close(), consoleNats()?.close()]) },
  ];
}

/** On SIGTERM or SIGINT (the first one only): the steps in order, then exit 0 if each was done in time, else 1. */
function stopOnSignals(identity: string, log: Logger, steps: () => ShutdownStep[]): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, `${identity} got ${signal}: releasing the leadership and stopping`);
    const clean = await shutdownInOrder(steps(), log);
    process.exit(clean ? 0 : 1);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

if (import.meta.main) {
  await dispatcherMain().catch((error: unknown) => {
    // Before the configuration is read (or when it is bad) there is no configured logger yet.
    createLogger({ component: 'tcab-dispatcher', level: safeLevel() }).fatal({ err: errorMessage(error) }, `fatal: ${errorMessage(error)}`);
    process.exit(1);
  });
}

function safeLevel() {
  try {
    return logLevelFrom(process.env);
  } catch {
    return 'info';
  }
}
