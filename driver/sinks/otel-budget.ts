// How many tool spans the export may build, as a token bucket: a burst of up to `capacity` at once, then `perSecond`.
// A harness makes a few tool calls a second; a burst of thousands (replayed output, a runaway loop) would overflow
// the SDK's bounded queue anyway, and building spans only for the queue to drop them cost the driver's CPU (measured:
// the whole process +19 µs per event in a 10,000-tool-call burst). Past the budget a tool span is skipped before the
// SDK sees it and counted as dropped; sessions, stages, subagents and the run span are never skipped, so the tree
// stays whole and only leaves go missing.
export class ToolSpanBudget {
  private readonly capacity: number;
  private readonly perMs: number;
  private tokens: number;
  private last: number;

  constructor(options: { capacity: number; perSecond: number; now: number }) {
    this.capacity = Math.max(1, options.capacity);
    this.perMs = Math.max(0, options.perSecond) / 1000;
    this.tokens = this.capacity;
    this.last = options.now;
  }

  /** Whether one more tool span fits at `now` (ms, monotonic); takes its token when it does. */
  take(now: number): boolean {
    if (now > this.last) {
      this.tokens = Math.min(this.capacity, this.tokens + (now - this.last) * this.perMs);
      this.last = now;
    }
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
