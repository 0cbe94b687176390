// `node gateway/main.ts`: the cluster's model gateway (the chart's gateway Deployment; issue 34). It alone holds the
// provider keys (keysFromEnv: the chart passes them by secretKeyRef); driver Pods hold per-run tokens the
// dispatcher mints with the same signing key (gateway/settings.ts reads it from the mounted auth Secret). Runs
// reach the proxy and control routes on TCAB_GATEWAY_PORT; /metrics is on a port of its own that they do not reach.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../shared/log.ts';
import { keysFromEnv, providerConfigs, startGateway } from './index.ts';
import { gatewaySettings } from './settings.ts';
import { proxyDispatcherFor } from './proxy-dispatcher.ts';

export async function gatewayMain(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const settings = gatewaySettings(env);
  const log = createLogger({ component: 'tcab-gateway', level: settings.logLevel });
  const keys = keysFromEnv(env);
  if (Object.keys(keys).length === 0) log.warn('gateway: no provider key in the environment: every request will be answered 404');
  const dispatcher = proxyDispatcherFor(env);
  const gateway = await startGateway({
    host: '0.0.0.0',
    port: settings.port,
    keys,
    signingKey: settings.signingKey,
    adminToken: settings.adminToken,
    providers: providerConfigs(Object.fromEntries(Object.entries(settings.upstreams).map(([name, upstream]) => [name, { upstream }]))),
    log,
    ...(dispatcher ? { dispatcher } : {}),
  });
  const metrics: Server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    gateway.metrics.metrics().then(
      (text) => res.writeHead(200, { 'content-type': gateway.metrics.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => metrics.listen(settings.metricsPort, '0.0.0.0', resolve));
  log.info({ port: gateway.port, metricsPort: (metrics.address() as AddressInfo).port, providers: Object.keys(keys), upstreams: settings.upstreams }, 'gateway: serving');
  const stop = (signal: string) => {
    log.info({ signal }, 'gateway: stopping');
    void Promise.all([gateway.close(), new Promise((resolve) => metrics.close(resolve))]).then(() => process.exit(0));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

if (import.meta.main) {
  gatewayMain().catch((error: unknown) => {
    process.stderr.write(`tcab-gateway: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  });
}
