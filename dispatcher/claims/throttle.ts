// Adaptive admission per provider+model (issue 34): the model gateway counts 429/529/"overloaded" answers per
// provider and model (GET /tcab/throttles, a ThrottleReport); this book turns those reports into holds, and the
// claim pass leaves a held provider+model's Runs queued instead of starting runs that would be throttled too.
// Pure and deterministic: time is what the caller passes (the report's own `now` for the gateway's events, the
// caller's clock for queries), nothing here reads a clock.
//
// The back-off, per provider+model (constants below):
// - A report whose `last_at` is later than any seen for the key is new throttle evidence (several throttles
//   between two polls are one step: 50 runs refused in the same second do not jump the hold to its cap).
// - The first evidence puts the key at level 1; evidence while its level has not decayed to 0 (while held, or
//   within level x DECAY_MS after the hold ended) raises it by one, up to MAX_LEVEL.
// - The hold lasts min(CAP_MS, max(retry-after, BASE_MS x 2^(level-1))) from the throttle's `last_at`.
// - After its hold ends, the level drops by one per DECAY_MS without new evidence (each drop halves the next hold);
//   at 0 the key is forgotten.
// - Recovery evidence: `ok_since` >= OK_TO_RELEASE good answers since the last throttle end the current hold at
//   once (the provider serves that model again); the level is kept, so a relapse holds twice as long.
// - A throttle with model null (neither the answer nor the request named one) holds the whole provider: the
//   gateway cannot tell which model was refused, and a provider-wide limit is the likelier cause.
// - Stale data holds nothing: when the last report is older than STALE_MS (the gateway down, the poller failing)
//   no Run is held, so a gateway outage never stalls the queue.
import type { ProviderThrottle, ThrottleReport } from '../../shared/gateway.ts';

/** The shortest hold, when the provider gave a shorter retry-after or none. */
export const BASE_MS = 5_000;
/** The longest hold, whatever the retry-after or the level: the back-off is bounded. */
export const CAP_MS = 300_000;
/** Quiet time after a hold that lowers the level by one (halves the next hold). */
export const DECAY_MS = 60_000;
/** Highest level: BASE_MS x 2^(MAX_LEVEL-1) >= CAP_MS. */
export const MAX_LEVEL = 1 + Math.ceil(Math.log2(CAP_MS / BASE_MS));
/** Good answers since the last throttle that end its hold early. */
export const OK_TO_RELEASE = 1;
/** A report older than this (by the reader's clock since it was received) holds nothing. */
export const STALE_MS = 60_000;

export interface ThrottleState {
  provider: string;
  /** null: the whole provider. */
  model: string | null;
  level: number;
  /** Gateway time (ms) of the last throttle counted. */
  lastThrottleMs: number;
  /** Gateway time (ms) the current hold ends (<= lastThrottleMs once released early). */
  heldUntilMs: number;
  /** Gateway time (ms) the current hold began (the throttle that started it). */
  holdStartMs: number;
  status: number;
  retryAfterS: number | null;
  /** Throttled answers in the gateway's window, as last reported. */
  count: number;
}

/** The hold for one throttle at `level` with the provider's retry-after. */
export function holdMs(level: number, retryAfterS: number | null): number {
  const backoff = BASE_MS * 2 ** (Math.max(1, Math.min(level, MAX_LEVEL)) - 1);
  return Math.min(CAP_MS, Math.max(backoff, (retryAfterS ?? 0) * 1000));
}

/** The level left at gateway time `nowMs`: it decays by one per DECAY_MS after the hold ended. */
export function levelAt(state: Pick<ThrottleState, 'level' | 'heldUntilMs' | 'lastThrottleMs'>, nowMs: number): number {
  const quietSince = Math.max(state.heldUntilMs, state.lastThrottleMs);
  if (nowMs <= quietSince) return state.level;
  return Math.max(0, state.level - Math.floor((nowMs - quietSince) / DECAY_MS));
}

/**
 * One report row applied to a key's state, at the report's time. Pure: returns the new state (undefined = nothing
 * to remember) and whether a hold began (the key was not held before, and is now).
 */
