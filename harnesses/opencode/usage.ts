// OpenCode usage -> normalized classes: the sum of every `step_finish.part.tokens` (one per model step; classes
// are disjoint there: total = input + output + reasoning + cache.read + cache.write). `input` is already
// non-cached; `output` EXCLUDES reasoning, so normalized output = output + reasoning. `cost` is OpenCode's
// models.dev list-price estimate (0 for custom models), not a charge: kept in raw usage only.
// A count that is not a non-negative integer makes its classes null for the session (never 0), named in a warning.
import { z } from 'zod';
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { TokenCount, addClassValues, readUsage, shapeReadTokens } from '../../shared/translate/token-counts.ts';
import type { ClassValues } from '../../shared/translate/token-counts.ts';

export const OPENCODE_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write', 'reasoning'],
  doc:
    'sum of step_finish.part.tokens: input -> input, output + reasoning -> output, reasoning -> reasoning, ' +
    'cache.read -> cache_read, cache.write -> cache_write. step cost (models.dev estimate) kept in raw usage.',
};

export const StepCache = z.object({ read: TokenCount, write: TokenCount });
export const StepTokens = z.object({ input: TokenCount, output: TokenCount, reasoning: TokenCount, cache: StepCache });
/** The step's list-price estimate in USD. */
export const StepCost = z.number().nonnegative().optional();

export interface StepTotals {
  classes: ClassValues;
  /** Sum of the steps' estimates; null once one step's cost was unreadable. */
  cost: number | null;
  steps: number;
}

export const emptyTotals = (): StepTotals => ({ classes: {}, cost: 0, steps: 0 });

/** Adds one step's `tokens` and `cost`; returns the dotted names of the fields that failed their schema. */
export function addStep(totals: StepTotals, tokens: unknown, cost: unknown): string[] {
  const main = readUsage(StepTokens, tokens);
  let cache: { read?: number; write?: number } = main.fields.cache ?? {};
  let unreadable = main.unreadable;
  const rawCache = (tokens as { cache?: unknown } | null | undefined)?.cache;
  if (unreadable.includes('cache') && typeof rawCache === 'object' && rawCache !== null) {
    // A cache object with one bad count costs that count's class only.
    const leaves = readUsage(StepCache, rawCache);
    cache = leaves.fields;
    unreadable = [...unreadable.filter((k) => k !== 'cache'), ...leaves.unreadable.map((k) => `cache.${k}`)];
  }
  const field = (key: string, value: number | undefined) => (unreadable.includes(key) || (key.startsWith('cache.') && unreadable.includes('cache')) ? null : value);
  const output = field('output', main.fields.output);
  const reasoning = field('reasoning', main.fields.reasoning);
  totals.classes = addClassValues(totals.classes, {
    input: field('input', main.fields.input),
    output: output === null || reasoning === null ? null : (output ?? 0) + (reasoning ?? 0),
    reasoning,
    cache_read: field('cache.read', cache.read),
    cache_write: field('cache.write', cache.write),
  });
  const stepCost = StepCost.safeParse(cost);
  if (!stepCost.success) unreadable.push('cost');
  totals.cost = totals.cost === null || !stepCost.success ? null : totals.cost + (stepCost.data ?? 0);
  totals.steps += 1;
  return unreadable;
}

export function opencodeTokens(t: StepTotals): TokenUsage {
  return shapeReadTokens(OPENCODE_USAGE_SHAPE, t.classes);
}
