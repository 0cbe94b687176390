// The model gateway's contracts (issue 34): the provider key never enters a run. A harness is given the gateway's
// URL (`<gateway>/p/<provider>`, in its manifest's base_url_var) and, in place of the key, a per-run token; the
// gateway checks the token, swaps it for the provider's real key, forwards the request to the provider's endpoint
// unchanged (responses streamed through as they arrive), and measures each response's usage on the wire.
import { z } from 'zod';
import { TOKEN_CLASSES, TokenUsage } from './usage.ts';

/** The wire protocols the gateway reads usage from: the ones the stub model speaks (manifests' stub_wire). */
export const WIRE_PROTOCOLS = ['anthropic', 'openai-responses', 'openai-chat', 'gemini'] as const;
export type WireProtocol = (typeof WIRE_PROTOCOLS)[number];

/** A provider's name: the path segment after /p/ in the gateway's URL. */
export const PROVIDER_NAME = /^[a-z][a-z0-9-]{0,31}$/;

/**
 * A run's budget (Run spec `budget`), enforced by the gateway: the request that would pass it is answered with the
 * provider's own error shape and the run ends `budget_exceeded`. Token limits are by class (`total` = input + output +
 * cache_read + cache_write, reasoning being inside output); cost is at the model catalogue's list prices.
 */
export const RunBudget = z
  .strictObject({
    maxTokens: z
      .strictObject({
        total: z.int().positive().optional().describe('input + output + cache read + cache write'),
        input: z.int().positive().optional().describe('Prompt tokens not served from the cache'),
        output: z.int().positive().optional().describe('Generated tokens, reasoning included'),
        cacheRead: z.int().positive().optional().describe("Prompt tokens served from the provider's cache"),
        cacheWrite: z.int().positive().optional().describe("Prompt tokens written to the provider's cache"),
      })
      .optional()
      .describe('Most tokens the run may use, by class (total = input + output + cache read + cache write)'),
    maxCostUsd: z.number().positive().optional().describe("Most the run may cost in USD at the model catalogue's list prices"),
  })
  .describe('Limits the model gateway holds the run to; the request that would pass one is refused and the run ends budget_exceeded');
export type RunBudget = z.infer<typeof RunBudget>;

/** What a per-run token carries (signed by the gateway's key; the token is `tcabgw_<payload>.<signature>`). */
export const GatewayTokenClaims = z.strictObject({
  /** The run id (shared/run-id.ts grammar). */
  run: z.string().min(1).max(200),
  /** The attempt: a cluster Run's uid (a Run re-created under its name is another attempt); the driver's own on a workstation. */
  attempt: z.string().min(1).max(200),
  /** Expiry, Unix seconds. */
  exp: z.int().positive(),
  /** The run's budget, signed with the rest: whoever holds the signing key (the driver, the dispatcher) sets it, so a gateway needs no other channel to learn it. */
  budget: RunBudget.optional(),
});
export type GatewayTokenClaims = z.infer<typeof GatewayTokenClaims>;

/** What the gateway measured of one run, as its result carries it (`wire`, beside the harness-reported `tokens`). */
export const WireAccount = z
  .strictObject({
    requests: z.int().nonnegative().describe('Requests the gateway forwarded for the run'),
    tokens: TokenUsage.nullable().describe('Usage the provider reported on the wire, by class; null when no response reported any'),
    cost_usd: z.number().nonnegative().nullable().describe("Those tokens at the model catalogue's list prices; null when unpriced"),
    unmetered: z.int().nonnegative().describe('Responses that reported no usage (errors, streams cut short)'),
    throttled: z.int().nonnegative().describe('Responses that were 429/529 or "overloaded"'),
    refused: z.int().nonnegative().describe('Requests refused by the gateway (budget)'),
  })
  .describe('What the model gateway measured for the run, independent of the harness process');
export type WireAccount = z.infer<typeof WireAccount>;

/** One response as the gateway measured it. */
export const WireSample = z.strictObject({
  protocol: z.enum(WIRE_PROTOCOLS),
  /** The model the provider says answered (the response's own `model`), else the request's. */
  model: z.string().nullable(),
  status: z.int().min(100).max(599),
  streamed: z.boolean(),
  /** What the response reported; null when it reported no usage (an error, a stream cut short). */
  tokens: TokenUsage.nullable(),
});
export type WireSample = z.infer<typeof WireSample>;

