// The claim decision, pure (spec: "The backend's queue enforces the limit at claim time"). A pending run is
// claimed only when its harness has fewer runs occupying a slot (Dispatched, Starting, Running, Checking) than its limit
// AND the dispatcher's in-flight count is below the global cap. Oldest first within a harness; a capped harness
// never holds back another harness's runs (no head-of-line blocking); under the global cap, the harness holding
// the fewest slots goes next, so a long queue of one harness never starves another. A run held for provider
// back-pressure (`held`, throttle.ts) waits 'throttled' and is skipped as if not queued. Runs sharing a serialised
// login (`login`: a subscription whose refresh token rotates on use) run one at a time: while one holds a slot the
// others wait 'login-busy', skipped without holding back the runs queued behind them. Inputs are a snapshot; the caller writes
// the claims with resourceVersion preconditions, so a stale snapshot can only lose a race, never over-claim.

import { FINAL_PHASES, RUN_PHASES } from '../../shared/run-status.ts';
import type { RunPhase } from '../../shared/run-status.ts';

/** The phases holding a slot: past the queue (Pending) and not final (shared/run-status.ts). */
export const OCCUPYING_PHASES: readonly RunPhase[] = RUN_PHASES.filter((p) => p !== 'Pending' && !FINAL_PHASES.has(p));

export type { RunPhase };

export interface QueuedRun {
  key: string;
  harness: string;
  phase: RunPhase;
  /** Creation time in ms; ties broken by key, so the order is total and stable. */
  createdAt: number;
  /**
   * Set on a Pending run whose provider+model the model gateway reports throttled (throttle.ts): it is not claimed
   * and takes no slot, harness room or global room, so the runs behind it (other models) go as if it were not
   * queued; it keeps its age, so it goes first again when the hold ends.
   */
  held?: boolean;
  /**
   * The login this run would use when it is one that runs one at a time (a subscription whose manifest sets
   * `serialize`: its subscription Secret's name, claims/serialized-login.ts); absent otherwise. At most one run per
   * login occupies a slot: a Pending run whose login is taken waits 'login-busy' and keeps its age.
   */
  login?: string;
}

export interface ClaimInput {
  runs: readonly QueuedRun[];
  /** maxParallelism per harness slug; a missing slug or null = unlimited. */
  limits: Readonly<Record<string, number | null | undefined>>;
  /** TCAB_DISPATCHER_MAX_INFLIGHT; null = unlimited. */
  maxInFlight: number | null;
}

export interface ClaimDecision {
  claim: string[];
  /** Why each pending run that was not claimed waits (for metrics and `kubectl describe`). */
  waiting: Record<string, 'harness-cap' | 'global-cap' | 'throttled' | 'login-busy'>;
  occupied: Record<string, number>;
  inFlight: number;
}

export function isOccupying(phase: RunPhase): boolean {
  return OCCUPYING_PHASES.includes(phase);
}

const byAge = (a: QueuedRun, b: QueuedRun) => a.createdAt - b.createdAt || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** A count per harness slug: slugs are caller text ("constructor" is a valid one), so no inherited keys. */
const countsBySlug = (from: Readonly<Record<string, number>> = {}): Record<string, number> => Object.assign(Object.create(null) as Record<string, number>, from);

export function decideClaims(input: ClaimInput): ClaimDecision {
  const occupied = countsBySlug();
  let inFlight = 0;
  const queues = new Map<string, QueuedRun[]>();
  const waiting: ClaimDecision['waiting'] = {};
  /** Serialised logins a run in flight (or claimed by this decision) holds. */
  const busyLogins = new Set<string>();
  for (const run of input.runs) {
    if (run.phase === 'Pending' && run.held === true) {
      waiting[run.key] = 'throttled';
      continue;
    }
    if (run.phase === 'Pending') {
      const queue = queues.get(run.harness) ?? [];
      queue.push(run);
      queues.set(run.harness, queue);
    }
    if (!isOccupying(run.phase)) continue;
    if (run.login !== undefined) busyLogins.add(run.login);
    occupied[run.harness] = (occupied[run.harness] ?? 0) + 1;
    inFlight += 1;
  }
  for (const queue of queues.values()) queue.sort(byAge);
  const capOf = (harness: string) => (Object.hasOwn(input.limits, harness) ? input.limits[harness] : undefined) ?? Infinity;
  const used = countsBySlug(occupied);
  const next = countsBySlug();
  const claim: string[] = [];
  let globalRoom = input.maxInFlight === null ? Infinity : Math.max(0, input.maxInFlight - inFlight);
  // Each free global slot goes to the harness holding the fewest slots (ties: the one whose next run is oldest), so
  // a long queue of one harness never starves another; a harness at its own cap is skipped, never a barrier.
  // A queue's next run whose login is taken leaves the queue (waiting 'login-busy'), so the run behind it is next.
  const dropBusyLogins = (queue: QueuedRun[], at: number) => {
    while (queue[at]?.login !== undefined && busyLogins.has(queue[at].login)) waiting[queue.splice(at, 1)[0]!.key] = 'login-busy';
  };
  while (globalRoom > 0) {
    let chosen: string | undefined;
    for (const [harness, queue] of queues) {
      dropBusyLogins(queue, next[harness] ?? 0);
      const head = queue[next[harness] ?? 0];
      if (!head || (used[harness] ?? 0) >= capOf(harness)) continue;
      const best = chosen === undefined ? undefined : queues.get(chosen)![next[chosen] ?? 0]!;
      if (!best || (used[harness] ?? 0) < (used[chosen!] ?? 0) || ((used[harness] ?? 0) === (used[chosen!] ?? 0) && byAge(head, best) < 0)) chosen = harness;
    }
    if (chosen === undefined) break;
    const claimed = queues.get(chosen)![next[chosen] ?? 0]!;
    if (claimed.login !== undefined) busyLogins.add(claimed.login);
    claim.push(claimed.key);
    next[chosen] = (next[chosen] ?? 0) + 1;
    used[chosen] = (used[chosen] ?? 0) + 1;
    globalRoom -= 1;
  }
  for (const [harness, queue] of queues) {
    for (const run of queue.slice(next[harness] ?? 0)) waiting[run.key] = run.login !== undefined && busyLogins.has(run.login) ? 'login-busy' : (used[harness] ?? 0) >= capOf(harness) ? 'harness-cap' : 'global-cap';
  }
  return { claim, waiting, occupied, inFlight };
}
