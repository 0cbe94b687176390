// Gemini CLI usage -> normalized classes, from `result.stats`. input_tokens is the prompt count and INCLUDES
// `cached` (stats.input = input_tokens - cached). output_tokens counts candidates only: thoughts are billed as
// output but reported only inside total_tokens, so reasoning = total_tokens - input_tokens - output_tokens
// (derived from reported numbers, as documented in the reference), and output = candidates + reasoning.
// No cost is reported.
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { shapeTokens } from '../../shared/usage.ts';
import { num } from '../../shared/translate/json.ts';
import type { JsonObject } from '../../shared/translate/json.ts';

export const GEMINI_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'reasoning'],
  doc:
    'result.stats: input_tokens - cached -> input, cached -> cache_read, total_tokens - input_tokens - output_tokens -> ' +
    'reasoning (thoughts, derived), output_tokens + reasoning -> output. No cache write, no cost.',
};

export function geminiTokens(stats: JsonObject): TokenUsage {
  const prompt = num(stats.input_tokens) ?? 0;
  const cached = num(stats.cached) ?? 0;
  const candidates = num(stats.output_tokens) ?? 0;
  const total = num(stats.total_tokens);
  const thoughts = total === undefined ? 0 : Math.max(0, total - prompt - candidates);
  return shapeTokens(GEMINI_USAGE_SHAPE, { input: prompt - cached, cache_read: cached, output: candidates + thoughts, reasoning: thoughts });
}
