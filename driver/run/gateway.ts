// The model gateway between the harness and its provider (issue 34): in api-key mode a harness whose manifest routes
// its key through the gateway gets the gateway's URL and a per-run token; the key stays in this process (a gateway
// hosted here) or in the cluster's gateway (a driver Pod whose key variable already holds the run's token).
import { randomUUID } from 'node:crypto';
import type { HarnessManifest } from '../../shared/manifest.ts';
import type { RunSpec } from '../../shared/run.ts';
import { GATEWAY_PROVIDER_VARIABLE, GATEWAY_URL_VARIABLE } from '../../shared/gateway.ts';
import type { BudgetExceeded, GatewayThrottle } from '../../shared/gateway.ts';
import { gatewayProviderFor } from '../../shared/gateway-route.ts';
import type { GatewayLogger } from '../../gateway/index.ts';
import { hostGateway } from '../gateway-host.ts';
import { joinGateway } from '../cluster-gateway.ts';
import { throttleMessage, throttleNews } from '../throttle-news.ts';
import { StageFailure } from '../stages/context.ts';
import type { RunAuth } from './auth.ts';
import type { RunState } from './state.ts';

/** The gateway's log when the caller gives none. */
const SILENT: GatewayLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

export interface GatewayOptions {
  runId: string;
  env: Readonly<Record<string, string | undefined>>;
  /** false: the key is injected as it is (no gateway). */
  gateway?: boolean;
  attempt?: string;
  log?: GatewayLogger;
}

/** Where the harness's model calls go and the variables that reach them: through the gateway when its key routes there. */
export interface ModelRoute {
  baseUrl: string | undefined;
  secretEnv: Record<string, string>;
}

export async function routeThroughGateway(run: RunState, spec: RunSpec, manifest: HarnessManifest, auth: RunAuth, baseUrl: string | undefined, options: GatewayOptions): Promise<ModelRoute> {
  const injectAs = manifest.auth.api_key?.inject_as;
  const key = injectAs ? auth.secretEnv[injectAs] : undefined;
  const route = run.authMode === 'api-key' && options.gateway !== false && auth.keyVar && injectAs && key ? gatewayProviderFor(manifest, auth.keyVar) : undefined;
  if (!route || !('provider' in route) || !injectAs || !key) return { baseUrl, secretEnv: auth.secretEnv };
  run.running = 'auth';
  const onBudgetExceeded = (exceeded: BudgetExceeded) => {
    run.budgetHit ??= exceeded;
    run.emit({ type: 'error', timestamp: run.now(), message: `budget reached: ${exceeded.message}`, code: 'budget_exceeded' });
    run.abort.abort('budget_exceeded');
  };
  let seenThrottles = new Map<string, number>();
  const onThrottles = (throttles: readonly GatewayThrottle[]) => {
    const { news, seen } = throttleNews(seenThrottles, throttles);
    seenThrottles = seen;
    for (const t of news) run.emit({ type: 'warning', timestamp: run.now(), message: throttleMessage(t), code: 'provider_throttled' });
  };
  const log = options.log ?? SILENT;
  const clusterGateway = options.env[GATEWAY_URL_VARIABLE];
  if (clusterGateway) {
    // A driver Pod whose key goes through the cluster's gateway: the key variable already holds the run's token.
    const provider = options.env[GATEWAY_PROVIDER_VARIABLE] ?? route.provider;
    if (provider !== route.provider) throw new StageFailure('auth', 'infrastructure', `${GATEWAY_PROVIDER_VARIABLE}=${provider} is not the provider of ${auth.keyVar} for ${manifest.slug} (${route.provider})`);
    run.hosted = joinGateway({ url: clusterGateway, provider, token: key, log, onBudgetExceeded, onThrottles });
  } else {
    run.hosted = await hostGateway({
      runId: options.runId,
      attempt: options.attempt ?? randomUUID(),
      provider: route.provider,
      key,
      upstream: baseUrl,
      // The token outlives the run by a margin (teardown, a slow last response), and is revoked when it ends.
      ttlSeconds: spec.maxRuntimeSeconds + 600,
      budget: spec.budget,
      log,
      env: options.env,
      onBudgetExceeded,
      onThrottles,
    });
  }
  run.scrubber.add(run.hosted.token, key);
  run.running = 'driver';
  return { baseUrl: run.hosted.baseUrl, secretEnv: { ...auth.secretEnv, [injectAs]: run.hosted.token } };
}
