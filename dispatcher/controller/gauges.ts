// The queue and occupancy gauges, from the phases shared/run-status.ts defines: a Run is queued while Pending and
// holds a slot while it is neither queued nor final (claims/decide.ts isOccupying). Counting is pure; setting the
// gauges is the one side effect.
import type { RunPhase } from '../../shared/run-status.ts';
import { isOccupying } from '../claims/decide.ts';
import type { DispatcherMetrics } from './metrics.ts';

export interface SlotCounts {
  queued: Record<string, number>;
  occupied: Record<string, number>;
}

export function countSlots(runs: Iterable<{ harness: string; phase: RunPhase }>): SlotCounts {
  // Slugs are caller text ("constructor" is a valid one): no inherited keys.
  const queued = Object.create(null) as Record<string, number>;
  const occupied = Object.create(null) as Record<string, number>;
  for (const { harness, phase } of runs) {
    if (phase === 'Pending') queued[harness] = (queued[harness] ?? 0) + 1;
    else if (isOccupying(phase)) occupied[harness] = (occupied[harness] ?? 0) + 1;
  }
  return { queued, occupied };
}

export function setGauges(metrics: Pick<DispatcherMetrics, 'queueDepth' | 'occupied'>, counts: SlotCounts): void {
  metrics.queueDepth.reset();
  metrics.occupied.reset();
  for (const [harness, n] of Object.entries(counts.queued)) metrics.queueDepth.set({ harness }, n);
  for (const [harness, n] of Object.entries(counts.occupied)) metrics.occupied.set({ harness }, n);
}
