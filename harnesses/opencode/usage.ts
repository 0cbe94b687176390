// OpenCode usage -> normalized classes: the sum of every `step_finish.part.tokens` (one per model step; classes
// are disjoint there: total = input + output + reasoning + cache.read + cache.write). `input` is already
// non-cached; `output` EXCLUDES reasoning, so normalized output = output + reasoning. `cost` is OpenCode's
// models.dev list-price estimate (0 for custom models), not a charge: kept in raw usage only.
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { shapeTokens } from '../../shared/usage.ts';
import { num, obj } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';

export const OPENCODE_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write', 'reasoning'],
  doc:
    'sum of step_finish.part.tokens: input -> input, output + reasoning -> output, reasoning -> reasoning, ' +
    'cache.read -> cache_read, cache.write -> cache_write. step cost (models.dev estimate) kept in raw usage.',
};

export interface StepTotals {
  input: number;
  output: number;
  reasoning: number;
  cache_read: number;
  cache_write: number;
  cost: number;
  steps: number;
}

export const emptyTotals = (): StepTotals => ({ input: 0, output: 0, reasoning: 0, cache_read: 0, cache_write: 0, cost: 0, steps: 0 });

export function addStep(totals: StepTotals, part: JsonObject): boolean {
  const tokens = obj(part.tokens);
  if (!tokens) return false;
  const cache = obj(tokens.cache);
  totals.input += num(tokens.input) ?? 0;
  totals.output += num(tokens.output) ?? 0;
  totals.reasoning += num(tokens.reasoning) ?? 0;
  totals.cache_read += num(cache?.read) ?? 0;
  totals.cache_write += num(cache?.write) ?? 0;
  totals.cost += num(part.cost) ?? 0;
  totals.steps += 1;
  return true;
}

export function opencodeTokens(t: StepTotals): TokenUsage {
  return shapeTokens(OPENCODE_USAGE_SHAPE, { input: t.input, output: t.output + t.reasoning, reasoning: t.reasoning, cache_read: t.cache_read, cache_write: t.cache_write });
}
