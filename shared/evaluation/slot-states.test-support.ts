// Slot states for the evaluation summary's and table's tests: a final slot with the result figures a test names, or
// a pending one.
import type { Outcome } from '../run.ts';
import type { SlotResult, SlotState } from './summary.ts';

const START = Date.parse('2026-12-07T10:00:00Z');

/** A final slot: its check (undefined: the test case has none; null: it did not run), tokens, cost and wall time. */
export function finishedSlot(harness: string, model: string, testCase: string, outcome: Outcome, check: { passed: boolean; reward?: number } | null | undefined, figures: { input?: number; cost?: number | null; seconds?: number } = {}): SlotState {
  const result: SlotResult = {
    outcome,
    ...(check === undefined ? {} : { check: check && { passed: check.passed, reward: check.reward ?? null } }),
    tokens: figures.input === undefined ? null : { input: figures.input, output: 10, cache_read: 0, cache_write: null, reasoning: null },
    actual_cost_usd: figures.cost === undefined ? 0.01 : figures.cost,
    comparable_cost_usd: 0.02,
    started_at: new Date(START).toISOString(),
    finished_at: new Date(START + (figures.seconds ?? 1) * 1000).toISOString(),
  };
  return { cell: { harness, model }, testCase, final: true, result };
}

export const pendingSlot = (harness: string, model: string, testCase: string): SlotState => ({ cell: { harness, model }, testCase, final: false });
