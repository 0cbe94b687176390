// Gemini CLI usage -> normalized classes, from `result.stats`. input_tokens is the prompt count and INCLUDES
// `cached` (stats.input = input_tokens - cached). output_tokens counts candidates only: thoughts are billed as
// output but reported only inside total_tokens, so reasoning = total_tokens - input_tokens - output_tokens
// (derived from reported numbers, as documented in the reference), and output = candidates + reasoning.
// No cost is reported. Each count is read through its schema: an unreadable one makes what is computed from it
// null, never 0.
import { z } from 'zod';
import type { TokenUsage, UsageShape } from '../../shared/usage.ts';
import { minus, readUsage, shapeReadTokens, TokenCount } from '../../shared/translate/token-counts.ts';

export const GEMINI_USAGE_SHAPE: UsageShape = {
  classes: ['input', 'output', 'cache_read', 'reasoning'],
  doc:
    'result.stats: input_tokens - cached -> input, cached -> cache_read, total_tokens - input_tokens - output_tokens -> ' +
    'reasoning (thoughts, derived), output_tokens + reasoning -> output. No cache write, no cost. An unreadable count ' +
    'leaves what it feeds null, with a warning.',
};

const Stats = z.object({
  input_tokens: TokenCount.optional(),
  cached: TokenCount.optional(),
  output_tokens: TokenCount.optional(),
  total_tokens: TokenCount.optional(),
});

/** Tokens from `result.stats`, and the fields that failed their schema (all of them when it is not an object). */
export function geminiTokens(stats: unknown): { tokens: TokenUsage; unreadable: string[] } {
  if (typeof stats !== 'object' || stats === null || Array.isArray(stats)) {
    return { tokens: shapeReadTokens(GEMINI_USAGE_SHAPE, { input: null, cache_read: null, output: null, reasoning: null }), unreadable: ['stats'] };
  }
  const { fields, unreadable } = readUsage(Stats, stats);
  const known = (key: keyof typeof fields) => (unreadable.includes(key) ? null : fields[key]);
  const prompt = known('input_tokens');
  const cached = known('cached');
  const candidates = known('output_tokens');
  const total = known('total_tokens');
  const thoughts = total === undefined ? 0 : minus(total, prompt, candidates);
  const output = candidates === null || thoughts === null ? null : (candidates ?? 0) + (thoughts ?? 0);
  return {
    tokens: shapeReadTokens(GEMINI_USAGE_SHAPE, { input: minus(prompt, cached), cache_read: cached, output, reasoning: thoughts }),
    unreadable: unreadable.map((f) => `stats.${f}`),
  };
}
