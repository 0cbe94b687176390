// The dispatcher's HTTP API with the operator console mounted on it as dispatcher/main.ts does (buildApi, then
// mountConsole with dispatcherConsoleSources: the dispatcher's own Run and HarnessConfig caches, a console NATS
// connection of its own), for the console's browser test. restart() stops it and serves it again on the same port,
// as a replica restart behind the Service: open pages lose their streams and must resume. Reads need the read
// token (or a session made with it) as in the chart; `readToken` is asked per request, so a test can rotate it.
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../console/api/server.ts';
import { kubeHarnessConfigStore } from '../../console/api/harness-config-store.ts';
import type { Dispatcher } from '../../dispatcher/controller/dispatcher.ts';
import type { DispatcherConfig } from '../../dispatcher/config.ts';
import { dispatcherConsoleSources } from '../../dispatcher/console.ts';
import { listHarnesses } from '../../harnesses/registry.ts';
import { mountConsole } from '../../console/server/mount.ts';
import { ConsoleNats } from '../../nats/console-reader.ts';
import { natsSettings } from '../../nats/settings.ts';
import { clusterConfig } from './support.ts';

export interface ServedApi {
  url: string;
  /** Closes the API (its SSE streams end) and serves a new one on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface ApiOptions {
  dispatcher: Dispatcher;
  settings: DispatcherConfig;
  natsUrl: string;
  token: string;
  readToken: () => string;
  /** The streams' keep-alive and credential re-check period (a rotation ends open streams within it). */
  heartbeatMs?: number;
}

async function serveOnce(options: ApiOptions, port: number): Promise<{ app: FastifyInstance; url: string; stop(): Promise<void> }> {
  const config = clusterConfig();
  const token = () => options.token;
  const app = buildApi({
    store: kubeHarnessConfigStore(config),
    slugs: () => listHarnesses().map((h) => h.manifest.slug),
    token,
    readAuth: { mode: 'token', readToken: options.readToken },
    readiness: () => ({ informersSynced: options.dispatcher.synced(), natsConnected: true, leader: options.dispatcher.isLeader }),
  });
  const nats = await ConsoleNats.connect(natsSettings(options.natsUrl));
  const mounted = mountConsole(app, { sources: dispatcherConsoleSources(config, options.settings, options.dispatcher, nats), token, heartbeatMs: options.heartbeatMs });
  await mounted.started;
  const url = await app.listen({ port, host: '127.0.0.1' });
  return {
    app,
    url,
    stop: async () => {
      await app.close();
      await mounted.stop();
      await nats.close();
    },
  };
}

export async function serveDispatcherApi(options: ApiOptions): Promise<ServedApi> {
  let served = await serveOnce(options, 0);
  const port = Number(new URL(served.url).port);
  return {
    url: served.url,
    async restart() {
      await served.stop();
      served = await serveOnce(options, port);
    },
    stop: () => served.stop(),
  };
}