/** The limits of a RunBudget, named by their path in it. */
export const BUDGET_LIMITS = ['maxTokens.total', 'maxTokens.input', 'maxTokens.output', 'maxTokens.cacheRead', 'maxTokens.cacheWrite', 'maxCostUsd'] as const;
export type BudgetLimit = (typeof BUDGET_LIMITS)[number];

/** The limit a run reached: what the gateway refused its next request for, and why the run ends budget_exceeded. */
export const BudgetExceeded = z.strictObject({
  limit: z.enum(BUDGET_LIMITS),
  max: z.number().positive(),
  /** Tokens or USD measured when the request was refused; null for a cost limit the gateway could not price (a model the catalogue lacks). */
  used: z.number().nonnegative().nullable(),
  message: z.string(),
});
export type BudgetExceeded = z.infer<typeof BudgetExceeded>;

/** 429/529/overloaded answers of one provider for one model, with the last retry-after the provider gave. */
export const GatewayThrottle = z.strictObject({
  provider: z.string().regex(PROVIDER_NAME),
  /** The model of the refused request (the response's, else the request's); null when neither named one. */
  model: z.string().nullable(),
  status: z.int().min(100).max(599),
  count: z.int().positive(),
  /** Seconds, from `retry-after-ms` or `retry-after` (seconds or an HTTP date); null when the provider gave none. */
  retry_after_s: z.number().nonnegative().nullable(),
});
export type GatewayThrottle = z.infer<typeof GatewayThrottle>;

/** One run attempt's account as the gateway measured it on the wire. */
export const GatewayRunUsage = z.strictObject({
  run: z.string().min(1).max(200),
  attempt: z.string().min(1).max(200),
  /** Requests forwarded to a provider (whatever it answered). */
  requests: z.int().nonnegative(),
  /** Requests refused because the budget was reached (never forwarded). */
  refused: z.int().nonnegative(),
  tokens: TokenUsage,
  /** List-price cost of the priced part of `tokens` (shared/cost.ts comparableCost per response model). */
  cost_usd: z.number().nonnegative(),
  /** Models whose usage the catalogue could not price (not counted in cost_usd). */
  unpriced_models: z.array(z.string()),
  catalog_version: z.string(),
  /** 2xx responses that reported no usage (a stream the client cut short, an endpoint without usage). */
  unmetered: z.int().nonnegative(),
  /** Upstream statuses: "200" -> count. */
  statuses: z.record(z.string().regex(/^[1-5]\d\d$/), z.int().positive()),
  throttles: z.array(GatewayThrottle),
  /** Set when a request was first refused for the budget. */
  budget_exceeded: BudgetExceeded.nullable(),
});
export type GatewayRunUsage = z.infer<typeof GatewayRunUsage>;

/**
 * Where the harness's own usage and the wire's disagree beyond rounding: per class both report (a class one of them
 * does not report is no disagreement), a difference of more than 1 token and 0.5% of the larger. Empty = they agree.
 */
export function usageDisagreements(harness: TokenUsage | null, wire: TokenUsage | null): string[] {
  if (!harness || !wire) return [];
  const out: string[] = [];
  for (const cls of TOKEN_CLASSES) {
    const a = harness[cls];
    const b = wire[cls];
    if (a === null || b === null) continue;
    if (Math.abs(a - b) > Math.max(1, 0.005 * Math.max(a, b))) out.push(`${cls}: the harness reported ${a}, the wire ${b}`);
  }
  return out;
}

// ---- The cluster's gateway (a Deployment of the chart): its control routes, its environment, and what a driver
// ---- Pod is told. The proxy routes are /p/<provider>/...; these are /tcab/... on the same port.

