// The claim decision, pure (spec: "The backend's queue enforces the limit at claim time"). A pending run is
// claimed only when its harness has fewer runs occupying a slot (Dispatched, Starting, Running) than its limit
// AND the dispatcher's in-flight count is below the global cap. Oldest first within a harness; a capped harness
// never holds back another harness's runs (no head-of-line blocking); under the global cap, the harness holding
// the fewest slots goes next, so a long queue of one harness never starves another. Inputs are a snapshot; the caller writes
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
  waiting: Record<string, 'harness-cap' | 'global-cap'>;
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
  for (const run of input.runs) {
    if (run.phase === 'Pending') {
      const queue = queues.get(run.harness) ?? [];
      queue.push(run);
      queues.set(run.harness, queue);
    }
    if (!isOccupying(run.phase)) continue;
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
  while (globalRoom > 0) {
    let chosen: string | undefined;
    for (const [harness, queue] of queues) {
      const head = queue[next[harness] ?? 0];
      if (!head || (used[harness] ?? 0) >= capOf(harness)) continue;
      const best = chosen === undefined ? undefined : queues.get(chosen)![next[chosen] ?? 0]!;
      if (!best || (used[harness] ?? 0) < (used[chosen!] ?? 0) || ((used[harness] ?? 0) === (used[chosen!] ?? 0) && byAge(head, best) < 0)) chosen = harness;
    }
    if (chosen === undefined) break;
    claim.push(queues.get(chosen)![next[chosen] ?? 0]!.key);
    next[chosen] = (next[chosen] ?? 0) + 1;
    used[chosen] = (used[chosen] ?? 0) + 1;
    globalRoom -= 1;
  }
  const waiting: ClaimDecision['waiting'] = {};
  for (const [harness, queue] of queues) {
    for (const run of queue.slice(next[harness] ?? 0)) waiting[run.key] = (used[harness] ?? 0) >= capOf(harness) ? 'harness-cap' : 'global-cap';
  }
  return { claim, waiting, occupied, inFlight };
}
