// `tcab-dispatcher`: the cluster half. Configuration from the environment (dispatcher/config.ts), Kubernetes
// credentials in-cluster (its ServiceAccount) or from KUBECONFIG, NATS from TCAB_NATS_URL (+ credentials).
// Every replica serves the HTTP API; only the Lease holder claims and writes Run status.
import { hostname } from 'node:os';
import { readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { listHarnesses } from '../harnesses/registry.ts';
import { buildApi, closeApi } from './api/server.ts';
import { kubeHarnessConfigStore } from './api/kube-store.ts';
import { dispatcherConfig } from './config.ts';
import { Dispatcher } from './controller/dispatcher.ts';
import { dispatcherMetrics } from './controller/metrics.ts';
import { LeaderElector } from './kube/leader.ts';
import { RunStream } from './nats/run-stream.ts';
import { shutdownInOrder } from './shutdown.ts';

const log = (message: string) => process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), component: 'tcab-dispatcher', msg: message })}\n`);

export async function dispatcherMain(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const settings = dispatcherConfig(env);
  const config = new KubeConfig();
  if (env.KUBECONFIG) config.loadFromFile(env.KUBECONFIG);
  else config.loadFromCluster();
  const identity = env.TCAB_DISPATCHER_ID || env.POD_NAME || hostname();
  const metrics = dispatcherMetrics();
  const stream = await RunStream.connect({ servers: settings.TCAB_NATS_URL.split(','), user: env.TCAB_NATS_USER || undefined, pass: env.TCAB_NATS_PASSWORD || undefined, token: env.TCAB_NATS_TOKEN || undefined });
  const dispatcher = new Dispatcher({ config, settings, events: stream, metrics, log, resultGraceSeconds: Number(env.TCAB_RESULT_GRACE_SECONDS || 30) });
  await dispatcher.start();

  const elector = new LeaderElector(config, {
    namespace: settings.TCAB_NAMESPACE,
    name: env.TCAB_LEADER_LEASE || 'tcab-dispatcher',
    identity,
    leaseDurationSeconds: Number(env.TCAB_LEASE_DURATION_SECONDS || 10),
    retryMs: Number(env.TCAB_LEASE_RETRY_MS || 2000),
    onStartedLeading: () => {
      dispatcher.setLeading(true);
      void stream.consumeResults((runId, result, ack) => dispatcher.onResult(runId, result, ack), log).catch((error: unknown) => log(`results consumer: ${(error as Error).message}`));
    },
    onStoppedLeading: () => {
      dispatcher.setLeading(false);
      void stream.stopConsuming();
    },
    log,
  });
  elector.start();

  const api = buildApi({
    store: kubeHarnessConfigStore(config),
    slugs: () => listHarnesses().map((h) => h.manifest.slug),
    token: () => {
      try {
        return readFileSync(settings.TCAB_API_TOKEN_FILE, 'utf8').trim();
      } catch {
        return env.TCAB_API_TOKEN ?? '';
      }
    },
    metrics: metrics.registry,
    ready: () => true,
  });
  await api.listen({ port: settings.TCAB_API_PORT, host: env.TCAB_API_HOST || '0.0.0.0' });
  log(`${identity} serving the HTTP API on ${settings.TCAB_API_PORT}`);

  // Bounded steps (shutdown.ts): well inside the Pod's 30 s grace period, so the kubelet never has to SIGKILL.
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${identity} got ${signal}: releasing the leadership and stopping`);
    const clean = await shutdownInOrder([
      {
        name: 'stop leading',
        ms: 2000,
        run: async () => {
          dispatcher.setLeading(false);
          await stream.stopConsuming();
        },
      },
      { name: 'finish the pass in flight (status writes) and stop the watches', ms: 8000, run: () => dispatcher.stop() },
      { name: 'release the Lease', ms: 3000, run: () => elector.stop() },
      { name: 'close the HTTP API', ms: 2000, run: () => closeApi(api, 1000) },
      { name: 'close NATS', ms: 4000, run: () => stream.close(2000) },
    ], log);
    process.exit(clean ? 0 : 1);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

if (import.meta.main) {
  await dispatcherMain().catch((error: unknown) => {
    log(`fatal: ${(error as Error).message}`);
    process.exit(1);
  });
}