export function applyThrottle(before: ThrottleState | undefined, row: ProviderThrottle, reportNowMs: number): { state: ThrottleState | undefined; started: boolean } {
  const lastAt = Date.parse(row.last_at);
  const wasHeld = before !== undefined && before.heldUntilMs > reportNowMs;
  let state: ThrottleState;
  if (before === undefined || lastAt > before.lastThrottleMs) {
    const prior = before === undefined ? 0 : levelAt(before, lastAt);
    const level = Math.min(MAX_LEVEL, prior + 1);
    const until = lastAt + holdMs(level, row.retry_after_s);
    const continuing = before !== undefined && before.heldUntilMs > lastAt;
    state = {
      provider: row.provider,
      model: row.model,
      level,
      lastThrottleMs: lastAt,
      heldUntilMs: Math.max(until, continuing ? before.heldUntilMs : 0),
      holdStartMs: continuing ? before.holdStartMs : lastAt,
      status: row.status,
      retryAfterS: row.retry_after_s,
      count: row.count,
    };
  } else {
    state = { ...before, count: row.count };
  }
  // Recovery evidence about the last throttle counted: good answers since it end the hold now.
  if (row.ok_since >= OK_TO_RELEASE && lastAt === state.lastThrottleMs && state.heldUntilMs > reportNowMs) state = { ...state, heldUntilMs: Math.max(state.lastThrottleMs, reportNowMs) };
  return { state, started: !wasHeld && state.heldUntilMs > reportNowMs };
}

/** A hold as the claim pass, the metrics and the console see it: times are the reader's clock (ms). */
export interface ThrottleHold {
  provider: string;
  model: string | null;
  heldUntilMs: number;
  level: number;
  status: number;
  retryAfterS: number | null;
  count: number;
}

export const keyOf = (provider: string, model: string | null) => `${provider}\u0000${model ?? ''}`;

/**
 * The dispatcher's view of provider back-pressure: fed ThrottleReports, asked which provider+model is held now.
 * Reports are read against their own `now`; queries take the reader's clock, mapped to the gateway's through the
 * offset of the last report (so a skewed clock between the two never shortens or lengthens a hold).
 */
export class ThrottleBook {
  private readonly states = new Map<string, ThrottleState>();
  /** Gateway time minus reader time at the last report; undefined before the first. */
  private offsetMs: number | undefined;
  private receivedAtMs = -Infinity;
  private readonly staleMs: number;

  constructor(options: { staleMs?: number } = {}) {
    this.staleMs = options.staleMs ?? STALE_MS;
  }

  /** A report received at `receivedAtMs` (reader's clock). Returns the holds it started (for the holds counter). */
  observe(report: ThrottleReport, receivedAtMs: number): ThrottleHold[] {
    const nowMs = Date.parse(report.now);
    this.offsetMs = nowMs - receivedAtMs;
    this.receivedAtMs = receivedAtMs;
    const started: ThrottleHold[] = [];
    for (const row of report.throttles) {
      const key = keyOf(row.provider, row.model);
      const { state, started: began } = applyThrottle(this.states.get(key), row, nowMs);
      if (state) this.states.set(key, state);
      if (began && state) started.push(this.toHold(state));
    }
    for (const [key, state] of this.states) if (state.heldUntilMs <= nowMs && levelAt(state, nowMs) === 0) this.states.delete(key);
    return started;
  }

  /** Whether the last report is too old to hold anything at `nowMs` (reader's clock). */
  stale(nowMs: number): boolean {
    return this.offsetMs === undefined || nowMs - this.receivedAtMs > this.staleMs;
  }

  /** Every provider+model held at `nowMs` (reader's clock), soonest end first; none when the data is stale. */
  holds(nowMs: number): ThrottleHold[] {
    if (this.stale(nowMs)) return [];
    const gatewayNow = nowMs + this.offsetMs!;
    return [...this.states.values()]
      .filter((s) => s.heldUntilMs > gatewayNow)
      .map((s) => this.toHold(s))
      .sort((a, b) => a.heldUntilMs - b.heldUntilMs || (keyOf(a.provider, a.model) < keyOf(b.provider, b.model) ? -1 : 1));
  }

  /** The hold on a provider for any of `models` (exact ids as the wire names them), or on the whole provider. */
  holdOf(provider: string, models: readonly string[], nowMs: number): ThrottleHold | undefined {
    return heldFor(this.holds(nowMs), provider, models);
  }

  /** The remembered state (tests, the console's level after a hold ended). */
  state(provider: string, model: string | null): Readonly<ThrottleState> | undefined {
    return this.states.get(keyOf(provider, model));
  }

  private toHold(s: ThrottleState): ThrottleHold {
    return { provider: s.provider, model: s.model, heldUntilMs: s.heldUntilMs - (this.offsetMs ?? 0), level: s.level, status: s.status, retryAfterS: s.retryAfterS, count: s.count };
  }
}

/** Of `holds`, the one on `provider` for any of `models`, or for the whole provider (model null); the longest. */
export function heldFor(holds: readonly ThrottleHold[], provider: string, models: readonly string[]): ThrottleHold | undefined {
  let found: ThrottleHold | undefined;
  for (const h of holds) {
    if (h.provider !== provider || (h.model !== null && !models.includes(h.model))) continue;
    if (!found || h.heldUntilMs > found.heldUntilMs) found = h;
  }
  return found;
}
