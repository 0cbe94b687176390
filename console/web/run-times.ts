// The times a run shows (run page header, runs table): when it was created and started, and how long it has run.
// Pure: the page re-renders these on the 1 s clock tick (app/clock.ts), so a live duration counts in whole seconds,
// as it ticks; "997 ms" on a running run read as a frozen number.
import type { RunRow } from '../../shared/console.ts';
import { formatClock, formatDuration } from './format.ts';
import { isFinal, runDurationMs } from './runs-view.ts';

/** A running run's duration at the clock's resolution ("0 s", "8 s", "4m 05s"); a finished one's exactly. */
export function durationText(row: RunRow, nowMs: number): string {
  const ms = runDurationMs(row, nowMs);
  if (ms === undefined || isFinal(row) || ms >= 60_000) return formatDuration(ms);
  return `${Math.floor(ms / 1000)} s`;
}

export interface RunTimes {
  started: string;
  /** Set when the Run was created at another time than it started (it waited for a slot, pulled an image). */
  created?: string;
  duration: string;
}

export function runTimes(row: RunRow, nowMs: number): RunTimes {
  const started = formatClock(row.startedAt, nowMs);
  const created = formatClock(row.createdAt, nowMs);
  return { started, ...(created !== started ? { created } : {}), duration: durationText(row, nowMs) };
}
