// Provider back-pressure across every run (issue 34): which provider+model answered 429/529/"overloaded" lately,
// when last, with what retry-after, and how many good answers it gave since. The dispatcher reads it (GET
// /tcab/throttles, a ThrottleReport) and holds Runs of a throttled provider+model instead of starting runs that
// would fail. Pure over an injected clock; bounded (a provider+model quiet for the window is forgotten, and past
// MAX_ROWS the oldest row goes).
import type { ProviderThrottle, ThrottleReport } from '../shared/gateway.ts';

/** How far back a report looks: a provider+model not throttled for this long is not reported. */
export const THROTTLE_WINDOW_S = 600;
const MAX_ROWS = 500;

interface Row {
  provider: string;
  model: string | null;
  status: number;
  count: number;
  okSince: number;
  lastMs: number;
  retryAfterS: number | null;
}

export interface ThrottleObservation {
  provider: string;
  model: string | null;
  /** The answer's status; for a throttle, the throttling status (529 for an "overloaded" error in a 200 stream). */
  status: number;
  throttled: boolean;
  retryAfterS: number | null;
}

const keyOf = (provider: string, model: string | null) => `${provider}\u0000${model ?? ''}`;

export class ThrottleLog {
  private readonly rows = new Map<string, Row>();
  private readonly clock: () => number;
  private readonly windowS: number;

  private readonly bootId: string | undefined;

  constructor(clock: () => number, windowS = THROTTLE_WINDOW_S, bootId?: string) {
    this.clock = clock;
    this.windowS = windowS;
    this.bootId = bootId;
  }

  /** One measured answer. Good answers only count for a provider+model already throttled (its recovery). */
  observe(o: ThrottleObservation): void {
    const now = this.clock();
    this.forgetOld(now);
    const key = keyOf(o.provider, o.model);
    const row = this.rows.get(key);
    if (!o.throttled) {
      if (row) row.okSince += 1;
      return;
    }
    if (row) {
      this.rows.delete(key); // re-inserted: the Map's order is last-throttled order, oldest first
      this.rows.set(key, { ...row, status: o.status, count: row.count + 1, okSince: 0, lastMs: now, retryAfterS: o.retryAfterS });
      return;
    }
    if (this.rows.size >= MAX_ROWS) this.rows.delete(this.rows.keys().next().value!);
    this.rows.set(key, { provider: o.provider, model: o.model, status: o.status, count: 1, okSince: 0, lastMs: now, retryAfterS: o.retryAfterS });
  }

  report(): ThrottleReport {
    const now = this.clock();
    this.forgetOld(now);
    const throttles: ProviderThrottle[] = [...this.rows.values()].map((r) => ({
      provider: r.provider,
      model: r.model,
      status: r.status,
      count: r.count,
      ok_since: r.okSince,
      last_at: new Date(r.lastMs).toISOString(),
      retry_after_s: r.retryAfterS,
    }));
    return { now: new Date(now).toISOString(), window_s: this.windowS, ...(this.bootId ? { boot_id: this.bootId } : {}), throttles };
  }

  private forgetOld(now: number): void {
    for (const [key, row] of this.rows) {
      if (row.lastMs + this.windowS * 1000 > now) break; // oldest first: the rest are newer
      this.rows.delete(key);
    }
  }
}
