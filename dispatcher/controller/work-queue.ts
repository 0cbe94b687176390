// A keyed work queue, as client-go's workqueue feeds controller-runtime's reconcilers: a key waiting once is
// waiting (dedupe); a key is reconciled by one worker at a time (added again while in flight, it runs once more
// after); at most `concurrency` keys are in flight; a failed key comes back after a per-key exponential backoff
// (the rate limiter; reset by the key's next success); a reconcile that waits for time returns `requeueAfterMs`
// (a timer per key, the earliest wins) instead of an error or a global resync. The clock is injected for tests.

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    timer.unref?.();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * What a reconcile asks for next: nothing (done, until an event enqueues the key again), `requeueAfterMs` (look
 * again then: a normal wait, no backoff), or `requeue` (look again soon with the key's backoff, e.g. after a 409:
 * the cache is behind, not broken). A thrown error is logged and requeued with the backoff.
 */
export type ReconcileResult = void | { requeueAfterMs?: number; requeue?: boolean };

export interface WorkQueueOptions {
  name: string;
  concurrency: number;
  clock?: Clock;
  /** First backoff after a failure; doubles per consecutive failure of the key up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  onError?: (key: string, error: unknown) => void;
}

export class WorkQueue {
  private readonly waiting = new Set<string>();
  private readonly inFlight = new Set<string>();
  /** Keys added again while in flight: re-queued when their current reconcile ends. */
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, { at: number; handle: unknown }>();
  private readonly failures = new Map<string, number>();
  private readonly idleWaiters: (() => void)[] = [];
  private readonly clock: Clock;
  private shuttingDown = false;
  private readonly reconcile: (key: string) => Promise<ReconcileResult>;
  private readonly options: WorkQueueOptions;

  constructor(reconcile: (key: string) => Promise<ReconcileResult>, options: WorkQueueOptions) {
    this.reconcile = reconcile;
    this.options = options;
    this.clock = options.clock ?? systemClock;
  }

  add(key: string): void {
    if (this.shuttingDown) return;
    if (this.inFlight.has(key)) {
      this.dirty.add(key);
      return;
    }
    this.waiting.add(key);
    this.pump();
  }

  /** Adds the key after `ms`; a key with an earlier timer keeps it (one timer per key). */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const at = this.clock.now() + ms;
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) this.clock.clearTimeout(existing.handle);
    const handle = this.clock.setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    this.timers.set(key, { at, handle });
  }

  /** The key's backoff for its next retry (5 ms, 10 ms, ... up to maxDelayMs), counting this failure. */
  addRateLimited(key: string): void {
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    const base = this.options.baseDelayMs ?? 5;
    this.addAfter(key, Math.min(base * 2 ** (n - 1), this.options.maxDelayMs ?? 60_000));
  }

  /** Counts for tests and metrics: keys waiting, in flight, with a timer, with a failure streak. */
  get stats(): { waiting: number; inFlight: number; timers: number; failing: number } {
    return { waiting: this.waiting.size, inFlight: this.inFlight.size, timers: this.timers.size, failing: this.failures.size };
  }

  /** Resolves once nothing waits or is in flight (timers may still be pending). */
  idle(): Promise<void> {
    if (this.waiting.size === 0 && this.inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops taking keys, drops timers and waiting keys, and waits for the reconciles in flight. */
  async shutDown(): Promise<void> {
    this.shuttingDown = true;
    for (const { handle } of this.timers.values()) this.clock.clearTimeout(handle);
    this.timers.clear();
    this.waiting.clear();
    this.dirty.clear();
    await this.idle();
  }

  private pump(): void {
    while (this.inFlight.size < this.options.concurrency && this.waiting.size > 0) {
      const key = this.waiting.values().next().value!;
      this.waiting.delete(key);
      this.inFlight.add(key);
      void this.run(key);
    }
    if (this.waiting.size === 0 && this.inFlight.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private async run(key: string): Promise<void> {
    let result: ReconcileResult = undefined;
    let failed = false;
    try {
      result = await this.reconcile(key);
    } catch (error) {
      failed = true;
      this.options.onError?.(key, error);
    }
    this.inFlight.delete(key);
    if (failed || result?.requeue) this.addRateLimited(key);
    else {
      this.failures.delete(key);
      if (result?.requeueAfterMs !== undefined) this.addAfter(key, result.requeueAfterMs);
    }
    if (this.dirty.delete(key)) this.add(key);
    this.pump();
  }
}
