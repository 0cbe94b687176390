// The claim decision, pure (spec: "The backend's queue enforces the limit at claim time"). A pending run is
// claimed only when its harness has fewer runs occupying a slot (Dispatched, Starting, Running) than its limit
// AND the dispatcher's in-flight count is below the global cap. Oldest first within a harness; a capped harness
// never holds back another harness's runs (no head-of-line blocking). Inputs are a snapshot; the caller writes
// the claims with resourceVersion preconditions, so a stale snapshot can only lose a race, never over-claim.

export const OCCUPYING_PHASES = ['Dispatched', 'Starting', 'Running'] as const;
export const RUN_PHASES = ['Pending', 'Dispatched', 'Starting', 'Running', 'Succeeded', 'Failed', 'Cancelled'] as const;
export type RunPhase = (typeof RUN_PHASES)[number];

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
  return (OCCUPYING_PHASES as readonly string[]).includes(phase);
}

const byAge = (a: QueuedRun, b: QueuedRun) => a.createdAt - b.createdAt || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

export function decideClaims(input: ClaimInput): ClaimDecision {
  const occupied: Record<string, number> = {};
  let inFlight = 0;
  for (const run of input.runs) {
    if (!isOccupying(run.phase)) continue;
    occupied[run.harness] = (occupied[run.harness] ?? 0) + 1;
    inFlight += 1;
  }
  const claim: string[] = [];
  const waiting: ClaimDecision['waiting'] = {};
  const used = { ...occupied };
  let globalRoom = input.maxInFlight === null ? Infinity : Math.max(0, input.maxInFlight - inFlight);
  // Global order is oldest first across harnesses; a run whose harness is full is skipped, not a barrier.
  for (const run of input.runs.filter((r) => r.phase === 'Pending').sort(byAge)) {
    const limit = input.limits[run.harness];
    const cap = limit === null || limit === undefined ? Infinity : limit;
    if ((used[run.harness] ?? 0) >= cap) {
      waiting[run.key] = 'harness-cap';
      continue;
    }
    if (globalRoom <= 0) {
      waiting[run.key] = 'global-cap';
      continue;
    }
    claim.push(run.key);
    used[run.harness] = (used[run.harness] ?? 0) + 1;
    globalRoom -= 1;
  }
  return { claim, waiting, occupied, inFlight };
}