/** Routes on the gateway's port beside /p/<provider>/... */
export const GATEWAY_CONTROL = {
  /** GET, the run's token (as a harness presents it: Authorization: Bearer): 200 GatewayRunUsage of the token's run attempt (no requests, no tokens reported before its first request), 401 otherwise. */
  usage: '/tcab/usage',
  /**
   * GET ?wait=<seconds, 0..60>&throttled=<count already seen>, the run's token: 200 WatchAnswer, at once when the
   * attempt's budget is reached or it was throttled more than `throttled` times, else when either happens or the wait ends.
   */
  watch: '/tcab/watch',
  /** POST RevokeRequest, Authorization: Bearer <admin token>: 204; every token of that attempt refused from now on (idempotent). */
  revoke: '/tcab/revoke',
  /** GET, Authorization: Bearer <admin token>: 200 ThrottleReport (the dispatcher's claim pass reads it). */
  throttles: '/tcab/throttles',
  /** GET, no credential: 200 when the gateway serves. */
  healthz: '/tcab/healthz',
} as const;

export const RevokeRequest = z.strictObject({ run: z.string().min(1).max(200), attempt: z.string().min(1).max(200) });
export type RevokeRequest = z.infer<typeof RevokeRequest>;

/** A run attempt's watch answer: its budget refusal (null while none) and its throttles so far. */
export const WatchAnswer = z.strictObject({ exceeded: BudgetExceeded.nullable(), throttles: z.array(GatewayThrottle) });
export type WatchAnswer = z.infer<typeof WatchAnswer>;

/** 429/529/overloaded answers of one provider+model across every run, as the gateway saw them lately. */
export const ProviderThrottle = z.strictObject({
  provider: z.string().regex(PROVIDER_NAME),
  model: z.string().nullable(),
  /** The last throttling status (429, 529, or 200/503 with an "overloaded" body counted as 529). */
  status: z.int().min(100).max(599),
  /** Throttled answers in the report's window. */
  count: z.int().positive(),
  /** Answers of this provider+model that were not throttles since the last throttle (a recovering provider shows them). */
  ok_since: z.int().nonnegative(),
  /** When the last throttle was answered (RFC 3339). */
  last_at: z.iso.datetime(),
  /** The last retry-after the provider gave (s); null when it gave none. */
  retry_after_s: z.number().nonnegative().nullable(),
});
export type ProviderThrottle = z.infer<typeof ProviderThrottle>;

export const ThrottleReport = z.strictObject({
  /** The gateway's clock when it answered (RFC 3339): ages are read against it, not the reader's clock. */
  now: z.iso.datetime(),
  /** How far back the report looks (s). */
  window_s: z.int().positive(),
  /**
   * The gateway process's random id. Revocations and accounts live in its memory: a new id means a restart that
   * forgot them, and the dispatcher revokes the final Runs' tokens again. Absent from a gateway without it.
   */
  boot_id: z.string().min(1).max(100).optional(),
  throttles: z.array(ProviderThrottle),
});
export type ThrottleReport = z.infer<typeof ThrottleReport>;

/**
 * What the dispatcher puts in a driver Pod whose key goes through the cluster's gateway: the token under the key
 * variable the harness's auth reads (so auth resolves as api-key and the harness gets the token, never a key), and
 * where the gateway is and which of its providers the key is for. The driver then hosts no gateway of its own.
 */
export const GATEWAY_URL_VARIABLE = 'TCAB_GATEWAY_URL';
export const GATEWAY_PROVIDER_VARIABLE = 'TCAB_GATEWAY_PROVIDER';

/** The gateway process's environment (gateway/main.ts; the chart's gateway Deployment sets it). Keys: keysFromEnv's variables. */
export const GATEWAY_ENV = {
  /** Port of the proxy and control routes; default 8080. */
  port: 'TCAB_GATEWAY_PORT',
  /** Port of /metrics (Prometheus), kept off the port runs reach; default 9090. */
  metricsPort: 'TCAB_GATEWAY_METRICS_PORT',
  /** File holding the token signing key (base64 of >= 32 bytes); the dispatcher mounts the same Secret to mint. */
  signingKeyFile: 'TCAB_GATEWAY_SIGNING_KEY_FILE',
  /** File holding the admin token (revoke, throttles); the dispatcher mounts the same Secret. */
  adminTokenFile: 'TCAB_GATEWAY_ADMIN_TOKEN_FILE',
  /** JSON {provider: upstream base URL}: where a provider is when not its public endpoint (the stub in tests). */
  upstreams: 'TCAB_GATEWAY_UPSTREAMS',
} as const;
