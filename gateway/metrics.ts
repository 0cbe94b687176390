// Prometheus metrics of the model gateway. Model labels come from responses and requests (the client's word), so
// their distinct values are capped: past MAX_MODEL_LABELS a new model is counted as `(other)`.
import { Counter, Histogram, Registry } from 'prom-client';
import type { TokenClass } from '../shared/usage.ts';

export const MAX_MODEL_LABELS = 100;

/** What became of a request at the gateway. */
export const REQUEST_OUTCOMES = ['forwarded', 'unauthorized', 'budget_exceeded', 'not_found', 'bad_request', 'upstream_error', 'client_closed', 'internal_error'] as const;
export type RequestOutcome = (typeof REQUEST_OUTCOMES)[number];

export function gatewayMetrics(registry = new Registry()) {
  const models = new Set<string>();
  const modelLabel = (model: string | null): string => {
    const name = model ?? '(unknown)';
    if (models.has(name)) return name;
    if (models.size >= MAX_MODEL_LABELS) return '(other)';
    models.add(name);
    return name;
  };
  const requests = new Counter({ name: 'tcab_gateway_requests_total', help: 'Requests by provider and what the gateway did with them', labelNames: ['provider', 'outcome'], registers: [registry] });
  const upstream = new Counter({ name: 'tcab_gateway_upstream_responses_total', help: 'Provider answers by provider and HTTP status', labelNames: ['provider', 'status'], registers: [registry] });
  const throttles = new Counter({ name: 'tcab_gateway_throttles_total', help: 'Rate-limited (429) and overloaded (529, or an overloaded error in a stream) answers by provider and model', labelNames: ['provider', 'model', 'status'], registers: [registry] });
  const tokens = new Counter({ name: 'tcab_gateway_tokens_total', help: 'Tokens measured on the wire by provider and class (reasoning is inside output)', labelNames: ['provider', 'class'], registers: [registry] });
  const addedLatency = new Histogram({
    name: 'tcab_gateway_added_latency_seconds',
    help: "Time the gateway adds to a request: arrival to upstream dispatch, plus the upstream's response head to the client's",
    labelNames: ['provider'],
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1],
    registers: [registry],
  });
  const budgetExceeded = new Counter({ name: 'tcab_gateway_budget_exceeded_total', help: 'Run attempts whose budget was reached (counted at the first refusal)', labelNames: ['limit'], registers: [registry] });
  return {
    registry,
    request(provider: string, outcome: RequestOutcome) {
      requests.inc({ provider, outcome });
    },
    upstreamStatus(provider: string, status: number) {
      upstream.inc({ provider, status: String(status) });
    },
    throttle(provider: string, model: string | null, status: number) {
      throttles.inc({ provider, model: modelLabel(model), status: String(status) });
    },
    tokens(provider: string, cls: TokenClass, n: number) {
      if (n > 0) tokens.inc({ provider, class: cls }, n);
    },
    addedLatency(provider: string, seconds: number) {
      addedLatency.observe({ provider }, seconds);
    },
    budgetExceeded(limit: string) {
      budgetExceeded.inc({ limit });
    },
  };
}
export type GatewayMetrics = ReturnType<typeof gatewayMetrics>;
