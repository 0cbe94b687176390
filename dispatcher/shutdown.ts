// The dispatcher's SIGTERM path. The kubelet SIGKILLs a Pod terminationGracePeriodSeconds (30 s) after SIGTERM, and
// `helm uninstall --wait` / `helm upgrade` wait for that: every step here is bounded, so a peer that no longer
// answers (the bundled NATS deleted by the same uninstall, a client holding a request open) costs a bounded wait,
// not the grace period. Order:
//   1. stop leading locally and stop taking results (a result not yet acked is redelivered to the next leader);
//   2. finish the pass in flight (its status writes and their acks) and stop the watches;
//   3. hand the Lease over (released, so the other replica takes it at its next retry, not after expiry);
//   4. close the HTTP API (idle keep-alive connections at once, requests in flight get a moment, then cut);
//   5. close NATS (drain: flushes the acks; a server that does not answer is closed without it).
import type { Logger } from '../shared/log.ts';

/** Resolves with 'done', 'timeout' after `ms`, or the error `work` failed with; never rejects. */
export async function bounded(work: () => Promise<unknown>, ms: number): Promise<'done' | 'timeout' | Error> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  try {
    return await Promise.race([work().then(() => 'done' as const, (error: unknown) => (error instanceof Error ? error : new Error(String(error)))), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export interface ShutdownStep {
  name: string;
  run: () => Promise<unknown>;
  /** How long this step may take before the next one starts anyway. */
  ms: number;
}

/** Runs the steps in order, each bounded; logs each one's time and outcome (one line per step, for the Pod's log). */
export async function shutdownInOrder(steps: readonly ShutdownStep[], log: Logger): Promise<boolean> {
  let clean = true;
  for (const step of steps) {
    const t0 = Date.now();
    const outcome = await bounded(step.run, step.ms);
    if (outcome !== 'done') clean = false;
    const ms = Date.now() - t0;
    const how = outcome === 'done' ? 'done' : outcome === 'timeout' ? `gave up after ${step.ms} ms` : `failed: ${outcome.message}`;
    log[outcome === 'done' ? 'info' : 'warn']({ step: step.name, ms }, `shutdown: ${step.name} ${how} (${ms} ms)`);
  }
  return clean;
}
