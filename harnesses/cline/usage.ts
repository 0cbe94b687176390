// Cline usage -> normalized classes, from `run_result.usage`: inputTokens is the prompt count INCLUDING
// cacheReadTokens (subtract), cacheWriteTokens, outputTokens; no reasoning count. totalCost is Cline's catalogue
// estimate (0 for unknown models): raw usage only. The subagents' usage is NOT in run_result (seen in 3.0.65).
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { shapeTokens } from '../../shared/usage.ts';
import { num } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';

export const CLINE_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'cache_write'],
  doc: 'run_result.usage: inputTokens - cacheReadTokens -> input, cacheReadTokens -> cache_read, cacheWriteTokens -> cache_write, outputTokens -> output. totalCost (estimate) kept raw; subagents not included by Cline.',
};

export function clineTokens(usage: JsonObject): TokenUsage {
  const input = num(usage.inputTokens) ?? 0;
  const cacheRead = num(usage.cacheReadTokens) ?? 0;
  return shapeTokens(CLINE_USAGE_SHAPE, { input: input - cacheRead, cache_read: cacheRead, cache_write: num(usage.cacheWriteTokens), output: num(usage.outputTokens) });
}
