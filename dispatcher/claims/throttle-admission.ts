// Adaptive admission in the claim pass (issue 34): which queued Runs the holds of the ThrottleBook (throttle.ts)
// keep queued this pass, which were held and are not any more (their Throttled condition is set False), how long
// a Run waited from its first hold to its claim (time to resume), and when the pass should look again (the
// earliest end of a hold that keeps a Run). Pure over what it is given; the claim pass supplies each Run's
// provider+model (run-provider.ts) and the clock.
import { heldFor } from './throttle.ts';
import type { ThrottleHold } from './throttle.ts';
import type { RunTarget } from './run-provider.ts';

export interface PendingRun {
  key: string;
  harness: string;
  model: string;
  authMode?: string;
}

export interface AdmissionDecision {
  /** Runs held this pass, with the hold that holds each. */
  held: Map<string, ThrottleHold>;
  /** Runs held at an earlier pass and not now (still queued). */
  released: string[];
  /** Until the earliest hold keeping a Run ends; undefined when none does. */
  requeueAfterMs: number | undefined;
}

export class ThrottleAdmission {
  /** Per Run held at some pass and not yet claimed: when it was first held, and whether it is held now. */
  private readonly tracked = new Map<string, { since: number; held: boolean }>();

  /** Whether a pass has anything to do here: holds to apply, or Runs held earlier to release or forget. */
  idle(holds: readonly ThrottleHold[]): boolean {
    return holds.length === 0 && this.tracked.size === 0;
  }

  /** `targetOf`: a queued Run's provider+model at the gateway (run-provider.ts), undefined when none holds it. */
  decide(pending: readonly PendingRun[], holds: readonly ThrottleHold[], nowMs: number, targetOf: (run: PendingRun) => RunTarget | undefined): AdmissionDecision {
    const held = new Map<string, ThrottleHold>();
    const released: string[] = [];
    if (this.idle(holds)) return { held, released, requeueAfterMs: undefined };
    let earliest = Infinity;
    const queued = new Set<string>();
    // One provider+model lookup per harness, model and auth mode: a queue of thousands has few distinct ones.
    const targets = new Map<string, RunTarget | undefined>();
    for (const run of pending) {
      queued.add(run.key);
      if (holds.length === 0) continue;
      const id = `${run.harness}\u0000${run.model}\u0000${run.authMode ?? ''}`;
      if (!targets.has(id)) targets.set(id, targetOf(run));
      const target = targets.get(id);
      if (!target) continue;
      let hold: ThrottleHold | undefined;
      for (const provider of target.providers) {
        const h = heldFor(holds, provider, target.models);
        if (h && (!hold || h.heldUntilMs > hold.heldUntilMs)) hold = h;
      }
      if (!hold) continue;
      held.set(run.key, hold);
      earliest = Math.min(earliest, hold.heldUntilMs);
    }
    for (const [key, entry] of this.tracked) {
      if (!queued.has(key)) this.tracked.delete(key); // claimed elsewhere, cancelled or deleted
      else if (entry.held && !held.has(key)) {
        entry.held = false;
        released.push(key);
      }
    }
    for (const key of held.keys()) {
      const entry = this.tracked.get(key);
      if (entry) entry.held = true;
      else this.tracked.set(key, { since: nowMs, held: true });
    }
    return { held, released, requeueAfterMs: earliest === Infinity ? undefined : Math.max(1, Math.ceil(earliest - nowMs)) };
  }

  /** Runs claimed now: for each one that had been held, the seconds from its first hold to now. */
  claimed(keys: readonly string[], nowMs: number): number[] {
    const waited: number[] = [];
    for (const key of keys) {
      const entry = this.tracked.get(key);
      if (!entry) continue;
      waited.push((nowMs - entry.since) / 1000);
      this.tracked.delete(key);
    }
    return waited;
  }

  /** Runs tracked (tests, memory figures). */
  get size(): number {
    return this.tracked.size;
  }
}

/** The Throttled condition's message for a Run held by `hold`: stable while the hold lasts (one status write). */
export function heldMessage(hold: ThrottleHold): string {
  return `held: the model gateway reports ${hold.provider} throttling ${hold.model === null ? 'every model' : hold.model} (HTTP ${hold.status}); the Run stays queued until the back-off ends`;
}

export const RELEASED_MESSAGE = 'no longer held: the provider+model is not throttled now; the Run is queued as before';
