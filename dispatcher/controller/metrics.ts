// Prometheus metrics of the dispatcher (served on /metrics by the HTTP API).
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { REJECTION_REASONS } from '../status/first-result.ts';
import { RETRYABLE_REASONS } from '../status/retry.ts';

export function dispatcherMetrics(registry = new Registry()) {
  /** Counts the queue and the slots (gauges.ts) when scraped: O(Runs) per scrape, not per change. */
  let slots: (() => void) | undefined;
  return {
    registry,
    /** Where the queue and occupancy gauges come from (the dispatcher's caches); read at each scrape. */
    countSlotsWith(refresh: () => void) {
      slots = refresh;
    },
    queueDepth: new Gauge({ name: 'tcab_dispatcher_queue_depth', help: 'Pending Runs per harness', labelNames: ['harness'], registers: [registry], collect: () => slots?.() }),
    occupied: new Gauge({ name: 'tcab_dispatcher_occupied_slots', help: 'Runs holding a slot (neither Pending nor final) per harness', labelNames: ['harness'], registers: [registry] }),
    claimLatency: new Histogram({ name: 'tcab_dispatcher_claim_latency_seconds', help: 'Time to claim one Run: availability from config and Secret names, then its Pod create', buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5], registers: [registry] }),
    claims: new Counter({ name: 'tcab_dispatcher_claims_total', help: 'Runs claimed', labelNames: ['harness'], registers: [registry] }),
    conflicts: new Counter({ name: 'tcab_dispatcher_apiserver_conflicts_total', help: 'Status writes refused with 409 Conflict (stale cache)', registers: [registry] }),
    statusWrites: new Counter({ name: 'tcab_dispatcher_status_writes_total', help: 'Run status writes', registers: [registry] }),
    podWrites: new Counter({ name: 'tcab_dispatcher_pod_writes_total', help: 'Driver Pod creates and deletes', registers: [registry] }),
    eventsDropped: new Counter({ name: 'tcab_dispatcher_run_events_dropped_total', help: 'Kubernetes Events on Runs dropped because too many were queued', registers: [registry] }),
    outcomes: new Counter({ name: 'tcab_dispatcher_runs_total', help: 'Finished Runs by outcome', labelNames: ['outcome'], registers: [registry] }),
    // Provider back-pressure (claims/throttle.ts): model "*" = a hold on the whole provider.
    throttleHeldRuns: new Gauge({ name: 'tcab_dispatcher_throttle_held_runs', help: 'Queued Runs held because the model gateway reports their provider+model throttled (at the last claim pass)', labelNames: ['provider', 'model'], registers: [registry] }),
    throttleHolds: new Counter({ name: 'tcab_dispatcher_throttle_holds_total', help: 'Holds begun on a provider+model the model gateway reports throttled (429/529/overloaded)', labelNames: ['provider', 'model'], registers: [registry] }),
    throttleHoldSeconds: new Histogram({ name: 'tcab_dispatcher_throttle_hold_seconds', help: 'How long a Run was held for provider back-pressure before it was claimed (time to resume)', buckets: [1, 5, 10, 30, 60, 120, 300, 600, 1800], registers: [registry] }),
    resultsRejected: zeroed(new Counter({ name: 'tcab_results_rejected_total', help: 'Driver results refused (first result wins, per attempt): duplicate = the Run already has another result, late = the Run ended without one, stale = the result is of an attempt that is over', labelNames: ['reason'], registers: [registry] }), REJECTION_REASONS),
    // Attempts (status/retry.ts): every infrastructure failure retried, by class; and those that could not be.
    retries: zeroed(new Counter({ name: 'tcab_dispatcher_retries_total', help: 'Attempts ended on infrastructure and tried again, by failure class', labelNames: ['reason'], registers: [registry] }), RETRYABLE_REASONS),
    retriesExhausted: zeroed(new Counter({ name: 'tcab_dispatcher_retries_exhausted_total', help: 'Runs ended by an infrastructure failure that was not tried again (attempts used up, retries off, or cancelled), by failure class', labelNames: ['reason'], registers: [registry] }), RETRYABLE_REASONS),
  };
}

/** Every reason shown from the start (at 0): an alert on the rate needs the series before the first refusal. */
function zeroed(counter: Counter<'reason'>, reasons: readonly string[]): Counter<'reason'> {
  for (const reason of reasons) counter.inc({ reason }, 0);
  return counter;
}
export type DispatcherMetrics = ReturnType<typeof dispatcherMetrics>;
