// The model gateway in the driver's own process (issue 34): the key never enters the run. The driver (root in a
// Pod or under `sudo tcab run`; the harness is uid 1000 and cannot read its memory or environment) starts the
// gateway on loopback with the real key, mints a token for this run, and the harness gets the gateway's URL in its
// base URL variable and the token in place of the key. The gateway measures every response's usage on the wire and
// holds the run to its budget; when the run ends the token is revoked and the account becomes the result's `wire`.
import { proxyDispatcherFor } from '../gateway/proxy-dispatcher.ts';
import { newSigningKey, providerConfigs, startGateway } from '../gateway/index.ts';
import type { Gateway, GatewayLogger } from '../gateway/index.ts';
import type { BudgetExceeded, GatewayRunUsage, GatewayThrottle, RunBudget, WireAccount } from '../shared/gateway.ts';
import { TOKEN_CLASSES } from '../shared/usage.ts';

export interface HostedGateway {
  /** What the harness's base URL is: `<gateway>/p/<provider>`. */
  baseUrl: string;
  /** What the harness gets in place of its key. */
  token: string;
  /** The run's account so far, as its result carries it; null when it cannot be read (a cluster gateway unreachable). */
  wire(): Promise<WireAccount | null>;
  /** Refuses the token from now on and stops the server. */
  close(): Promise<void>;
}

export interface HostGatewayInput {
  runId: string;
  attempt: string;
  provider: string;
  /** The real key (the harness never sees it). */
  key: string;
  /** Where the provider is: the offline stub, an operator's endpoint (TCAB_BASE_URL_<SLUG>); default the provider's own. */
  upstream?: string;
  ttlSeconds: number;
  budget?: RunBudget;
  log: GatewayLogger;
  /** The run reached its budget: the gateway refused the request past it. */
  onBudgetExceeded: (exceeded: BudgetExceeded) => void;
  /** The run's throttles as the gateway counts them, each time they grow. */
  onThrottles?: (throttles: readonly GatewayThrottle[]) => void;
  /** The process environment: HTTP(S)_PROXY/NO_PROXY there route the gateway's upstream requests (a cluster's egress proxy). */
  env: Readonly<Record<string, string | undefined>>;
}

/** The result's view of the gateway's account (GatewayRunUsage -> WireAccount): pure. */
export function wireAccountOf(usage: GatewayRunUsage): WireAccount {
  const reported = TOKEN_CLASSES.some((cls) => usage.tokens[cls] !== null);
  return {
    requests: usage.requests,
    tokens: reported ? usage.tokens : null,
    // Unpriced models' tokens are not in cost_usd: a cost that leaves some out is not the run's cost.
    cost_usd: reported && usage.unpriced_models.length === 0 ? usage.cost_usd : null,
    unmetered: usage.unmetered,
    throttled: usage.throttles.reduce((n, t) => n + t.count, 0),
    refused: usage.refused,
  };
}

export async function hostGateway(input: HostGatewayInput): Promise<HostedGateway> {
  let throttled = 0;
  const dispatcher = proxyDispatcherFor(input.env);
  const gateway: Gateway = await startGateway({
    host: '127.0.0.1',
    keys: { [input.provider]: input.key },
    // A key of this run's own: no token minted here is good anywhere else.
    signingKey: newSigningKey(),
    providers: input.upstream ? providerConfigs({ [input.provider]: { upstream: input.upstream } }) : undefined,
    log: input.log,
    ...(dispatcher ? { dispatcher } : {}),
    onBudgetExceeded: (event) => {
      if (event.run === input.runId && event.attempt === input.attempt) input.onBudgetExceeded(event.exceeded);
    },
    onSample: (event) => {
      if (event.run !== input.runId || event.attempt !== input.attempt) return;
      const count = event.account.throttles.reduce((n, t) => n + t.count, 0);
      if (count > throttled) {
        throttled = count;
        input.onThrottles?.(event.account.throttles);
      }
    },
  });
  const token = gateway.mint(input.runId, input.attempt, input.ttlSeconds, input.budget);
  return {
    baseUrl: gateway.baseUrl(input.provider),
    token,
    wire: async () => {
      const usage = gateway.usage(input.runId, input.attempt);
      // No request reached the gateway: the run went through it and used nothing.
      return usage ? wireAccountOf(usage) : { requests: 0, tokens: null, cost_usd: null, unmetered: 0, throttled: 0, refused: 0 };
    },
    close: async () => {
      gateway.revoke(input.runId, input.attempt);
      await gateway.close();
      await dispatcher?.close();
    },
  };
}
